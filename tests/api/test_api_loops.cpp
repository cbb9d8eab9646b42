// config loops=rolled on every GPU engine (issue 46): a forward-only kernel whose tape's time loop is
// written once and run (gpu/codegen/rolling.h) returns the bits of the kernel with every step written out:
// the plain kernel without Greeks its value and stderr, the tangent kernel its values (the plain kernel's)
// and its Greeks (to rounding: a carried tangent starts at 0 where the first step had none). Tapes whose
// loops draw 1, 2 and 3 normals a step (trips of 4, 2 and 4 steps: whole Philox calls), a step count that
// leaves iterations after the loop, one and three markets; and with config loop_trip=step (one step a trip,
// the Philox call and Box-Muller pair carried from trip to trip) the bits of trips of whole calls.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "api/registry.h"
#include "gpu/codegen/emit.h"
#include "planner/loops.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

class Loops : public ::testing::TestWithParam<std::string> {};

struct Case {
  const char* product;
  products::ProductParams params;
  std::vector<int> markets;
};

TEST_P(Loops, RolledKernelsGiveTheWrittenOutBits) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  const KernelConfig base = defaultConfig(entry.name);
  if (!findConfigField("loops") || !fieldAppliesTo(*findConfigField("loops"), entry.name))
    GTEST_SKIP() << entry.name << " writes no GPU kernels: config loops does not apply";
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Case cases[] = {{"asian", {{"steps", 13}}, {1, 3}},  // 3 trips of 4, one iteration after the loop
                        {"heston", {{"steps", 7}}, {1}},       // 2 draws a step: trips of 2
                        {"basket", {{"steps", 6}, {"assets", 3}}, {3}},  // 3 draws a step: trips of 4
                        {"barrier", {{"steps", 9}}, {1}}};
  for (const Case& c : cases) {
    const Tape t = products::byName(c.product, c.params);
    ASSERT_TRUE(findLoop(t).found()) << c.product;
    for (const int markets : c.markets) {
      std::vector<std::vector<double>> in(static_cast<size_t>(markets), t.inputDefaults);
      for (int m = 1; m < markets; ++m) in[m][0] *= 1.0 + 0.05 * m;
      for (const KernelKind kind : {KernelKind::Plain, KernelKind::Tangent}) {
        KernelOptions o;
        o.precision = Precision::F32;
        o.markets = markets;
        o.kind = kind;
        o.greeks = kind == KernelKind::Tangent;
        for (int k = 1; k < t.numInputs() && markets > 1; ++k) o.sharedInputs.push_back(k);
        o.config = base;
        o.config.loopsRolled = false;
        KernelOptions r = o;
        r.config.loopsRolled = true;
        const std::string what = std::string(c.product) + " " + toString(kind) + " x" + std::to_string(markets);
        EXPECT_NE(emitKernel(t, r, dialectByName(entry.name == "vulkan" ? "glsl" : entry.name)).source.find("the time loop:"),
                  std::string::npos)
            << what;
        KernelOptions step = r;  // one step a trip, the draws carried (loop_trip=step)
        step.config.loopTripStep = true;
        const std::string stepSource = emitKernel(t, step, dialectByName(entry.name == "vulkan" ? "glsl" : entry.name)).source;
        EXPECT_NE(stepSource.find("trips of 1 step(s)"), std::string::npos) << what << ": loop_trip=step";
        std::unique_ptr<Kernel> written = engine->compile(t, o), rolled = engine->compile(t, r), stepped = engine->compile(t, step);
        if (!caps.usable) continue;  // compile-only: compiling is the test
        const RunResult a = written->run(in, 777, 5), b = rolled->run(in, 777, 5), s = stepped->run(in, 777, 5);
        for (int m = 0; m < markets; ++m) {
          const MarketResult &x = a.markets[m], &y = b.markets[m], &z = s.markets[m];
          // One-step trips: the same operations as trips of whole Philox calls, the same bits, Greeks too.
          EXPECT_TRUE(testutil::identicalBits(y.value, z.value)) << what << " market " << m << " loop_trip=step";
          EXPECT_TRUE(testutil::identicalBits(y.valueStderr, z.valueStderr)) << what << " market " << m << " loop_trip=step";
          for (size_t k = 0; k < y.greeks.size(); ++k)
            EXPECT_TRUE(testutil::identicalBits(y.greeks[k], z.greeks[k])) << what << " market " << m << " loop_trip=step d/d "
                                                                           << t.inputNames[k];
          EXPECT_TRUE(testutil::identicalBits(x.value, y.value)) << what << " market " << m << ": "
                                                                 << testutil::g17(x.value) << " vs " << testutil::g17(y.value);
          EXPECT_TRUE(testutil::identicalBits(x.valueStderr, y.valueStderr)) << what << " market " << m;
          for (size_t k = 0; k < x.greeks.size(); ++k)  // a carried tangent starts at 0 where the step's did not exist
            EXPECT_TRUE(x.greeks[k] == y.greeks[k] || (std::isnan(x.greeks[k]) && std::isnan(y.greeks[k])) ||
                        std::fabs(x.greeks[k] - y.greeks[k]) <= 1e-6 * std::fabs(x.greeks[k]))
                << what << " market " << m << " d/d " << t.inputNames[k] << ": " << testutil::g17(x.greeks[k]) << " vs "
                << testutil::g17(y.greeks[k]);
        }
      }
    }
  }
}

