// Nested plans on the reference interpreters: every schedule, whatever its
// shape, gives the plain kernel's bits. The interpreter poisons what a block
// forgets, so a lowering that drops a needed value would show as a NaN here.
#include <gtest/gtest.h>

#include <random>

#include "planner/metrics.h"
#include "planner/nested.h"
#include "planner/schedule.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tests/common/reference_engines.h"
#include "tests/common/test_util.h"

namespace tapelab {
namespace {

using testutil::expectSameBits;

// A random cut of [begin, end): up to four cuts, sometimes a chain, nested up
// to `depth` more levels.
CutTree randomTree(std::mt19937_64& rng, int32_t begin, int32_t end, int depth) {
  CutTree c;
  const int32_t len = end - begin;
  if (len < 2 || depth == 0 || rng() % 4 == 0) return c;
  const int count = 1 + static_cast<int>(rng() % std::min<uint64_t>(4, uint64_t(len - 1)));
  std::vector<int32_t> cuts;
  while (static_cast<int>(cuts.size()) < count) {
    const int32_t x = begin + 1 + static_cast<int32_t>(rng() % uint64_t(len - 1));
    if (std::find(cuts.begin(), cuts.end(), x) == cuts.end()) cuts.push_back(x);
  }
  std::sort(cuts.begin(), cuts.end());
  c.cuts = cuts;
  c.chain = rng() % 3 == 0;
  if (!c.chain && rng() % 2 == 0)
    for (size_t k = 0; k <= cuts.size(); ++k)
      c.inner.push_back(randomTree(rng, k == 0 ? begin : cuts[k - 1], k == cuts.size() ? end : cuts[k], depth - 1));
  return c;
}

Plan randomNestedPlan(const Tape& t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  PlanOptions o;
  o.segments = 2 + static_cast<int>(rng() % 5);
  const Plan top = makeStrategyPlan("window", t, o);
  std::vector<CutTree> inner;
  for (int s = 0; s < top.segments(); ++s) inner.push_back(randomTree(rng, top.begin(s), top.end(s), 3));
  return makePlan(t, top.bounds, "random-nested", std::move(inner));
}

RunResult runOn(const std::string& engine, const Tape& t, const Plan* plan, Precision p) {
  KernelOptions o;
  o.precision = p;
  o.kind = plan ? KernelKind::Register : KernelKind::Plain;
  o.plan = plan ? *plan : plainPlan(t);
  return testutil::makeReference(engine)->compile(t, o)->run({t.inputDefaults}, 2000, 11);
}

void expectPlainBits(const Tape& t, const Plan& plan, const std::string& what) {
  for (const auto& [engine, p] : {std::pair<std::string, Precision>{"reference", Precision::F64},
                                  {"reference-f32", Precision::F32}}) {
    const RunResult plain = runOn(engine, t, nullptr, p);
    const RunResult nested = runOn(engine, t, &plan, p);
    expectSameBits(plain, nested, engine + " " + what);
  }
}

TEST(ReferenceNested, RevolveAndTwoLevelGivePlainBits) {
  for (const Tape& t : {products::asianCall(24), products::basketCall(3, 6), products::europeanCall(12)}) {
    for (int s : {2, 3, 5}) {
      PlanOptions o;
      o.segments = s;
      const Plan p = planRevolve(t, o);
      EXPECT_GE(p.depth(), s == 2 ? 1 : 2) << t.name;
      expectPlainBits(t, p, t.name + " revolve " + std::to_string(s));
    }
    PlanOptions o;
    o.segments = 3;
    o.innerSegments = 3;
    expectPlainBits(t, planTwoLevel(t, o), t.name + " two-level");
  }
}

TEST(ReferenceNested, RandomTreesGivePlainBits) {
  int nestedPlans = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    RandomTapeOptions ro;
    ro.nodes = 60 + static_cast<int32_t>(seed * 7);
    ro.draws = 8;
    const Tape t = randomTape(seed, ro);
    for (uint64_t k = 0; k < 4; ++k) {
      const Plan p = randomNestedPlan(t, seed * 100 + k);
      nestedPlans += p.nested();
      expectPlainBits(t, p, "random tape " + std::to_string(seed) + " plan " + std::to_string(k));
    }
  }
  EXPECT_GT(nestedPlans, 20);  // the generator does nest
}

TEST(ReferenceNested, LoweringHoldsEveryImport) {
  // lowerPlan throws when a block reads a value nobody holds; every bookmark is
  // read by a later sibling.
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const Tape t = randomTape(seed, {});
    const Plan p = randomNestedPlan(t, seed);
    const Schedule s = lowerPlan(t, p);
    forEachBlock(s.blocks, [&](const ScheduleBlock& b) {
      EXPECT_EQ(b.imports.size(), b.importDepth.size());
      for (size_t k = 0; k < b.imports.size(); ++k) EXPECT_LT(b.importDepth[k], b.depth);
      for (int32_t j : b.bookmarks) {
        EXPECT_GE(j, b.from);
        EXPECT_LT(j, b.advanceEnd);
      }
    });
  }
}

TEST(ReferenceNested, MetricsCountNestedRecompute) {
  const Tape t = products::asianCall(64);
  PlanOptions o;
  o.segments = 8;
  const PlanMetrics flat = planMetrics(t, makeStrategyPlan("window", t, o));
  o.innerSegments = 4;
  const PlanMetrics two = planMetrics(t, planTwoLevel(t, o));
  EXPECT_EQ(flat.depth, 1);
  EXPECT_EQ(two.depth, 2);
  EXPECT_LT(two.peakLive, flat.peakLive);           // a smaller working set
  EXPECT_GT(two.recomputeOps, flat.recomputeOps);   // paid for with recomputation
  EXPECT_LT(two.recomputeOps, 2 * flat.recomputeOps + t.size());
  const PlanMetrics unit = planMetrics(t, planTwoLevel(t, o), CostModel::unit());
  EXPECT_EQ(unit.recomputeCost, double(unit.recomputeOps));
}

}  // namespace
}  // namespace tapelab
