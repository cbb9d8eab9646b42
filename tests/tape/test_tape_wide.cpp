// The wide products (tape/products/wide.cpp) on the reference engine against independent answers
// on the same draws: bucketed vegas sum to the Asian's vega, a flat local-volatility surface is the
// European (its node vegas sum to the European's vega), one Heston asset of the basket is the Heston
// call, and single buckets, nodes and correlations against finite differences (common draws).
// QuantLib and JAX oracles: python/tests/test_wide.py.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "planner/nested.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tests/common/reference_engines.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

constexpr uint64_t kPaths = 2000, kSeed = 17;

// The plain fp64 kernel's value and Greeks on the reference engine, at `inputs` (the defaults when empty).
MarketResult price(const Tape& t, std::vector<double> inputs = {}) {
  auto engine = testutil::makeReference("reference");
  KernelOptions o;
  o.precision = Precision::F64;
  o.plan = plainPlan(t);
  if (inputs.empty()) inputs = t.inputDefaults;
  return engine->compile(t, o)->run({inputs}, kPaths, kSeed).markets.at(0);
}

// The central difference of the value in input `name` (common draws), bumping by h.
double central(const Tape& t, std::vector<double> in, const std::string& name, double h) {
  const int k = t.inputIndex(name);
  in[k] += h;
  const double up = price(t, in).value;
  in[k] -= 2 * h;
  return (up - price(t, in).value) / (2 * h);
}

double greek(const Tape& t, const MarketResult& r, const std::string& name) { return r.greeks.at(t.inputIndex(name)); }

// Sums the Greeks of the inputs whose names start with `prefix`.
double sumOf(const Tape& t, const MarketResult& r, const std::string& prefix) {
  double s = 0;
  for (int i = 0; i < t.numInputs(); ++i)
    if (t.inputNames[i].rfind(prefix, 0) == 0) s += r.greeks[i];
  return s;
}

}  // namespace

TEST(Wide, BucketedVegasSumToTheAsiansVegaOnTheSameDraws) {
  const Tape asian = products::asianCall(48), bucketed = products::bucketedAsian(48, 12);
  EXPECT_EQ(bucketed.numInputs(), 16);
  const MarketResult a = price(asian), b = price(bucketed);
  EXPECT_TRUE(testutil::identicalBits(a.value, b.value)) << testutil::g17(a.value) << " " << testutil::g17(b.value);
  EXPECT_NEAR(sumOf(bucketed, b, "vol"), greek(asian, a, "vol"), 1e-12 * std::fabs(greek(asian, a, "vol")));
  for (const char* name : {"spot", "strike", "rate", "maturity"})
    EXPECT_NEAR(greek(bucketed, b, name), greek(asian, a, name), 1e-12 * std::fabs(greek(asian, a, name)) + 1e-14) << name;
  // Each bucket alone: a later bucket moves fewer fixings, so its vega is smaller.
  for (const char* name : {"vol1", "vol6", "vol12"}) {
    const double fd = central(bucketed, bucketed.inputDefaults, name, 1e-6);
    EXPECT_NEAR(greek(bucketed, b, name), fd, 1e-5 * std::fabs(fd) + 1e-9) << name;
  }
  EXPECT_GT(greek(bucketed, b, "vol1"), greek(bucketed, b, "vol12"));
}

TEST(Wide, AFlatLocalVolSurfaceIsTheEuropeanAndItsNodeVegasSumToTheEuropeansVega) {
  const int steps = 24;
  const Tape lv = products::localVolCall(steps, 9, 4), eu = products::europeanCall(steps);
  ASSERT_EQ(lv.numInputs(), 4 + 9 * 4);  // 9 strikes: the spot (log-moneyness 0) is on a node
  std::vector<double> flat = lv.inputDefaults;
  for (int i = 0; i < lv.numInputs(); ++i)
    if (lv.inputNames[i].rfind("vol_", 0) == 0) flat[i] = 0.2;
  const MarketResult l = price(lv, flat), e = price(eu);
  EXPECT_NEAR(l.value, e.value, 1e-12 * e.value);
  EXPECT_NEAR(sumOf(lv, l, "vol_"), greek(eu, e, "vol"), 1e-10 * std::fabs(greek(eu, e, "vol")));
  EXPECT_NEAR(greek(lv, l, "spot"), greek(eu, e, "spot"), 1e-10 * greek(eu, e, "spot"));
  // On the default (skewed) surface: single nodes against finite differences, and the nodes far
  // outside every path's reach carry no vega.
  const MarketResult d = price(lv);
  for (const char* name : {"vol_t0_x4", "vol_t1_x4", "vol_t2_x5", "vol_t3_x3"}) {
    const double fd = central(lv, lv.inputDefaults, name, 1e-6);
    EXPECT_NEAR(greek(lv, d, name), fd, 1e-5 * std::fabs(fd) + 1e-9) << name;
  }
  EXPECT_EQ(greek(lv, d, "vol_t0_x0"), 0.0);  // log-moneyness -1 at time 0: only the spot is there
}

