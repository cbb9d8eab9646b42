#include "gpu/codegen/loads_ahead.h"

#include <algorithm>
#include <cstddef>
#include <map>
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

// How many statements of body (at any depth) declare each name.
void declarations(const std::vector<Stmt>& body, std::map<std::string, int>& count) {
  for (const Stmt& s : body) {
    if (s.kind == Stmt::Kind::Declare) ++count[s.text];
    declarations(s.body, count);
  }
}

E substitute(const E& e, const std::string& name, const E& by) {
  return ir::rewrite(e, [&](const E& n) { return n->kind == Expr::Kind::Var && n->name == name ? by : n; });
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
  std::map<std::string, int> declared;  // the names the body declares, and how many times
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
  declarations(loop.body, out.declared);
  for (const Stmt& b : loop.body) {
    if (b.kind != Stmt::Kind::Declare || !b.isConst || !b.init || (b.type != ir::Type::Uint && b.type != ir::Type::Int)) break;
    const std::set<std::string> in = namesIn(b.init);
    bool ok = true;
    for (const std::string& n : in) ok = ok && (n == out.var || !out.w.names.count(n));
    if (!ok || out.declared[b.text] != 1) break;  // substituted by name: one declaration only
    out.consts.emplace_back(b.text, b.init);
  }
  return out.trips > 1 && !out.w.barrier;
}

// i's part beside the loop's variable v where i is v, (cast)(v) or a sum with one such term: the rest (null for
// none), else false.
bool offsetOf(const E& i, const std::string& v, E& rest) {
  if (!i) return false;
  if (i->kind == Expr::Kind::Var) {
    rest = nullptr;
    return i->name == v;
  }
  if (i->kind == Expr::Kind::Paren || i->kind == Expr::Kind::CastUint) return offsetOf(i->args[0], v, rest);
  if (i->kind != Expr::Kind::Binary || i->name != "+") return false;
  for (int side : {0, 1}) {
    const E& other = i->args[1 - side];
    bool mentionsV = false;
    ir::forEachVar(other, [&](const std::string& n) { mentionsV = mentionsV || n == v; });
    E inner;
    if (!mentionsV && offsetOf(i->args[side], v, inner)) {
      rest = inner ? ir::bin(inner, "+", other) : other;
      return true;
    }
  }
  return false;
}

// Whether e's value is a multiple of n whatever its names hold: a literal multiple, a product with one, a sum
// of them.
bool multipleOf(const E& e, int64_t n) {
  if (!e) return true;
  switch (e->kind) {
    case Expr::Kind::Uint:
    case Expr::Kind::Int: return e->integer % n == 0;
    case Expr::Kind::Paren:
    case Expr::Kind::CastUint: return multipleOf(e->args[0], n);
    case Expr::Kind::Binary:
      if (e->name == "+") return multipleOf(e->args[0], n) && multipleOf(e->args[1], n);
      if (e->name == "*") return multipleOf(e->args[0], n) || multipleOf(e->args[1], n);
      return false;
    default: return false;
  }
}

// Every element of `array` the loop's body names (read or written, at any depth): A[k + v] with k a multiple of
// the trips and of names the loop does not write. Then trip v reads and writes only elements congruent to v, and
// the next trip's element of any such index is one no earlier trip and no statement of this one writes.
bool ownElements(const E& e, const std::string& array, const Shape& L) {
  if (!e) return true;
  if (e->kind == Expr::Kind::Index && e->args[0]->kind == Expr::Kind::Var && e->args[0]->name == array) {
    E k;
    if (!offsetOf(e->args[1], L.var, k) || !multipleOf(k, L.trips)) return false;
    bool invariant = true;
    ir::forEachVar(k, [&](const std::string& n) { invariant = invariant && n != L.var && !L.w.names.count(n); });
    return invariant && ownElements(e->args[1], array, L);  // the index itself may name other elements
  } else if (e->kind == Expr::Kind::Var && e->name == array) {
    return false;  // the array itself, not an element of it
  }
  for (const E& a : e->args)
    if (!ownElements(a, array, L)) return false;
  return ownElements(e->fence, array, L);
}
bool ownElements(const std::vector<Stmt>& body, const std::string& array, const Shape& L) {
  return std::none_of(body.begin(), body.end(), [&](const Stmt& s) {
    return ir::anyExpr(s, [&](const E& e) { return !ownElements(e, array, L); });
  });
}

struct Rewriter {
  bool everyLoop = false;
  bool ownElements_ = false;  // config loads_ahead=rows
  int next = 0;
  LoadsAhead count;

  // Arrays the loop writes only at its own elements (ownElements), and of those the ones this trip has written
  // so far (in the order rotateIn meets the statements): an element of such an array not yet written this trip
  // is what an earlier trip left, so it too can be loaded a trip ahead, once (its first read this trip).
  std::set<std::string> own, writtenThisTrip;
  std::vector<E> rotatedElements;

