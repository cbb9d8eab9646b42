// The tangent rules (tape/tangent.h: each op's adjoint rule with the argument's
// tangent as d) on the reference engines: every op as a one-op tape, with x and y
// the same node too, gives the adjoint's partials; the slot analysis keeps the
// basket's assets apart; a --wrt subset leaves the other Greeks NaN; values are
// the plain kernel's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reference/interpreter.h"
#include "tape/products/products.h"
#include "tape/tangent.h"
#include "tests/common/reference_engines.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

RunResult runOn(const std::string& engine, const Tape& t, KernelKind kind, const std::vector<int>& wrt = {},
                uint64_t paths = 64) {
  KernelOptions o;
  o.kind = kind;
  o.wrt = wrt;
  o.precision = engine == "reference-f32" ? Precision::F32 : Precision::F64;
  return testutil::makeReference(engine)->compile(t, o)->run({t.inputDefaults}, paths, 11);
}

// op(x, y), op(x, x) and, for a unary op, op(x), for select op(x, y, x); inputs away from every kink.
std::vector<Tape> oneOpTapes(Op op) {
  std::vector<Tape> out;
  for (int same = 0; same < (arity(op) == 2 ? 2 : 1); ++same) {
    Tape t;
    t.name = std::string(name(op)) + (same ? "-same" : "");
    const int32_t x = t.addInput("x", 1.7);
    const int32_t y = t.addInput("y", 0.6);
    const int32_t z = t.push(Op::Randn, -1, -1, 0);
    const int32_t xz = t.push(Op::Add, x, t.push(Op::Mul, z, t.push(Op::Const, -1, -1, 0.01)));
    t.output = arity(op) == 3   ? t.push3(op, xz, y, x)
               : arity(op) == 2 ? t.push(op, xz, same ? xz : y)
                                : t.push(op, xz);
    out.push_back(t);
  }
  return out;
}

TEST(TapeTangent, EveryOpGivesTheAdjointsPartials) {
  for (const OpInfo& info : kOps) {
    if (info.arity == 0) continue;
    for (const Tape& t : oneOpTapes(info.op)) {
      for (const char* engine : {"reference", "reference-f32", "reference-mp"}) {
        const RunResult plain = runOn(engine, t, KernelKind::Plain);
        const RunResult tangent = runOn(engine, t, KernelKind::Tangent);
        const MarketResult &p = plain.markets[0], &g = tangent.markets[0];
        EXPECT_EQ(testutil::g17(p.value), testutil::g17(g.value)) << t.name << " on " << engine;
        const double tol = std::string(engine) == "reference-f32" ? 1e-6 : 1e-14;
        for (size_t k = 0; k < p.greeks.size(); ++k)
          EXPECT_NEAR(g.greeks[k], p.greeks[k], tol * (1 + std::fabs(p.greeks[k])))
              << t.name << " on " << engine << ", d/d " << t.inputNames[k];
      }
    }
  }
}

TEST(TapeTangent, ValueBitsEqualPlainOnTheAsian) {
  const Tape t = products::asianCall(24);
  for (const char* engine : {"reference", "reference-f32"}) {
    const RunResult plain = runOn(engine, t, KernelKind::Plain, {}, 3000);
    const RunResult tangent = runOn(engine, t, KernelKind::Tangent, {}, 3000);
    EXPECT_TRUE(testutil::identicalBits(plain.markets[0].value, tangent.markets[0].value)) << engine;
    EXPECT_TRUE(testutil::identicalBits(plain.markets[0].valueStderr, tangent.markets[0].valueStderr)) << engine;
    for (size_t k = 0; k < t.inputNames.size(); ++k)
      EXPECT_NEAR(tangent.markets[0].greeks[k], plain.markets[0].greeks[k],
                  1e-4 * plain.markets[0].greeksStderr[k] + 1e-12)
          << engine << " d/d " << t.inputNames[k];
  }
}

TEST(TapeTangent, WrtSubsetLeavesTheOtherGreeksNaN) {
  const Tape t = products::asianCall(8);
  const int spot = t.inputIndex("spot"), vol = t.inputIndex("vol");
  const RunResult all = runOn("reference", t, KernelKind::Tangent);
  const RunResult some = runOn("reference", t, KernelKind::Tangent, {spot, vol});
  EXPECT_TRUE(testutil::identicalBits(all.markets[0].value, some.markets[0].value));
  for (int k = 0; k < t.numInputs(); ++k) {
    if (k == spot || k == vol) {
      EXPECT_TRUE(testutil::identicalBits(all.markets[0].greeks[k], some.markets[0].greeks[k])) << t.inputNames[k];
    } else {
      EXPECT_TRUE(std::isnan(some.markets[0].greeks[k])) << t.inputNames[k];
    }
  }
  EXPECT_THROW(runOn("reference", t, KernelKind::Tangent, {spot, spot}), std::invalid_argument);
  EXPECT_THROW(runOn("reference", t, KernelKind::Tangent, {t.numInputs()}), std::invalid_argument);
}

TEST(TapeTangent, SlotsFollowDependence) {
  const int assets = 3;
  const Tape t = products::basketCall(assets, 2);
  std::vector<int> spotsAndVols;
  for (int i = 1; i <= assets; ++i) spotsAndVols.push_back(t.inputIndex("spot" + std::to_string(i)));
  for (int i = 1; i <= assets; ++i) spotsAndVols.push_back(t.inputIndex("vol" + std::to_string(i)));
  std::sort(spotsAndVols.begin(), spotsAndVols.end());
  const TangentSlots s = tangentSlots(t, spotsAndVols);
  EXPECT_EQ(s.of[t.output].size(), spotsAndVols.size());  // the payoff depends on every spot and vol
  size_t most = 0;
  for (int32_t i = 0; i < t.size(); ++i) {
    if (t.op[i] == Op::Randn || t.op[i] == Op::Const) {
      EXPECT_TRUE(s.of[i].empty()) << i;
    }
    if (i < t.output && t.op[i] == Op::Exp) most = std::max(most, s.of[i].size());
  }
  EXPECT_LE(most, 1u);  // an asset's step factor depends on its own vol only
  EXPECT_LT(s.total(), int64_t(t.size()) * int64_t(spotsAndVols.size()) / 2);
}

}  // namespace