// A register kernel whose middle segments are alike (the periodic strategy) writes them once and runs them in
// a loop forward and in reverse (gpu/codegen/rolling.h): its value, Greeks and stderrs are the plain
// kernel's bits, as the same plan written out gives them. Draws redrawn and stored; 1, 2 and 3 draws a step;
// one market, and several (the market loop inside each trip, the bookmarks' rows in one array).
TEST_P(Loops, RolledSegmentsGiveThePlainBits) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  if (!fieldAppliesTo(*findConfigField("loops"), entry.name))
    GTEST_SKIP() << entry.name << " writes no GPU kernels: config loops does not apply";
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Case cases[] = {{"asian", {{"steps", 26}}, {1, 3}},  // segments of 4 steps; 2 after the rolled ones
                        {"heston", {{"steps", 12}}, {1, 3}},
                        {"basket", {{"steps", 20}, {"assets", 3}}, {1, 2}},
                        {"barrier", {{"steps", 17}}, {1, 3}}};
  for (const Case& c : cases) {
    const Tape t = products::byName(c.product, c.params);
    for (const int markets : c.markets) {  // several: the market loop inside each trip, the first input differing
      std::vector<std::vector<double>> in(static_cast<size_t>(markets), t.inputDefaults);
      for (int m = 1; m < markets; ++m) in[m][0] *= 1.0 + 0.05 * m;
      KernelOptions plain;
      plain.precision = Precision::F32;
      plain.config = defaultConfig(entry.name);
      plain.config.loopsRolled = true;
      plain.markets = markets;
      for (int k = 1; k < t.numInputs() && markets > 1; ++k) plain.sharedInputs.push_back(k);
      const std::unique_ptr<Kernel> p = engine->compile(t, plain);
      const RunResult want = caps.usable ? p->run(in, 555, 9) : RunResult{};
      for (const DrawSource draws : {DrawSource::Redraw, DrawSource::Stored}) {
        KernelOptions o = plain;
        o.kind = KernelKind::Register;
        PlanOptions po;
        po.segments = 5;
        o.plan = planPeriodic(t, po);
        o.config.draws = draws;
        const std::string what = std::string(c.product) + " x" + std::to_string(markets) +
                                 (draws == DrawSource::Stored ? " stored" : " redrawn");
        const std::string source = emitKernel(t, o, dialectByName(entry.name == "vulkan" ? "glsl" : entry.name)).source;
        ASSERT_NE(source.find(", last first"), std::string::npos) << what << ": not rolled\n" << source.substr(0, 600);
        const std::unique_ptr<Kernel> k = engine->compile(t, o);
        if (!caps.usable) continue;
        const RunResult got = k->run(in, 555, 9);
        for (int m = 0; m < markets; ++m) {
          const MarketResult &x = want.markets[m], &y = got.markets[m];
          const std::string at = what + " market " + std::to_string(m);
          EXPECT_TRUE(testutil::identicalBits(x.value, y.value)) << at << ": " << testutil::g17(x.value) << " vs " << testutil::g17(y.value);
          EXPECT_TRUE(testutil::identicalBits(x.valueStderr, y.valueStderr)) << at;
          for (size_t k2 = 0; k2 < x.greeks.size(); ++k2) {
            EXPECT_TRUE(testutil::identicalBits(x.greeks[k2], y.greeks[k2]))
                << at << " d/d " << t.inputNames[k2] << ": " << testutil::g17(x.greeks[k2]) << " vs " << testutil::g17(y.greeks[k2]);
            EXPECT_TRUE(testutil::identicalBits(x.greeksStderr[k2], y.greeksStderr[k2])) << at << " d/d " << t.inputNames[k2];
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Loops, ::testing::ValuesIn(engineNames()), testutil::engineParamName);

}  // namespace