  bool aheadable(const E& e, const Shape& L) const {
    const std::string& a = e->args[0]->name;
    if (!L.w.names.count(a)) return true;
    if (!own.count(a) || writtenThisTrip.count(a)) return false;
    return std::none_of(rotatedElements.begin(), rotatedElements.end(), [&](const E& r) { return ir::same(r, e); });
  }

  // In e, each read A[i] the loop may load ahead becomes a rotating variable: its declaration before the
  // loop (`before`) and its next load (`after`, placed after the statement that read it).
  E rotate(const E& e, const Shape& L, std::vector<Stmt>& before, std::vector<Stmt>& after) {
    if (!e) return e;
    // What C evaluates only on a condition (a ?: arm, && and ||) is left in place: loaded on every trip, its
    // index might be out of bounds where the condition kept it from being read.
    if (e->kind == Expr::Kind::Select || (e->kind == Expr::Kind::Binary && (e->name == "&&" || e->name == "||"))) return e;
    if (e->kind == Expr::Kind::Index && e->args[0]->kind == Expr::Kind::Var && aheadable(e, L)) {
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
        if (L.w.names.count(e->args[0]->name)) {
          rotatedElements.push_back(e);
          ++count.ownReads;
        }
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
      // An own element's first addition this trip, `A[k + v] += t`: t's reads first, then A[k + v] = ahead + (t).
      if (b.kind == Stmt::Kind::AddAssign && b.target && b.target->kind == Expr::Kind::Index &&
          b.target->args[0]->kind == Expr::Kind::Var && own.count(b.target->args[0]->name)) {
        b.value = rotate(b.value, L, before, after);
        if (aheadable(b.target, L)) {
          const E read = rotate(b.target, L, before, after);
          if (read->kind == Expr::Kind::Var) {
            b.kind = Stmt::Kind::Assign;
            b.value = ir::bin(read, "+", ir::paren(b.value));
          }
        }
      }
      if (b.kind == Stmt::Kind::Block || b.kind == Stmt::Kind::Seq) rotateIn(b.body, L, before);
      Written w;
      written(b, w);
      for (const std::string& a : own)
        if (w.names.count(a)) writtenThisTrip.insert(a);
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
        own.clear();
        writtenThisTrip.clear();
        rotatedElements.clear();
        for (const std::string& a : L.w.names)
          if (ownElements_ && !L.declared.count(a) && ownElements(s.body, a, L)) own.insert(a);
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

// A slot's literal part and the rest: `(c + rest)` or `c`.
bool slotParts(const E& slot, int64_t& c, E& rest) {
  if (slot->kind == Expr::Kind::Paren) return slotParts(slot->args[0], c, rest);
  if (slot->kind == Expr::Kind::Uint) {
    c = slot->integer;
    rest = nullptr;
    return true;
  }
  if (slot->kind != Expr::Kind::Binary || slot->name != "+" || slot->args[0]->kind != Expr::Kind::Uint) return false;
  c = slot->args[0]->integer;
  rest = slot->args[1];
  return true;
}

// The elements of K (2 to 32) consecutive slots of the SoA scratch layout (names.h: `slot * stride + tl_tid`,
// slots c0 .. c0 + K - 1 plus the same rest, the same stride) as one element a lane: lane l of a warp (tl_tid's
// low five bits: config workgroup is a power of two from 32) names slot c0 + l % K at the warp's first path, so one
// prefetch instruction covers the K cache lines the warp's K prefetches each would (a slot's 32 paths are 128
// contiguous bytes). Null where they are not.
E overLanes(const std::vector<E>& elements) {
  if (elements.size() < 2 || elements.size() > 32) return nullptr;
  std::vector<int64_t> slots;
  E rest0, stride0, buffer;
  for (const E& e : elements) {
    const E& i = e->args[1];
    if (i->kind != Expr::Kind::Binary || i->name != "+" || i->args[1]->kind != Expr::Kind::Var || i->args[1]->name != "tl_tid")
      return nullptr;
    const E& product = i->args[0];
    if (product->kind != Expr::Kind::Binary || product->name != "*") return nullptr;
    int64_t c = 0;
    E rest;
    if (!slotParts(product->args[0], c, rest)) return nullptr;
    if (slots.empty()) {
      rest0 = rest;
      stride0 = product->args[1];
      buffer = e->args[0];
    } else if (!ir::same(rest, rest0) || !ir::same(product->args[1], stride0)) {
      return nullptr;
    }
    slots.push_back(c);
  }
  std::sort(slots.begin(), slots.end());
  for (size_t k = 1; k < slots.size(); ++k)
    if (slots[k] != slots[0] + static_cast<int64_t>(k)) return nullptr;
  const E tid = ir::var("tl_tid");
  const E lane = ir::paren(ir::bin(ir::paren(ir::bin(tid, "&", ir::ulit(31))), "%", ir::ulit(static_cast<int64_t>(slots.size()))));
  E slot = ir::bin(ir::ulit(slots[0]), "+", lane);
  if (rest0) slot = ir::bin(slot, "+", rest0);
  const E warpFirst = ir::paren(ir::bin(tid, "&", ir::ulit(0xFFFFFFE0u)));
  return ir::index(buffer, ir::bin(ir::bin(ir::paren(slot), "*", stride0), "+", warpFirst));
}

// config loads_ahead=prefetch: each rolled segments' loop that reads `buffer` without writing it prefetches, at
// the top of a trip, the elements the next trip reads (the reads a trip runs once, as rotateIn's).
struct Prefetcher {
  std::string buffer;
  Prefetches count;

  void reads(const E& e, const Shape& L, std::vector<E>& found) const {
    if (!e) return;
    if (e->kind == Expr::Kind::Select || (e->kind == Expr::Kind::Binary && (e->name == "&&" || e->name == "||"))) return;
    if (e->kind == Expr::Kind::Index && e->args[0]->kind == Expr::Kind::Var && e->args[0]->name == buffer) {
      bool varies = false, invariant = true;
      for (const std::string& n : namesIn(e->args[1])) {
        const bool isConst = std::any_of(L.consts.begin(), L.consts.end(), [&](const auto& c) { return c.first == n; });
        varies = varies || n == L.var || isConst;
        invariant = invariant && (n == L.var || isConst || !L.w.names.count(n));
      }
      if (varies && invariant && std::none_of(found.begin(), found.end(), [&](const E& f) { return ir::same(f, e); }))
        found.push_back(e);
      return;
    }
    for (const E& a : e->args) reads(a, L, found);
  }
  void readsIn(const std::vector<Stmt>& list, const Shape& L, std::vector<E>& found) const {
    for (const Stmt& b : list) {
      if (b.kind == Stmt::Kind::Declare) reads(b.init, L, found);
      if (b.kind == Stmt::Kind::Assign || b.kind == Stmt::Kind::AddAssign) reads(b.value, L, found);
      if (b.kind == Stmt::Kind::Block || b.kind == Stmt::Kind::Seq) readsIn(b.body, L, found);
    }
  }
  void visit(std::vector<Stmt>& list) {
    for (Stmt& s : list) {
      visit(s.body);
      Shape L;
      if (s.kind != Stmt::Kind::Loop || !shapeOf(s, L) || !L.isUint || L.w.names.count(buffer)) continue;
      std::vector<E> found;
      readsIn(s.body, L, found);
      if (found.empty()) continue;
      // The next trip (the last trip's own), once: each address is then this trip's plus a constant.
      const E v = ir::var(L.var), v1 = ir::bin(v, "+", L.lit(1));
      const std::string next = "tl_next" + std::to_string(count.loops);
      std::vector<Stmt> fetches = {
          ir::declare(ir::Type::Uint, next, ir::select(ir::bin(v1, "<", L.lit(L.trips)), v1, L.lit(L.trips - 1)), true)};
      std::vector<E> at;
      for (const E& e : found) at.push_back(L.at(e, ir::var(next)));
      if (const E spread = overLanes(at)) {
        fetches.push_back(ir::prefetch(spread));
        ++count.spread;
      } else {
        for (const E& e : at) fetches.push_back(ir::prefetch(e));
      }
      s.body.insert(s.body.begin() + static_cast<std::ptrdiff_t>(L.consts.size()), fetches.begin(), fetches.end());
      ++count.loops;
      count.reads += static_cast<int>(found.size());
    }
  }
};

}  // namespace

Prefetches prefetchAhead(ir::KernelIR& kernel, const std::string& buffer) {
  Prefetcher p;
  p.buffer = buffer;
  p.visit(kernel.body);
  return p.count;
}

std::string toText(const Prefetches& prefetches) {
  return std::to_string(prefetches.reads) + " elements prefetched a trip ahead in " + std::to_string(prefetches.loops) +
         " rolled segments' loops (" + std::to_string(prefetches.spread) + " by one prefetch a lane)\n";
}

LoadsAhead loadAhead(ir::KernelIR& kernel, bool everyLoop, bool ownElements) {
  Rewriter r;
  r.everyLoop = everyLoop;
  r.ownElements_ = ownElements;
  r.visit(kernel.body);
  return r.count;
}

std::string toText(const LoadsAhead& ahead) {
  return std::to_string(ahead.reads) + " reads loaded one trip ahead in " + std::to_string(ahead.loops) + " loops (" +
         std::to_string(ahead.ownReads) + " of arrays the loop writes at its own elements)\n";
}

}  // namespace tapelab
