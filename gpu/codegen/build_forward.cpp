// The build pass's forward sweeps: the plain kernel's (and its reverse sweep over every kept value), the
// tangent kernel's, and a checkpointed kernel's (its persistent values, the prefill loop, one block per
// segment).
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "gpu/codegen/build.h"
#include "gpu/codegen/draws.h"
#include "planner/plan.h"
#include "tape/philox.h"

namespace tapelab::build {

using namespace ir;

namespace {
constexpr const char* kWordFields[4] = {"x", "y", "z", "w"};
}  // namespace

void Builder::plainPath(Stmts& out) {
  out.push_back(comment("forward sweep"));
  if (a_.rolling && a_.rolling->rolled) {
    rolledForward(false, out);
  } else {
    Stmts forward;
    forwardNodes(0, tape_.size(), false, forward);
    out.push_back(drawScope("v", "tl_fk", std::move(forward)));
  }
  if (!options_.greeks) return;
  out.push_back(comment("reverse sweep"));
  for (int32_t i = 0; i < tape_.size(); ++i) {
    if (!hasAdjoint(i)) continue;
    for (int m = 0; m < markets_; ++m) out.push_back(declareAdjoint(adjoint(i, Markets::one(m)), adjointSeed(i)));
  }
  for (int32_t i = tape_.size() - 1; i >= 0; --i) reverseRule(i, "v", Markets::all(), out);
}

// The tangent kind: the plain kernel's forward sweep, line for line, each value followed by its tangents
// (tape/tangent.h); no reverse sweep.
void Builder::tangentPath(Stmts& out) {
  declareInverses(out);
  out.push_back(comment("forward sweep, each value followed by its tangents (tape/tangent.h)"));
  if (a_.rolling && a_.rolling->rolled) return rolledForward(true, out);
  Stmts forward;
  forwardNodes(0, tape_.size(), true, forward);
  out.push_back(drawScope("v", "tl_fk", std::move(forward)));
}

void Builder::forwardNodes(int32_t from, int32_t to, bool tangents, Stmts& out) const {
  for (int32_t i = from; i < to; ++i) {
    for (Markets m : copiesIn(i, Markets::all())) out.push_back(define(true, "v", i, m, forwardExpr(i, m, "v")));
    if (!tangents) continue;
    for (Markets m : copiesIn(i, Markets::all()))  // a value the markets share has shared tangents too
      for (int32_t slot : carriedSlots(i))
        out.push_back(declareT(tangentName(i, slot, m.market), tangentExpr(i, slot, m.market)));
  }
}

// Offset o's carried value (vc<o>), or its tangent in `slot` (tc<o>_<slot>), in `market`'s copy.
std::string Builder::carriedName(int32_t offset, int market, int32_t slot) const {
  const RolledLoop& r = *a_.rolling;
  const int32_t steady = r.loop.node(r.iterations - 1, offset);
  const std::string suffix = perMarket(steady) ? "_" + std::to_string(market) : "";
  return slot < 0 ? "vc" + std::to_string(offset) + suffix : "tc" + std::to_string(offset) + "_" + std::to_string(slot) + suffix;
}

// The nodes before the loop; the carried variables, set to their initial values; the loop, its body
// spelled from the template's iterations, reading the previous trip through the carried variables and
// setting them last; then the iterations not run in the loop and the nodes after it, reading the loop's
// last iteration through the carried variables.
void Builder::rolledForward(bool tangents, Stmts& out) {
  const RolledLoop& r = *a_.rolling;
  const TapeLoop& L = r.loop;
  Stmts before;
  forwardNodes(0, L.begin, tangents, before);
  out.push_back(drawScope("v", "tl_fk", std::move(before)));
  out.push_back(comment("the time loop's carried values (planner/loops.h), set to what its first iteration reads"));
  auto each = [&](int32_t iteration, auto&& f) {  // f(offset, node) per carried offset
    for (int32_t o : r.exported) f(o, L.node(iteration, o));
  };
  each(r.iterations - 1, [&](int32_t o, int32_t steady) {
    rename(steady, "vc" + std::to_string(o));
    const int32_t init = L.initOf[o];
    for (Markets m : copiesIn(steady, Markets::all()))
      out.push_back(declareT(valueName("v", steady, m), init >= 0 ? value("v", init, m) : nullptr));
    for (Markets m : copiesIn(steady, Markets::all()))
      for (int32_t slot : tangents ? carriedSlots(steady) : std::vector<int32_t>{}) {
        const bool has = init >= 0 && std::binary_search(s_.tangents.of[init].begin(), s_.tangents.of[init].end(), slot);
        out.push_back(declareT(tangentName(steady, slot, m.market), has ? tangentRef(init, slot, m.market) : literal(0.0)));
      }
  });
  clearRenames();
  if (r.stepwise) {  // the Philox call and Box-Muller pair one-step trips carry (draws.h)
    out.push_back(declare(Type::Uint4, drawCarriedWords("v")));
    out.push_back(declare(Type::Scalar2, drawCarriedPair("v")));
  }
  // The body: iterations [templateStart, templateStart + unroll), the one before read as the carried values.
  each(r.templateStart - 1, [&](int32_t o, int32_t node) { rename(node, "vc" + std::to_string(o)); });
  drawShift_ = static_cast<int64_t>(r.templateStart) * L.drawStride;
  stepDraws_ = r.stepwise;
  Stmts body;
  forwardNodes(L.node(r.templateStart, 0), L.node(r.templateStart + r.unroll, 0), tangents, body);
  stepDraws_ = false;
  const int32_t lastOfTrip = r.templateStart + r.unroll - 1;
  each(lastOfTrip, [&](int32_t o, int32_t node) {
    for (Markets m : copiesIn(node, Markets::all())) {
      body.push_back(assign(var(carriedName(o, m.market)), value("v", node, m)));
      for (int32_t slot : tangents ? carriedSlots(node) : std::vector<int32_t>{})
        body.push_back(assign(var(carriedName(o, m.market, slot)), var(tangentName(node, slot, m.market))));
    }
  });
  drawShift_ = 0;
  clearRenames();
  Stmt scope = drawScope("v", "tl_fk", std::move(body));
  if (r.stepwise)
    scope.drawStep = bin(var("tl_it"), "*", ulit(L.drawStride));
  else if (L.drawStride != 0)
    scope.drawBase = bin(var("tl_it"), "*", ulit(r.unroll * L.drawStride / int64_t(kDrawsPerCall)));
  out.push_back(loop(Type::Uint, "tl_it", ulit(0), bin(var("tl_it"), "<", ulit(r.trips())), prefix("++", var("tl_it")), true,
                     "the time loop: " + std::to_string(r.trips()) + " trips of " + std::to_string(r.unroll) + " step(s)",
                     {std::move(scope)}));
  // After the loop: its last iteration is the carried values.
  each(r.iterations - 1, [&](int32_t o, int32_t node) { rename(node, "vc" + std::to_string(o)); });
  Stmts after;
  forwardNodes(L.node(r.iterations, 0), tape_.size(), tangents, after);
  clearRenames();
  out.push_back(drawScope("v", "tl_fk", std::move(after)));
}

// Slot `slot` of node i's tangent: a's term, then b's, then c's, each ops.def's adjoint rule with the
// argument's tangent as d (rules that send nothing left out; none left: zero). config tangent_fma: a term
// whose rule is d * E after the first is fused, fma(t, E, the terms before).
E Builder::tangentExpr(int32_t i, int32_t slot, int m) const {
  const Op op = tape_.op[i];
  if (op == Op::Input) return literal(1.0);
  auto has = [&](int32_t j) { return std::binary_search(s_.tangents.of[j].begin(), s_.tangents.of[j].end(), slot); };
  E sum;
  for (int k = 0; k < arity(op); ++k) {
    const int32_t j = tape_.arg(i, k);
    const std::string_view rule = info(op).adjoint(k);
    if (!contributes(rule) || !has(j)) continue;
    const E t = tangentRef(j, slot, m);
    if (sum && config_.tangentFma && rule.substr(0, 4) == "d * ") {
      sum = fn("fma", {t, spellRule(rule.substr(4), i, Markets::one(m), "v", t), sum});
      continue;
    }
    const E term = paren(spellRule(rule, i, Markets::one(m), "v", t));
    sum = sum ? bin(sum, "+", term) : term;
  }
  return sum ? sum : literal(0.0);
}

std::vector<int32_t> Builder::carriedSlots(int32_t i) const {
  std::vector<int32_t> slots;
  for (int32_t slot : s_.tangents.of[i])
    if (!a_.closed || !a_.closed->isClosed(i, slot)) slots.push_back(slot);
  return slots;
}

E Builder::tangentRef(int32_t j, int32_t slot, int m) const {
  if (a_.closed && a_.closed->isClosed(j, slot))
    return paren(bin(value("v", j, Markets::one(m)), "*", var(inverseName(slot, m))));
  return var(tangentName(j, slot, m));
}

std::string Builder::inverseName(int32_t slot, int market) const {
  const int input = s_.tangents.inputs[slot];
  return "tl_ix" + std::to_string(input) + (perMarket(tape_.inputNodes[input]) ? "_" + std::to_string(market) : "");
}

// 1 / x, once per path and market, for each input some value's tangent is spelled in closed form for.
void Builder::declareInverses(Stmts& out) const {
  if (!a_.closed || !a_.closed->any()) return;
  for (size_t slot = 0; slot < s_.tangents.inputs.size(); ++slot) {
    bool used = false;
    for (const auto& c : a_.closed->closed) used = used || std::binary_search(c.begin(), c.end(), static_cast<int32_t>(slot));
    if (!used) continue;
    const int input = s_.tangents.inputs[slot];
    for (Markets m : copiesIn(tape_.inputNodes[input], Markets::all()))
      out.push_back(declareT(inverseName(static_cast<int32_t>(slot), m.market),
                             bin(literal(1.0), "/", var("tl_in" + std::to_string(m.market) + "_" + std::to_string(input)))));
  }
}

// t<j>_<slot>, with the market's suffix where the value has a copy per market (t<j>_<slot>_<m>).
std::string Builder::tangentName(int32_t j, int32_t slot, int market) const {
  std::string s = "t" + baseName("v", j).substr(1) + "_" + std::to_string(slot);
  if (perMarket(j)) s += "_" + std::to_string(market);
  return s;
}

void Builder::checkpointedForward(Stmts& out) {
  const Plan& plan = options_.plan;
  const RolledSegments* rolled = a_.segments && a_.segments->rolled ? a_.segments : nullptr;
  out.push_back(comment("persistent values: bookmarks, inputs, output"));
  for (int32_t j : plan.persistent) {
    if (rolled && rolledCrossing(j) > 0) continue;  // a rolled trip's crossing value: its carried variable
    const ValuePlace place = s_.nodes[j].value;
    if (inArray(place)) {  // the market loop indexes them
      out.push_back(declareArray("v" + std::to_string(j), markets_, place == ValuePlace::SharedArray));
      continue;
    }
    for (Markets m : copiesIn(j, Markets::all())) out.push_back(declareT(valueName("v", j, m)));
  }
  if (s_.prefill) prefillDraws(out);
  if (plan.perValue) {  // a value may cross a block unkept (the reverse recomputes it): one forward block
    out.push_back(comment("forward sweep in one block: the plan keeps values, not segments"));
    out.push_back(forwardSegment(0, 0, tape_.size()));
    clearRenames();
    return;
  }
  out.push_back(comment("forward sweep, one block per segment"));
  for (int s = 0; s < plan.segments(); ++s) {
    if (rolled && s == rolled->first) {
      rolledSegmentsForward(out);
      s += rolled->trips - 1;
      continue;
    }
    out.push_back(forwardSegment(s));
  }
  clearRenames();
}

// Forward segment s's block: its nodes in order (the market loop's after the rest), its stored draws and, for
// the scratch kind, its bookmarks stored. [begin, end): the nodes (a per-value plan's one block: every node).
Stmt Builder::forwardSegment(int s) const { return forwardSegment(s, options_.plan.begin(s), options_.plan.end(s)); }

Stmt Builder::forwardSegment(int s, int32_t begin, int32_t end) const {
  const Plan& plan = options_.plan;
  const bool scratch = options_.kind == KernelKind::Scratch;
  Stmts seg;
  const E drawKey = s_.prefill ? prefillKey(s, seg) : nullptr;
  // Every draw of the segment (a stored one too: it is stored from its variable, below). The market loop:
  // what no market owns (draws, constants) and the inputs first, then each market's nodes in a rolled loop
  // (no shared node reads a market's, so the order is the same per market).
  auto looped = [&](int32_t i) { return s_.marketLoop && perMarket(i) && tape_.op[i] != Op::Input; };
  Stmts loopBody;
  for (int32_t i = begin; i < end; ++i) {
    const bool declared = !plan.isPersistent[i];
    if (looped(i)) {
      loopBody.push_back(define(declared, "v", i, Markets::loop(), forwardExpr(i, Markets::loop(), "v")));
      continue;
    }
    if (prefilled(i)) {  // the prefill loop's draw, read (an opaque address, as a recompute reads it)
      seg.push_back(define(declared, "v", i, Markets::one(0), scratchAt(slotLoad(s_.nodes[i].drawSlot, drawKey))));
      continue;
    }
    for (Markets m : copiesIn(i, Markets::all())) seg.push_back(define(declared, "v", i, m, forwardExpr(i, m, "v")));
    if (const int slot = s_.nodes[i].drawSlot; slot >= 0)
      seg.push_back(assign(scratchAt(slotStore(drawSlot(slot))), value("v", i, Markets::one(0))));
  }
  if (!loopBody.empty()) seg.push_back(marketLoop(std::move(loopBody)));
  if (scratch && options_.greeks && s + 1 < plan.segments())
    for (int32_t j : plan.storedAt[s])
      for (Markets m : copiesIn(j, Markets::all())) seg.push_back(assign(scratchAt(scratchStore(j, m)), value("v", j, m)));
  Stmt scope = drawScope("v", "tl_fk", std::move(seg));
  scope.drawBase = drawBase_;
  return block("segment " + std::to_string(s) + ": nodes [" + std::to_string(begin) + ", " + std::to_string(end) + ")",
               {std::move(scope)});
}

// The key of forward segment s's draw loads (draws=prefill, draw_keys.h): a declaration of it when a value
// keys it.
E Builder::prefillKey(int s, Stmts& out) const {
  const int32_t j = a_.drawKeys->keyNode.at(s);
  if (j < 0) return config_.opaque ? paren(bin(param("seedLo"), "&", zeroKey())) : zeroKey();
  const std::string key = "tl_dk" + std::to_string(s);
  out.push_back(withNote(declare(Type::Uint, key, bin(castUint(bits(value("v", j, Markets::one(0)))), "&", zeroKey()), true),
                         "0: this segment's draws are loaded after the previous segment"));
  return var(key);
}

// config draws=prefill: every draw of the path into its scratch slot before the forward sweep. The groups
// 0..G-1 whose four draws have slots base + 4g + j (a tape drawing 0, 1, 2, ... in any node order) in one
// rolled loop, any other group after it in a block of its own; a pair with a slot is computed whole
// (tl_boxMuller), its draws with slots stored.
void Builder::prefillDraws(Stmts& out) const {
  out.push_back(comment("draws=prefill: every draw of the path into its scratch slot, then the sweeps read them"));
  std::map<uint32_t, std::vector<std::pair<uint32_t, int>>> groups;  // group: (word, slot)
  for (const auto& [draw, slot] : s_.drawSlotOf) groups[draw / kDrawsPerCall].push_back({draw % kDrawsPerCall, slot});
  const int base = s_.drawSlotOf.front().second;
  uint32_t full = 0;
  for (auto it = groups.find(0); it != groups.end() && it->first == full && it->second.size() == kDrawsPerCall; ++it) {
    bool regular = true;
    for (const auto& [word, slot] : it->second) regular = regular && slot == base + int(full * kDrawsPerCall + word);
    if (!regular) break;
    ++full;
  }
  if (full < 2) full = 0;  // a loop of one call: a block like the others
  auto group = [&](const E& g, const std::vector<std::pair<uint32_t, E>>& words) {
    Stmts body;
    body.push_back(declare(Type::Uint4, "tl_dw",
                           call("tl_drawWords", {g, var("tl_pathLo"), var("tl_pathHi"), var("tl_fk0"), var("tl_fk1")}), true));
    std::set<uint32_t> pairs;
    for (const auto& [word, slot] : words) {
      const uint32_t pair = word / 2;
      const std::string name = "tl_dn" + std::to_string(pair);
      if (pairs.insert(pair).second)
        body.push_back(declare(Type::Scalar2, name,
                               call("tl_boxMuller", {member(var("tl_dw"), kWordFields[2 * pair]),
                                                     member(var("tl_dw"), kWordFields[2 * pair + 1])}),
                               true));
      body.push_back(assign(scratchAt(slotStore(slot)), member(var(name), word % 2 ? "y" : "x")));
    }
    return body;
  };
  if (full > 0) {
    std::vector<std::pair<uint32_t, E>> words;
    for (uint32_t j = 0; j < kDrawsPerCall; ++j)
      words.push_back({j, paren(bin(ulit(base + int(j)), "+", bin(var("tl_dg"), "*", ulit(kDrawsPerCall))))});
    out.push_back(loop(Type::Uint, "tl_dg", ulit(0), bin(var("tl_dg"), "<", ulit(full)), prefix("++", var("tl_dg")), true, "",
                       group(var("tl_dg"), words)));
  }
  for (const auto& [g, list] : groups) {
    if (g < full) continue;
    std::vector<std::pair<uint32_t, E>> words;
    for (const auto& [word, slot] : list) words.push_back({word, ulit(slot)});
    out.push_back(block("", group(ulit(g), words)));
  }
}

}  // namespace tapelab::build
