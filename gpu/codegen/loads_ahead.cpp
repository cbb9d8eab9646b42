#include "gpu/codegen/loads_ahead.h"

#include <algorithm>
#include <cstddef>
#include <set>
#include <vector>

namespace tapelab {

namespace {

using ir::E;
using ir::Expr;
using ir::Stmt;

std::set<std::string> namesIn(const E& e) {
  std::set<std::string> out;
  ir::forEachVar(e, [&](const std::string& n) { out.insert(n); });
  return out;
}

// What statements declare or assign (scalars and arrays alike), and whether it has a barrier.
struct Written {
  std::set<std::string> names;
  bool barrier = false;
};

void written(const Stmt& s, Written& w);
void written(const std::vector<Stmt>& body, Written& w) {
  for (const Stmt& s : body) written(s, w);
}
void written(const Stmt& s, Written& w) {
  if (s.kind == Stmt::Kind::Declare || s.kind == Stmt::Kind::Loop) w.names.insert(s.text);
  if (s.kind == Stmt::Kind::Barrier) w.barrier = true;
  for (const E* written : {&s.target, &s.comp}) {  // Assign, AddAssign, Kahan: the variable or the array written
    if (!*written) continue;
    E t = *written;
    while (t->kind == Expr::Kind::Index || t->kind == Expr::Kind::Paren || t->kind == Expr::Kind::Member) t = t->args[0];
    if (t->kind == Expr::Kind::Var) w.names.insert(t->name);
  }
  written(s.body, w);
}

// How many statements of body (at any depth) declare `name`.
int declarations(const std::vector<Stmt>& body, const std::string& name) {
  int n = 0;
  for (const Stmt& s : body) n += (s.kind == Stmt::Kind::Declare && s.text == name) + declarations(s.body, name);
  return n;
}

E substitute(const E& e, const std::string& name, const E& by) {
  if (!e) return e;
  if (e->kind == Expr::Kind::Var && e->name == name) return by;
  bool changed = false;
  std::vector<E> args;
  args.reserve(e->args.size());
  for (const E& a : e->args) {
    args.push_back(substitute(a, name, by));
    changed = changed || args.back() != a;
  }
  E fence = substitute(e->fence, name, by);
  if (!changed && fence == e->fence) return e;
  Expr copy = *e;
  copy.args = std::move(args);
  copy.fence = std::move(fence);
  return std::make_shared<const Expr>(std::move(copy));
}

// A loop `for (T v = 0; v < N; ++v)` (T int: a market loop; unsigned: a rolled segments' or time loop) and what
// its body writes; its constants: declarations at the top of its body, const, of v and what the body does not
// write (a trip's `tl_sg = trips - 1 - tl_sr`), substituted where a load is moved to another trip.
struct Shape {
  std::string var;
  int64_t trips = 0;
  bool isUint = false;
  std::vector<std::pair<std::string, E>> consts;
  Written w;
  E lit(int64_t v) const { return isUint ? ir::ulit(v) : ir::ilit(v); }
  // e where the loop's variable is `by` (its constants by their values first).
  E at(const E& e, const E& by) const {
    E x = e;
    for (auto it = consts.rbegin(); it != consts.rend(); ++it) x = substitute(x, it->first, ir::paren(it->second));
    return substitute(x, var, by);
  }
};

bool shapeOf(const Stmt& loop, Shape& out) {
  if (!loop.rolled || !loop.init || (loop.init->kind != Expr::Kind::Int && loop.init->kind != Expr::Kind::Uint) ||
      loop.init->integer != 0)
    return false;
  const E& c = loop.cond;
  if (!c || c->kind != Expr::Kind::Binary || c->name != "<" || c->args[0]->kind != Expr::Kind::Var ||
      c->args[0]->name != loop.text || c->args[1]->kind != loop.init->kind)
    return false;
  const E& s = loop.step;
  if (!s || s->kind != Expr::Kind::Prefix || s->name != "++" || s->args[0]->kind != Expr::Kind::Var || s->args[0]->name != loop.text)
    return false;
  out.var = loop.text;
  out.trips = c->args[1]->integer;
  out.isUint = loop.init->kind == Expr::Kind::Uint;
  written(loop.body, out.w);
  if (out.w.names.count(out.var)) return false;  // a body that sets its own variable
  for (const Stmt& b : loop.body) {
    if (b.kind != Stmt::Kind::Declare || !b.isConst || !b.init || (b.type != ir::Type::Uint && b.type != ir::Type::Int)) break;
    const std::set<std::string> in = namesIn(b.init);
    bool ok = true;
    for (const std::string& n : in) ok = ok && (n == out.var || !out.w.names.count(n));
    if (!ok || declarations(loop.body, b.text) != 1) break;  // substituted by name: one declaration only
    out.consts.emplace_back(b.text, b.init);
  }
  return out.trips > 1 && !out.w.barrier;
}

struct Rewriter {
  bool everyLoop = false;
  int next = 0;
  LoadsAhead count;

