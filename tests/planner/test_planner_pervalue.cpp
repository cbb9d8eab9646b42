// Per-value plans (planner/plan.h): the family's lowering, metrics and plan files, the min-cut
// strategies, and the reference interpreter running them with the plain kernel's bits (==).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "planner/metrics.h"
#include "planner/pervalue.h"
#include "planner/planfile.h"
#include "planner/schedule.h"
#include "planner/strategies.h"
#include "tests/common/reference_engines.h"
#include "tests/planner/planner_test_tapes.h"

using namespace tapelab;
using namespace tapelab::plannertest;

namespace {

std::vector<int32_t> keptOf(const Tape& t, const Plan& p) {
  std::vector<int32_t> keep;
  for (int32_t j : p.persistent)
    if (t.op[j] != Op::Input && j != t.output) keep.push_back(j);
  return keep;
}

RunResult runOn(const Tape& t, const Plan& p, uint64_t paths) {
  auto engine = testutil::makeReference("reference");
  KernelOptions k;
  k.precision = Precision::F64;
  k.kind = p.segments() > 1 || p.perValue ? KernelKind::Register : KernelKind::Plain;
  k.plan = p;
  return engine->compile(t, k)->run({t.inputDefaults}, paths, 77);
}

void expectSameBits(const RunResult& a, const RunResult& b, const std::string& what) {
  const MarketResult &x = a.markets.at(0), &y = b.markets.at(0);
  EXPECT_EQ(x.value, y.value) << what;
  ASSERT_EQ(x.greeks.size(), y.greeks.size());
  for (size_t k = 0; k < x.greeks.size(); ++k) EXPECT_EQ(x.greeks[k], y.greeks[k]) << what << ": greek " << k;
}

}  // namespace

TEST(PlannerPerValue, KeepingASegmentPlansPersistentSetHasItsMetrics) {
  for (const Tape& t : productTapes())
    for (const char* s : {"window", "uniform", "optimal"})
      for (int segs : {2, 5, 16}) {
        if (segs > t.size()) continue;
        const Plan seg = makeStrategyPlan(s, t, {segs, 0});
        if (seg.segments() < 2) continue;
        const Plan pv = makePerValuePlan(t, seg.bounds, keptOf(t, seg), "same");
        EXPECT_EQ(pv.persistent, seg.persistent);
        const PlanMetrics a = planMetrics(t, seg), b = planMetrics(t, pv);
        const std::string what = t.name + " " + s + " " + std::to_string(segs);
        EXPECT_EQ(a.peakLive, b.peakLive) << what;
        EXPECT_EQ(a.recomputeOps, b.recomputeOps) << what;
        EXPECT_EQ(a.recomputeCost, b.recomputeCost) << what;
      }
}

TEST(PlannerPerValue, AClosureReachesBackPastItsBlockWhenACrossingValueIsNotKept) {
  const Tape t = products::asianCall(24);
  const Plan seg = makeStrategyPlan("window", t, {4, 0});
  const Plan pv = makePerValuePlan(t, seg.bounds, {}, "keep-nothing");
  const Schedule s = lowerPlan(t, pv);
  ASSERT_EQ(s.blocks.size(), 4u);
  EXPECT_LT(s.blocks.front().from, s.blocks.front().begin);  // the last block recomputes the path from its start
  EXPECT_GT(planMetrics(t, pv).recomputeCost, planMetrics(t, seg).recomputeCost);
  expectSameBits(runOn(t, plainPlan(t), 2048), runOn(t, pv, 2048), "keep nothing");
}

TEST(PlannerPerValue, KeepingEverythingTheReverseReadsRecomputesNothing) {
  const Tape t = products::asianCall(24);
  std::vector<int32_t> all;
  for (int32_t j = 0; j < t.size(); ++j) all.push_back(j);
  const Plan pv = makePerValuePlan(t, {0, t.size() / 2, t.size()}, all, "keep-all");
  EXPECT_EQ(planMetrics(t, pv).recomputeOps, 0);
  expectSameBits(runOn(t, plainPlan(t), 2048), runOn(t, pv, 2048), "keep all");
}