TEST(Wide, OneHestonBasketAssetIsTheHestonCall) {
  // The basket's diffusion takes sqrt(max(v, 1e-30)) where the Heston call takes sqrt(max(v, 0)): a truncated
  // path moves by 1e-15 sqrt(dt) z, rounding.
  const Tape one = products::hestonBasket(1, 20), heston = products::hestonCall(20);
  const MarketResult b = price(one), h = price(heston);
  EXPECT_NEAR(b.value, h.value, 1e-13 * h.value);
  const std::vector<std::pair<std::string, std::string>> same{{"spot1", "spot"}, {"v0_1", "v0"}, {"kappa1", "kappa"},
                                                              {"theta1", "theta"}, {"xi1", "xi"}, {"rho1", "rho"},
                                                              {"strike", "strike"}, {"rate", "rate"}};
  for (const auto& [mine, theirs] : same)
    EXPECT_NEAR(greek(one, b, mine), greek(heston, h, theirs), 1e-11 * std::fabs(greek(heston, h, theirs)) + 1e-13) << mine;
}

TEST(Wide, HestonBasketGreeksOfSpotsParametersAndCorrelationsMatchFiniteDifferences) {
  const Tape t = products::hestonBasket(3, 12);
  EXPECT_EQ(t.numInputs(), 6 * 3 + 3 + 3);
  const MarketResult r = price(t);
  for (const char* name : {"spot2", "v0_3", "kappa1", "theta2", "xi3", "rho1", "corr1_2", "corr1_3", "corr2_3"}) {
    const double fd = central(t, t.inputDefaults, name, 1e-6);
    EXPECT_NEAR(greek(t, r, name), fd, 1e-4 * std::fabs(fd) + 1e-7) << name;
  }
  EXPECT_NE(greek(t, r, "corr2_3"), 0.0);
}

// STAC-A2's larger shape, 10 assets x 1,260 steps (440,323 nodes, 108 inputs): every plan kind on the
// reference, flat and nested register plans and scratch in both layouts, the plain kernel's bits.
TEST(Wide, TheTenAssetBasketRunsFlatNestedAndScratchPlansWithPlainBits) {
  const Tape t = products::hestonBasket(10, 1260);
  ASSERT_EQ(t.size(), 440323);
  auto engine = testutil::makeReference("reference");
  auto run = [&](KernelOptions o) { return engine->compile(t, o)->run({t.inputDefaults}, 8, 3).markets.at(0); };
  KernelOptions plain;
  plain.precision = Precision::F64;
  plain.plan = plainPlan(t);
  const MarketResult p = run(plain);
  ASSERT_TRUE(std::isfinite(p.value));
  PlanOptions po;
  po.segments = 16;
  po.innerSegments = 4;
  for (const Plan& plan : {planWindow(t, po), planTwoLevel(t, po), planRevolve(t, po)}) {
    KernelOptions o = plain;
    o.kind = KernelKind::Register;
    o.plan = plan;
    testutil::expectSameMarket(p, run(o), "register " + plan.strategy);
  }
  PlanOptions scratch;  // uniform at the default segment length, max(48, sqrt(n)): 645 nodes
  for (ScratchLayout layout : {ScratchLayout::SoA, ScratchLayout::AoS}) {
    KernelOptions o = plain;
    o.kind = KernelKind::Scratch;
    o.config.layout = layout;
    o.plan = planUniform(t, scratch);
    testutil::expectSameMarket(p, run(o), std::string("scratch ") + toString(layout));
  }
}

// The tangent kernel of the basket (every spot, Heston parameter and correlation) is finite and is the
// adjoint's estimator to rounding: the diffusion's square root never meets a truncated variance at 0.
TEST(Wide, TheHestonBasketsTangentKernelAgreesWithItsAdjoint) {
  const Tape t = products::hestonBasket(3, 12);
  auto engine = testutil::makeReference("reference");
  KernelOptions o;
  o.precision = Precision::F64;
  o.plan = plainPlan(t);
  const MarketResult adjoint = engine->compile(t, o)->run({t.inputDefaults}, 4000, 9).markets.at(0);
  o.kind = KernelKind::Tangent;
  const MarketResult tangent = engine->compile(t, o)->run({t.inputDefaults}, 4000, 9).markets.at(0);
  EXPECT_TRUE(testutil::identicalBits(adjoint.value, tangent.value));
  for (int i = 0; i < t.numInputs(); ++i)
    EXPECT_NEAR(tangent.greeks[i], adjoint.greeks[i], 1e-11 * std::fabs(adjoint.greeks[i]) + 1e-12) << t.inputNames[i];
}
