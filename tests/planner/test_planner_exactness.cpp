// The reference interpreter's checkpointed mode follows whatever plan a
// strategy makes and stays bit-exact with the plain kernel (== on the value
// and every Greek, printed with 17 significant digits on failure).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "planner/strategies.h"
#include "tests/common/reference_engines.h"
#include "tests/planner/planner_test_tapes.h"

using namespace tapelab;
using namespace tapelab::plannertest;

namespace {

std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

bool sameBits(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

void expectSame(const RunResult& plain, const RunResult& cut, const std::string& what) {
  const MarketResult& a = plain.markets.at(0);
  const MarketResult& b = cut.markets.at(0);
  EXPECT_TRUE(sameBits(a.value, b.value)) << what << ": value " << g17(a.value) << " vs " << g17(b.value);
  ASSERT_EQ(a.greeks.size(), b.greeks.size());
  for (size_t k = 0; k < a.greeks.size(); ++k)
    EXPECT_TRUE(sameBits(a.greeks[k], b.greeks[k]))
        << what << ": greek " << k << " " << g17(a.greeks[k]) << " vs " << g17(b.greeks[k]);
}

void checkEveryStrategy(const std::string& engineName, const Tape& t, uint64_t paths) {
  auto engine = testutil::makeReference(engineName);
  ASSERT_TRUE(engine);
  KernelOptions plain;
  plain.precision = engineName == "reference-f32" ? Precision::F32 : Precision::F64;
  plain.plan = plainPlan(t);
  const std::vector<std::vector<double>> in{t.inputDefaults};
  const RunResult base = engine->compile(t, plain)->run(in, paths, 2024);
  for (const StrategyEntry& s : strategies())
    for (int segs : {2, 5, 16}) {
      if (segs > t.size()) continue;
      PlanOptions po;
      po.segments = segs;
      KernelOptions k = plain;
      k.kind = KernelKind::Register;
      k.plan = makeStrategyPlan(s.name, t, po);
      if (k.plan.segments() == 1) continue;
      expectSame(base, engine->compile(t, k)->run(in, paths, 2024),
                 engineName + " " + t.name + " " + s.name + " " + std::to_string(segs));
    }
}

TEST(PlannerExactness, ProductsCheckpointedEqualPlainForEveryStrategy) {
  for (const Tape& t : {products::europeanCall(50), products::asianCall(252), products::basketCall(3, 20)})
    checkEveryStrategy("reference", t, 128);
  checkEveryStrategy("reference-f32", products::asianCall(50), 128);
}

TEST(PlannerExactness, RandomTapesCheckpointedEqualPlainForEveryStrategy) {
  for (const Tape& t : randomTapes(8, 120)) checkEveryStrategy("reference", t, 64);
  RandomTapeOptions wild;
  wild.nodes = 150;
  wild.wellConditioned = false;  // NaN and Inf must come out the same too
  checkEveryStrategy("reference", randomTape(99, wild), 64);
}

}  // namespace