TEST(PlannerPerValue, RandomKeptSetsReturnThePlainBits) {
  std::mt19937 rng(11);
  for (const Tape& t : productTapes()) {
    const RunResult plain = runOn(t, plainPlan(t), 1100);
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<int32_t> keep, bounds{0};
      for (int32_t j = 0; j < t.size(); ++j)
        if (rng() % 4 == 0) keep.push_back(j);
      for (int32_t j = 1; j < t.size(); ++j)
        if (rng() % 37 == 0) bounds.push_back(j);
      bounds.push_back(t.size());
      expectSameBits(plain, runOn(t, makePerValuePlan(t, bounds, keep, "random"), 1100), t.name + " random");
    }
  }
}

TEST(PlannerPerValue, MinCutKeepsNoMoreThanTheCrossingSetPerBlockAndDropsWhatTheReverseNeverReads) {
  const Tape t = products::asianCall(252);
  for (int segs : {4, 16}) {
    const Plan seg = makeStrategyPlan("window", t, {segs, 0});
    const Plan cut = makeStrategyPlan("mincut", t, {segs, 0});
    ASSERT_TRUE(cut.perValue);
    EXPECT_EQ(cut.bounds, seg.bounds);  // window's blocks
    EXPECT_LT(cut.persistent.size(), seg.persistent.size());  // the running sum's bookmarks are never read back
    const Plan weighted = makeStrategyPlan("mincut-weighted", t, {segs, 0});
    EXPECT_LE(planMetrics(t, weighted).peakLive, planMetrics(t, seg).peakLive);  // its default budget: window's
  }
}

TEST(PlannerPerValue, PlanFilesOfVersionTwoRoundTripAndVersionOneStillReads) {
  const Tape t = products::asianCall(24);
  Plan p = makeStrategyPlan("mincut", t, {4, 0});
  p.solver.status = "optimal";
  p.solver.objective = p.solver.bound = 12.5;
  p.solver.gap = 0;
  p.solver.seconds = 0.25;
  p.solver.solverName = "HiGHS test";
  const std::string text = planFileText(t, p, 4);
  EXPECT_NE(text.find("\"tapelab-plan 2\""), std::string::npos);
  const Plan q = parsePlanFile(text, t, "p.json");
  EXPECT_TRUE(q.perValue);
  EXPECT_EQ(q.keep, p.keep);
  EXPECT_EQ(q.bounds, p.bounds);
  EXPECT_EQ(q.solver.status, "optimal");
  EXPECT_EQ(q.solver.objective, 12.5);
  const Plan w = makeStrategyPlan("window", t, {4, 0});
  const std::string v1 = planFileText(t, w, 4);
  EXPECT_NE(v1.find("\"tapelab-plan 1\""), std::string::npos);  // old readers read segment plans
  EXPECT_EQ(parsePlanFile(v1, t, "w.json").bounds, w.bounds);
}

TEST(PlannerPerValue, PlanFileErrorsNameTheField) {
  const Tape t = products::asianCall(24);
  const std::string head = "{\"format\": \"tapelab-plan 2\", \"tape\": {\"nodes\": " + std::to_string(t.size()) +
                           ", \"structure\": \"" + structureHash(t) + "\"}, \"cuts\": [40]";
  auto error = [&](const std::string& rest) {
    try {
      parsePlanFile(head + rest + "}", t, "x.json");
    } catch (const PlanFileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(", \"keep\": [3]"), "x.json: keep: only a per-value plan keeps values of its own (\"family\": \"per-value\")");
  EXPECT_EQ(error(", \"family\": \"per-value\""), "x.json: (file): the required key 'keep' is missing");
  EXPECT_EQ(error(", \"family\": \"per-value\", \"keep\": [5, 3]"), "x.json: keep[1]: 3 does not increase on 5");
  EXPECT_EQ(error(", \"family\": \"per-value\", \"keep\": [], \"inner\": [null, null]"),
            "x.json: inner: a per-value plan has no nested cuts (its cuts only group the reverse sweep)");
  EXPECT_EQ(error(", \"family\": \"pervalue\", \"keep\": []"), "x.json: family: expected \"segment\" or \"per-value\"");
  EXPECT_EQ(error(", \"solver\": {\"status\": 3}"), "x.json: solver.status: expected a string");
}
