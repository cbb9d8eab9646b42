// Planner invariants on random tapes and plans (every strategy, any segment
// count and length, random cut positions): recounted by brute force.
#include <algorithm>
#include <set>

#include "planner/metrics.h"
#include "planner/schedule.h"
#include "planner/strategies.h"
#include "properties/gen.h"
#include "properties/harness.h"

namespace tapelab::props {
namespace {

namespace gen = rc::gen;

// Nodes that read node j, brute force: every node's arguments.
std::vector<std::vector<int32_t>> readers(const Tape& t) {
  std::vector<std::vector<int32_t>> r(t.size());
  for (int32_t i = 0; i < t.size(); ++i) {
    if (arity(t.op[i]) >= 1) r[t.a[i]].push_back(i);
    if (arity(t.op[i]) >= 2) r[t.b[i]].push_back(i);
    if (arity(t.op[i]) >= 3) r[t.c[i]].push_back(i);
  }
  return r;
}

// A per-value plan: persistent = keep + inputs + output, and every value a block's recompute or its
// adjoint rules read is recomputed there or kept (what the engines' poisoning would show as a NaN).
void checkPerValuePlan(const Tape& t, const Plan& p) {
  std::set<int32_t> want(p.keep.begin(), p.keep.end());
  for (int32_t node : t.inputNodes) want.insert(node);
  want.insert(t.output);
  RC_ASSERT(p.persistent == std::vector<int32_t>(want.begin(), want.end()));
  const Schedule s = lowerPlan(t, p);
  RC_ASSERT(s.blocks.size() == static_cast<size_t>(p.segments()));
  for (const ScheduleBlock& b : s.blocks) {
    RC_ASSERT(b.perValue);
    std::set<int32_t> have(b.recompute.begin(), b.recompute.end());
    for (int32_t j : b.recompute) RC_ASSERT(!p.isPersistent[j]);
    auto available = [&](int32_t j) { return have.count(j) == 1 || p.isPersistent[j] != 0; };
    for (int32_t i : b.recompute) forEachArg(t, i, [&](int32_t j) { RC_ASSERT(available(j)); });
    for (int32_t i = b.begin; i < b.end; ++i) {
      if (arity(t.op[i]) == 0) continue;
      const AdjointReads r = adjointReads(t.op[i]);
      for (int k = 0; k < arity(t.op[i]); ++k)
        if (r.arg(k)) RC_ASSERT(available(t.arg(i, k)));
      if (r.r) RC_ASSERT(available(i));
    }
  }
}

void checkPlan(const Tape& t, const Plan& p) {
  if (p.perValue) {
    checkPerValuePlan(t, p);
    return;
  }
  const int32_t n = t.size();
  const int segs = p.segments();
  RC_ASSERT(segs >= 1);
  RC_ASSERT(p.bounds.front() == 0);
  RC_ASSERT(p.bounds.back() == n);
  for (int s = 0; s < segs; ++s) RC_ASSERT(p.begin(s) < p.end(s));
  std::vector<int> segOf(n);
  for (int s = 0; s < segs; ++s)
    for (int32_t i = p.begin(s); i < p.end(s); ++i) segOf[i] = s;

  // crossing: read by a node of a later segment, or the output before the last segment.
  const auto rd = readers(t);
  std::vector<int32_t> crossing;
  for (int32_t j = 0; j < n; ++j) {
    bool crosses = j == t.output && segOf[j] < segs - 1;
    for (int32_t i : rd[j]) crosses = crosses || segOf[i] > segOf[j];
    if (crosses) crossing.push_back(j);
  }
  RC_ASSERT(p.crossing == crossing);

  // persistent = crossing + inputs + output, sorted and distinct.
  std::set<int32_t> want(crossing.begin(), crossing.end());
  for (int32_t node : t.inputNodes) want.insert(node);
  want.insert(t.output);
  RC_ASSERT(p.persistent == std::vector<int32_t>(want.begin(), want.end()));
  RC_ASSERT(p.isPersistent.size() == static_cast<size_t>(n));
  for (int32_t j = 0; j < n; ++j) RC_ASSERT((p.isPersistent[j] != 0) == (want.count(j) == 1));

  // Scratch slots: each crossing non-input value stored once, at the end of its
  // own segment, slots numbered in storing order.
  RC_ASSERT(p.slot.size() == static_cast<size_t>(n));
  RC_ASSERT(p.storedAt.size() == static_cast<size_t>(segs - 1));
  std::vector<std::vector<int32_t>> stored(segs);
  for (int32_t j : crossing)
    if (t.op[j] != Op::Input) stored[segOf[j]].push_back(j);
  RC_ASSERT(stored.back().empty());  // nothing crosses out of the last segment
  int32_t nextSlot = 0;
  for (int s = 0; s + 1 < segs; ++s) {
    RC_ASSERT(p.storedAt[s] == stored[s]);
    for (int32_t j : stored[s]) RC_ASSERT(p.slot[j] == nextSlot++);
  }
  RC_ASSERT(p.scratchSlots == nextSlot);
  for (int32_t j = 0; j < n; ++j) {
    const bool stored = std::binary_search(crossing.begin(), crossing.end(), j) && t.op[j] != Op::Input;
    RC_ASSERT((p.slot[j] >= 0) == stored);
  }

  // A segment's imports: what its nodes read from earlier segments; all persistent.
  for (int s = 0; s < segs; ++s) {
    std::set<int32_t> imp;
    for (int32_t i = p.begin(s); i < p.end(s); ++i) {
      if (arity(t.op[i]) >= 1 && t.a[i] < p.begin(s)) imp.insert(t.a[i]);
      if (arity(t.op[i]) >= 2 && t.b[i] < p.begin(s)) imp.insert(t.b[i]);
      if (arity(t.op[i]) >= 3 && t.c[i] < p.begin(s)) imp.insert(t.c[i]);
    }
    const std::vector<int32_t> got = segmentImports(t, p, s);
    RC_ASSERT(got == std::vector<int32_t>(imp.begin(), imp.end()));
    for (int32_t j : got) RC_ASSERT(p.isPersistent[j] != 0);
  }

  // The reverse sweep's schedule: every node's adjoint rule runs in exactly one
  // leaf, every block's imports are held (lowerPlan throws otherwise), and a
  // flat plan lowers to one leaf per segment.
  const Schedule schedule = lowerPlan(t, p);
  std::vector<int> reversed(n, 0);
  int leaves = 0;
  forEachBlock(schedule.blocks, [&](const ScheduleBlock& b) {
    RC_ASSERT(b.from <= b.begin);
    RC_ASSERT(b.begin < b.end);
    if (!b.leaf()) return;
    ++leaves;
    for (int32_t i = b.begin; i < b.end; ++i) ++reversed[i];
  });
  for (int32_t i = 0; i < n; ++i) RC_ASSERT(reversed[i] == 1);
  if (!p.nested()) RC_ASSERT(leaves == segs);
  RC_ASSERT(schedule.depth == std::max(1, p.depth()));
  counters().compared += n;
}

TEST(Planner, PersistentIsCrossingPlusInputsPlusOutput) {
  const int cases = 150 * propertyRuns();
  checkProperty("planner", cases, [&] {
    const Tape t = buildTape(*genTapeSpec(TapeMode::Wild, 3000));
    noteTape(t);
    const PlanSpec spec = *genPlanSpec();
    const Plan p = buildPlan(t, spec);
    logCase(describePlan(p));
    checkPlan(t, p);
  });
}

TEST(Planner, StrategiesHonourTheirOptions) {
  const int cases = 100 * propertyRuns();
  checkProperty("planner", cases, [&] {
    const Tape t = buildTape(*genTapeSpec(TapeMode::Wild, 800));
    noteTape(t);
    const int32_t n = t.size();
    const int segments = *gen::weightedOneOf<int>({{3, gen::inRange(1, std::min(n, 40) + 1)}, {1, gen::inRange(1, n + 1)}});
    const bool tryBudget = *gen::inRange(0, 8) == 0;  // it plans ~150 candidates: now and then
    for (const StrategyEntry& s : strategies()) {
      if (s.name == "budget" && !tryBudget) continue;
      PlanOptions o;
      o.segments = segments;
      const Plan p = makeStrategyPlan(s.name, t, o);
      checkPlan(t, p);
      if (s.name == "window" || s.name == "two-level") RC_ASSERT(p.segments() == segments);
      if (s.name == "budget") RC_ASSERT(planMetrics(t, p).peakLive <= planMetrics(t, planWindow(t, o)).peakLive);
    }
    // uniform with a segment length: every segment that long but the last.
    PlanOptions o;
    o.segments = 1;
    o.segLen = *gen::inRange(1, n + 1);
    const Plan u = makeStrategyPlan("uniform", t, o);
    for (int s = 0; s + 1 < u.segments(); ++s) RC_ASSERT(u.end(s) - u.begin(s) == o.segLen);
    RC_ASSERT(u.end(u.segments() - 1) - u.begin(u.segments() - 1) <= o.segLen);
    // Impossible options are rejected, not crashed on.
    for (int bad : {0, -1, n + 1}) {
      PlanOptions b;
      b.segments = bad;
      for (const StrategyEntry& s : strategies()) RC_ASSERT_THROWS_AS(makeStrategyPlan(s.name, t, b), std::invalid_argument);
    }
  });
}

const StrategyEntry* strategyNamed(const std::string& name) {
  for (const StrategyEntry& s : strategies())
    if (s.name == name) return &s;
  return nullptr;
}

// `optimal` (least peak_live over candidate cuts that include every other
// strategy's for the same segment count) is not worse than window, marginal,
// optimal-persistent, or uniform when uniform has that many segments; and
// `optimal-persistent` (exact over all plans) has no more persistent values
// than any of them, nor than random cuts with the same segment count.
TEST(Planner, OptimalNotWorseThanWindow) {
  const StrategyEntry* optimal = strategyNamed("optimal");
  if (!optimal) {
    GTEST_SKIP() << "planner: strategies() has no 'optimal'";
  }
  const StrategyEntry* persistentOpt = strategyNamed("optimal-persistent");
  checkProperty("planner", 100 * propertyRuns(), [&] {
    const Tape t = buildTape(*genTapeSpec(TapeMode::Wild, 600));
    noteTape(t);
    const int32_t n = t.size();
    PlanOptions o;
    o.segments = *gen::weightedOneOf<int>({{3, gen::inRange(1, std::min(n, 24) + 1)}, {1, gen::inRange(1, n + 1)}});
    const Plan best = optimal->fn(t, o);
    checkPlan(t, best);
    RC_ASSERT(best.segments() == o.segments);
    const PlanMetrics mb = planMetrics(t, best);
    std::vector<Plan> others;
    for (const char* name : {"window", "marginal", "optimal-persistent", "uniform"})
      if (const StrategyEntry* s = strategyNamed(name)) others.push_back(s->fn(t, o));
    // Random cuts with the same segment count.
    std::vector<int32_t> cuts;
    for (int32_t c = 1; c < n; ++c) cuts.push_back(c);
    for (int k = 0; k + 1 < o.segments; ++k) std::swap(cuts[k], cuts[k + *gen::inRange<size_t>(0, cuts.size() - k)]);
    std::vector<int32_t> bounds(cuts.begin(), cuts.begin() + (o.segments - 1));
    bounds.push_back(0);
    bounds.push_back(n);
    std::sort(bounds.begin(), bounds.end());
    others.push_back(makePlan(t, bounds, "random-cuts"));
    const int32_t least = persistentOpt ? planMetrics(t, persistentOpt->fn(t, o)).persistent : -1;
    for (const Plan& p : others) {
      if (p.segments() != o.segments) continue;  // uniform rounds its length
      const PlanMetrics m = planMetrics(t, p);
      ++counters().compared;
      if (p.strategy != "random-cuts" && mb.peakLive > m.peakLive)
        RC_FAIL("optimal peak_live " + std::to_string(mb.peakLive) + " > " + p.strategy + "'s " +
                std::to_string(m.peakLive) + " at " + std::to_string(o.segments) + " segments");
      if (persistentOpt) {
        if (least > m.persistent)
          RC_FAIL("optimal-persistent keeps " + std::to_string(least) + " values, " + p.strategy + " " +
                  std::to_string(m.persistent) + " (" + describePlan(p) + ")");
      }
    }
  });
}

}  // namespace
}  // namespace tapelab::props
