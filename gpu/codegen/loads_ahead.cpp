#include "gpu/codegen/loads_ahead.h"

#include <cstddef>
#include <set>
#include <vector>

namespace tapelab {

namespace {

using ir::E;
using ir::Expr;
using ir::Stmt;

void namesIn(const E& e, std::set<std::string>& out) {
  if (!e) return;
  if (e->kind == Expr::Kind::Var) out.insert(e->name);
  for (const E& a : e->args) namesIn(a, out);
  namesIn(e->fence, out);
}

// What statements declare or assign (scalars and arrays alike), and whether it has a barrier.
struct Written {
  std::set<std::string> names;
  bool barrier = false;
};

void written(const std::vector<Stmt>& body, Written& w) {
  for (const Stmt& s : body) {
    if (s.kind == Stmt::Kind::Declare || s.kind == Stmt::Kind::Loop) w.names.insert(s.text);
    if (s.kind == Stmt::Kind::Barrier) w.barrier = true;
    if (s.target) {  // Assign, AddAssign, Kahan: the variable or the array written
      E t = s.target;
      while (t->kind == Expr::Kind::Index || t->kind == Expr::Kind::Paren || t->kind == Expr::Kind::Member) t = t->args[0];
      if (t->kind == Expr::Kind::Var) w.names.insert(t->name);
    }
    if (s.comp && s.comp->kind == Expr::Kind::Var) w.names.insert(s.comp->name);
    written(s.body, w);
  }
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

// The loop `for (int m = 0; m < N; ++m)`: N, or 0 for any other shape.
int64_t tripsOf(const Stmt& loop) {
  if (!loop.rolled || !loop.init || loop.init->kind != Expr::Kind::Int || loop.init->integer != 0) return 0;
  const E& c = loop.cond;
  if (!c || c->kind != Expr::Kind::Binary || c->name != "<" || c->args[0]->kind != Expr::Kind::Var ||
      c->args[0]->name != loop.text || c->args[1]->kind != Expr::Kind::Int)
    return 0;
  const E& s = loop.step;
  if (!s || s->kind != Expr::Kind::Prefix || s->name != "++" || s->args[0]->kind != Expr::Kind::Var || s->args[0]->name != loop.text)
    return 0;
  return c->args[1]->integer;
}

struct Rewriter {
  int next = 0;
  LoadsAhead count;

  // In e, each read A[i] the loop may load ahead becomes a rotating variable: its declaration before the
  // loop (`before`) and its next load (`after`, placed after the statement that read it).
  E rotate(const E& e, const Stmt& loop, int64_t trips, const Written& w, std::vector<Stmt>& before, std::vector<Stmt>& after) {
    if (!e) return e;
    if (e->kind == Expr::Kind::Index && e->args[0]->kind == Expr::Kind::Var && !w.names.count(e->args[0]->name)) {
      std::set<std::string> in;
      namesIn(e->args[1], in);
      bool invariant = in.count(loop.text) > 0;
      for (const std::string& n : in) invariant = invariant && (n == loop.text || !w.names.count(n));
      if (invariant) {
        const std::string name = "tl_ahead" + std::to_string(next++);
        const E m = ir::var(loop.text), m1 = ir::bin(m, "+", ir::ilit(1));
        const E following = ir::paren(ir::select(ir::bin(m1, "<", ir::ilit(trips)), m1, ir::ilit(trips - 1)));
        before.push_back(ir::declareT(name, substitute(e, loop.text, ir::ilit(0))));
        after.push_back(ir::assign(ir::var(name), substitute(e, loop.text, following)));
        ++count.reads;
        return ir::var(name);
      }
    }
    bool changed = false;
    std::vector<E> args;
    for (const E& a : e->args) {
      args.push_back(rotate(a, loop, trips, w, before, after));
      changed = changed || args.back() != a;
    }
    if (!changed) return e;
    Expr copy = *e;
    copy.args = std::move(args);
    return std::make_shared<const Expr>(std::move(copy));
  }

  void visit(std::vector<Stmt>& list) {
    std::vector<Stmt> out;
    out.reserve(list.size());
    for (Stmt& s : list) {
      visit(s.body);
      const int64_t trips = s.kind == Stmt::Kind::Loop ? tripsOf(s) : 0;
      if (trips > 1) {
        Written w;
        written(s.body, w);
        if (!w.barrier) {
          std::vector<Stmt> before, body;
          for (Stmt& b : s.body) {
            std::vector<Stmt> after;
            if (b.kind == Stmt::Kind::Declare && b.init) b.init = rotate(b.init, s, trips, w, before, after);
            body.push_back(std::move(b));
            for (Stmt& a : after) body.push_back(std::move(a));
          }
          s.body = std::move(body);
          if (!before.empty()) ++count.loops;
          for (Stmt& b : before) {  // as early in the list as what its load reads allows: its wait overlaps more
            std::set<std::string> reads;
            namesIn(b.init, reads);
            size_t at = out.size();
            for (; at > 0; --at) {
              Written w;
              written({out[at - 1]}, w);
              bool touches = w.barrier;
              for (const std::string& n : reads) touches = touches || w.names.count(n) > 0;
              if (touches) break;
            }
            out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), std::move(b));
          }
        }
      }
      out.push_back(std::move(s));
    }
    list = std::move(out);
  }
};

}  // namespace

LoadsAhead loadAhead(ir::KernelIR& kernel) {
  Rewriter r;
  r.visit(kernel.body);
  return r.count;
}

std::string toText(const LoadsAhead& ahead) {
  return std::to_string(ahead.reads) + " reads loaded one market ahead in " + std::to_string(ahead.loops) + " loops\n";
}

}  // namespace tapelab