  // In e, each read A[i] the loop may load ahead becomes a rotating variable: its declaration before the
  // loop (`before`) and its next load (`after`, placed after the statement that read it).
  E rotate(const E& e, const Shape& L, std::vector<Stmt>& before, std::vector<Stmt>& after) {
    if (!e) return e;
    // What C evaluates only on a condition (a ?: arm, && and ||) is left in place: loaded on every trip, its
    // index might be out of bounds where the condition kept it from being read.
    if (e->kind == Expr::Kind::Select || (e->kind == Expr::Kind::Binary && (e->name == "&&" || e->name == "||"))) return e;
    if (e->kind == Expr::Kind::Index && e->args[0]->kind == Expr::Kind::Var && !L.w.names.count(e->args[0]->name)) {
      const std::set<std::string> in = namesIn(e->args[1]);
      bool varies = false, invariant = true;
      for (const std::string& n : in) {
        const bool isConst = std::any_of(L.consts.begin(), L.consts.end(), [&](const auto& c) { return c.first == n; });
        varies = varies || n == L.var || isConst;
        invariant = invariant && (n == L.var || isConst || !L.w.names.count(n));
      }
      if (varies && invariant) {
        const std::string name = "tl_ahead" + std::to_string(next++);
        const E v = ir::var(L.var), v1 = ir::bin(v, "+", L.lit(1));
        const E following = ir::paren(ir::select(ir::bin(v1, "<", L.lit(L.trips)), v1, L.lit(L.trips - 1)));
        before.push_back(ir::declareT(name, L.at(e, L.lit(0))));
        after.push_back(ir::assign(ir::var(name), L.at(e, following)));
        ++count.reads;
        return ir::var(name);
      }
    }
    bool changed = false;
    std::vector<E> args;
    for (const E& a : e->args) {
      args.push_back(rotate(a, L, before, after));
      changed = changed || args.back() != a;
    }
    if (!changed) return e;
    Expr copy = *e;
    copy.args = std::move(args);
    return std::make_shared<const Expr>(std::move(copy));
  }

  // The declarations a trip runs once each: the body's, and those of the blocks in it (not of a loop or an if).
  void rotateIn(std::vector<Stmt>& list, const Shape& L, std::vector<Stmt>& before) {
    std::vector<Stmt> out;
    out.reserve(list.size());
    for (Stmt& b : list) {
      std::vector<Stmt> after;
      if (b.kind == Stmt::Kind::Declare && b.init) b.init = rotate(b.init, L, before, after);
      if (b.kind == Stmt::Kind::Block || b.kind == Stmt::Kind::Seq) rotateIn(b.body, L, before);
      out.push_back(std::move(b));
      for (Stmt& a : after) out.push_back(std::move(a));
    }
    list = std::move(out);
  }

  void visit(std::vector<Stmt>& list) {
    std::vector<Stmt> out;
    out.reserve(list.size());
    for (Stmt& s : list) {
      visit(s.body);
      Shape L;
      if (s.kind == Stmt::Kind::Loop && shapeOf(s, L) && (everyLoop || !L.isUint)) {
        std::vector<Stmt> before;
        rotateIn(s.body, L, before);
        if (!before.empty()) ++count.loops;
        for (Stmt& b : before) {  // as early in the list as what its load reads allows: its wait overlaps more
          const std::set<std::string> reads = namesIn(b.init);
          size_t at = out.size();
          for (; at > 0; --at) {
            Written w;
            written(out[at - 1], w);
            bool touches = w.barrier;
            for (const std::string& n : reads) touches = touches || w.names.count(n) > 0;
            if (touches) break;
          }
          out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), std::move(b));
        }
      }
      out.push_back(std::move(s));
    }
    list = std::move(out);
  }
};

}  // namespace

LoadsAhead loadAhead(ir::KernelIR& kernel, bool everyLoop) {
  Rewriter r;
  r.everyLoop = everyLoop;
  r.visit(kernel.body);
  return r.count;
}

std::string toText(const LoadsAhead& ahead) {
  return std::to_string(ahead.reads) + " reads loaded one trip ahead in " + std::to_string(ahead.loops) + " loops\n";
}

}  // namespace tapelab
