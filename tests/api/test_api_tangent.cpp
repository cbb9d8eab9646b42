// The tangent kernel kind on every engine: the value and its standard error are
// the plain kernel's bits (one and two markets); the Greeks agree with the plain
// kernel's adjoints within rounding; compile-only engines compile it. And the
// front door's rules: --wrt names inputs, needs --kernel tangent, and tangent
// takes no plan.
#include <gtest/gtest.h>

#include <cmath>

#include "api/montecarlo.h"
#include "api/registry.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

class Tangent : public ::testing::TestWithParam<std::string> {};

TEST_P(Tangent, ValueBitsOfPlainGreeksWithinRounding) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Tape t = products::asianCall(12);
  for (const int markets : {1, 2}) {
    std::vector<std::vector<double>> in(static_cast<size_t>(markets), t.inputDefaults);
    if (markets == 2) in[1][t.inputIndex("spot")] *= 1.1;
    KernelOptions plain;
    plain.precision = caps.fp64 ? caps.defaultPrecision : Precision::F32;
    plain.markets = markets;
    KernelOptions tangent = plain;
    tangent.kind = KernelKind::Tangent;
    std::unique_ptr<Kernel> p = engine->compile(t, plain), g = engine->compile(t, tangent);
    if (!caps.usable) continue;  // compile-only: compiling is the test
    const RunResult a = p->run(in, 1500, 3), b = g->run(in, 1500, 3);
    const double rel = plain.precision == Precision::F32 ? 2e-5 : 1e-12;
    for (int m = 0; m < markets; ++m) {
      const MarketResult &x = a.markets[m], &y = b.markets[m];
      EXPECT_TRUE(testutil::identicalBits(x.value, y.value)) << entry.name << " market " << m << ": "
                                                             << testutil::g17(x.value) << " vs " << testutil::g17(y.value);
      EXPECT_TRUE(testutil::identicalBits(x.valueStderr, y.valueStderr)) << entry.name << " market " << m;
      for (size_t k = 0; k < x.greeks.size(); ++k)
        EXPECT_NEAR(y.greeks[k], x.greeks[k], rel * (std::fabs(x.greeks[k]) + 1.0))
            << entry.name << " market " << m << " d/d " << t.inputNames[k];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Tangent, ::testing::ValuesIn(engineNames()), testutil::engineParamName);

TEST(TangentFrontDoor, WrtNeedsTheTangentKernelAndKnownNames) {
  const Tape t = products::asianCall(4);
  EngineCaps caps;
  caps.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Tangent};
  RunConfig c;
  c.wrt = {"vol", "spot"};
  EXPECT_THROW(resolveKernel(t, c, caps), std::invalid_argument);  // --wrt without --kernel tangent
  c.kernel = KernelKind::Tangent;
  const KernelOptions o = resolveKernel(t, c, caps);
  EXPECT_EQ(o.kind, KernelKind::Tangent);
  EXPECT_EQ(o.wrt, (std::vector<int>{t.inputIndex("spot"), t.inputIndex("vol")}));
  c.wrt = {"gamma"};
  EXPECT_THROW(resolveKernel(t, c, caps), std::invalid_argument);
  c.wrt = {};
  c.checkpoint = Checkpoint::count(4);
  EXPECT_THROW(resolveKernel(t, c, caps), std::invalid_argument);  // nothing to cut
  caps.kinds = {KernelKind::Plain};
  c.checkpoint = Checkpoint::automatic();
  EXPECT_THROW(resolveKernel(t, c, caps), std::invalid_argument);  // engine without the kind
}

TEST(TangentFrontDoor, PricesThroughMonteCarlo) {
  RunConfig c;
  c.engine = "reference";
  c.kernel = KernelKind::Tangent;
  c.wrt = {"spot"};
  const Result r = MonteCarlo::of(products::asianCall()).steps(8).config(c).build().run(500, 1);
  EXPECT_GT(r.greek("spot"), 0.0);
  EXPECT_TRUE(std::isnan(r.greek("vol")));
}

}  // namespace
