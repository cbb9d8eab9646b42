#include "gpu/codegen/ir.h"

#include <string_view>
#include <utility>

namespace tapelab::ir {

namespace {
E make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }
E named(Expr::Kind kind, std::string name, std::vector<E> args = {}) {
  Expr e;
  e.kind = kind;
  e.name = std::move(name);
  e.args = std::move(args);
  return make(std::move(e));
}
}  // namespace

E var(std::string name) { return named(Expr::Kind::Var, std::move(name)); }
E param(std::string name) { return named(Expr::Kind::Param, std::move(name)); }
E localId() { return named(Expr::Kind::LocalId, ""); }
E groupId() { return named(Expr::Kind::GroupId, ""); }
E lit(double value) {
  Expr e;
  e.kind = Expr::Kind::Float;
  e.number = value;
  return make(std::move(e));
}
E ulit(int64_t value) {
  Expr e;
  e.kind = Expr::Kind::Uint;
  e.integer = value;
  return make(std::move(e));
}
E ilit(int64_t value) {
  Expr e;
  e.kind = Expr::Kind::Int;
  e.integer = value;
  return make(std::move(e));
}
E bin(E left, std::string op, E right) { return named(Expr::Kind::Binary, std::move(op), {std::move(left), std::move(right)}); }
E prefix(std::string op, E x) { return named(Expr::Kind::Prefix, std::move(op), {std::move(x)}); }
E paren(E x) { return named(Expr::Kind::Paren, "", {std::move(x)}); }
E select(E cond, E x, E y) { return named(Expr::Kind::Select, "", {std::move(cond), std::move(x), std::move(y)}); }
E index(E array, E i) { return named(Expr::Kind::Index, "", {std::move(array), std::move(i)}); }
E member(E x, std::string field) { return named(Expr::Kind::Member, std::move(field), {std::move(x)}); }
E call(std::string helper, std::vector<E> args) { return named(Expr::Kind::Call, std::move(helper), std::move(args)); }
E fn(std::string function, std::vector<E> args) { return named(Expr::Kind::Function, std::move(function), std::move(args)); }
E castUint(E x) { return named(Expr::Kind::CastUint, "", {std::move(x)}); }
E castScalar(E x) { return named(Expr::Kind::CastScalar, "", {std::move(x)}); }
E bits(E x) { return named(Expr::Kind::Bits, "", {std::move(x)}); }
E fromBits(E x) { return named(Expr::Kind::FromBits, "", {std::move(x)}); }
bool same(const E& a, const E& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->name != b->name || a->number != b->number || a->integer != b->integer ||
      a->op != b->op || a->args.size() != b->args.size() || !same(a->fence, b->fence))
    return false;
  for (size_t k = 0; k < a->args.size(); ++k)
    if (!same(a->args[k], b->args[k])) return false;
  return true;
}

E rule(Op op, std::string text, E a, E b, E c, E r, E d, E fence) {
  Expr e;
  e.kind = Expr::Kind::Rule;
  e.op = op;
  e.name = std::move(text);
  e.args = {std::move(a), std::move(b), std::move(c), std::move(r), std::move(d)};
  // Null what the rule does not read (ir.h), so that a pass reading the tree sees only what is printed.
  static constexpr std::string_view kIds[5] = {"a", "b", "c", "r", "d"};
  for (int k = 0; k < 5; ++k)
    if (!mentions(e.name, kIds[k])) e.args[k] = nullptr;
  e.fence = std::move(fence);
  return make(std::move(e));
}

Stmt comment(std::string text) {
  Stmt s;
  s.kind = Stmt::Kind::Comment;
  s.text = std::move(text);
  return s;
}
Stmt declare(Type type, std::string name, E init, bool isConst) {
  Stmt s;
  s.kind = Stmt::Kind::Declare;
  s.type = type;
  s.text = std::move(name);
  s.init = std::move(init);
  s.isConst = isConst;
  return s;
}
Stmt declareT(std::string name, E init) {
  Stmt s = declare(Type::Scalar, std::move(name), std::move(init));
  s.precise = true;
  return s;
}
Stmt declareArray(std::string name, int elements, bool shared) {
  Stmt s = declareT(std::move(name));
  s.array = elements;
  s.shared = shared;
  return s;
}
Stmt withNote(Stmt s, std::string note) {
  s.note = std::move(note);
  return s;
}
Stmt assign(E target, E value) {
  Stmt s;
  s.kind = Stmt::Kind::Assign;
  s.target = std::move(target);
  s.value = std::move(value);
  return s;
}
Stmt addAssign(E target, E value) {
  Stmt s = assign(std::move(target), std::move(value));
  s.kind = Stmt::Kind::AddAssign;
  return s;
}
Stmt block(std::string label, std::vector<Stmt> body) {
  Stmt s;
  s.kind = Stmt::Kind::Block;
  s.text = std::move(label);
  s.body = std::move(body);
  return s;
}
Stmt seq(std::vector<Stmt> body) {
  Stmt s;
  s.kind = Stmt::Kind::Seq;
  s.body = std::move(body);
  return s;
}
Stmt drawScope(std::string prefix, std::string key, std::vector<Stmt> body) {
  Stmt s = seq(std::move(body));
  s.drawPrefix = std::move(prefix);
  s.drawKey = std::move(key);
  return s;
}
Stmt readsDraw(Stmt s, int64_t draw) {
  s.draw = draw;
  return s;
}
Stmt loop(Type type, std::string var, E init, E cond, E step, bool rolled, std::string label, std::vector<Stmt> body) {
  Stmt s;
  s.kind = Stmt::Kind::Loop;
  s.type = type;
  s.text = std::move(var);
  s.note = std::move(label);
  s.init = std::move(init);
  s.cond = std::move(cond);
  s.step = std::move(step);
  s.rolled = rolled;
  s.body = std::move(body);
  return s;
}
Stmt ifThen(E cond, std::vector<Stmt> body) {
  Stmt s;
  s.kind = Stmt::Kind::If;
  s.cond = std::move(cond);
  s.body = std::move(body);
  return s;
}
Stmt kahan(E sum, E comp, E term, bool viaCells) {
  Stmt s;
  s.kind = Stmt::Kind::Kahan;
  s.target = std::move(sum);
  s.comp = std::move(comp);
  s.value = std::move(term);
  s.viaCells = viaCells;
  return s;
}
Stmt barrier() {
  Stmt s;
  s.kind = Stmt::Kind::Barrier;
  return s;
}
Stmt prefetch(E element) {
  Stmt s;
  s.kind = Stmt::Kind::Prefetch;
  s.value = std::move(element);
  return s;
}
Stmt line(std::vector<Stmt> parts) {
  Stmt s;
  s.kind = Stmt::Kind::Line;
  s.body = std::move(parts);
  return s;
}

}  // namespace tapelab::ir
