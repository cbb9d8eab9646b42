// Per-value plans (planner/plan.h: an arbitrary kept set, the cuts only the reverse sweep's blocks) on every
// engine that runs them, the GPU engines included (issue 47): each a register kernel whose value, Greeks and
// standard errors are the plain kernel's bits. Enzyme's min-cut and its weighted form, a scattered kept set,
// nothing kept (each block recomputes from the inputs, reaching back past its own start), one and three
// markets (the market loop's adjoints that outlive a block in arrays), draws redrawn, stored and prefilled
// (a scattered kept set keeps draws too).
// A per-value plan asked of the scratch kind is refused in one line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/registry.h"
#include "engine/engine.h"
#include "planner/pervalue.h"
#include "planner/plan.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

class PerValue : public ::testing::TestWithParam<std::string> {};

struct Case {
  const char* product;
  products::ProductParams params;
  int markets;
  bool draws;  // GPU engines: each way of drawing (redraw, stored, prefill), two of the plans
};

std::vector<std::pair<std::string, Plan>> plans(const Tape& t) {
  PlanOptions po;
  po.segments = 4;
  std::vector<std::pair<std::string, Plan>> out;
  out.emplace_back("mincut", planMinCut(t, po));
  out.emplace_back("mincut-weighted", planMinCutWeighted(t, po));
  const std::vector<int32_t> bounds = makeStrategyPlan("uniform", t, po).bounds;
  std::vector<int32_t> scattered;
  for (int32_t i = 0; i < t.size(); i += 7) scattered.push_back(i);
  out.emplace_back("every 7th node kept", makePerValuePlan(t, bounds, scattered, "test-scattered"));
  out.emplace_back("nothing kept", makePerValuePlan(t, bounds, {}, "test-nothing"));
  return out;
}

void expectSameBits(const RunResult& want, const RunResult& got, const Tape& t, const std::string& what) {
  ASSERT_EQ(want.markets.size(), got.markets.size()) << what;
  for (size_t m = 0; m < want.markets.size(); ++m) {
    const MarketResult &x = want.markets[m], &y = got.markets[m];
    const std::string at = what + " market " + std::to_string(m);
    EXPECT_TRUE(testutil::identicalBits(x.value, y.value)) << at << ": " << testutil::g17(x.value) << " vs " << testutil::g17(y.value);
    EXPECT_TRUE(testutil::identicalBits(x.valueStderr, y.valueStderr)) << at;
    ASSERT_EQ(x.greeks.size(), y.greeks.size()) << at;
    for (size_t k = 0; k < x.greeks.size(); ++k) {
      EXPECT_TRUE(testutil::identicalBits(x.greeks[k], y.greeks[k]))
          << at << " d/d " << t.inputNames[k] << ": " << testutil::g17(x.greeks[k]) << " vs " << testutil::g17(y.greeks[k]);
      EXPECT_TRUE(testutil::identicalBits(x.greeksStderr[k], y.greeksStderr[k])) << at << " d/d " << t.inputNames[k];
    }
  }
}

TEST_P(PerValue, RegisterKernelsGiveThePlainBits) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  if (!caps.perValuePlans) GTEST_SKIP() << entry.name << " does not run per-value plans";
  if (entry.name == "reference-mp")  // minutes here; its per-value blocks are the reference's (planner tests)
    GTEST_SKIP() << "reference-mp interprets the reference's schedule: PlannerPerValue runs it";
  const bool gpu = fieldAppliesTo(*findConfigField("draws"), entry.name);
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Case cases[] = {{"asian", {{"steps", 12}}, 1, false},
                        {"heston", {{"steps", 8}}, 1, true},
                        {"basket", {{"steps", 5}, {"assets", 3}}, 3, false}};
  for (const Case& c : cases) {
    const Tape t = products::byName(c.product, c.params);
    {
      const int markets = c.markets;
      std::vector<std::vector<double>> in(static_cast<size_t>(markets), t.inputDefaults);
      for (int m = 1; m < markets; ++m) in[m][0] *= 1.0 + 0.05 * m;
      KernelOptions plain;
      plain.precision = gpu ? Precision::F32 : Precision::F64;
      plain.markets = markets;
      plain.config = defaultConfig(entry.name, false, markets);
      const std::unique_ptr<Kernel> p = engine->compile(t, plain);
      const RunResult want = caps.usable ? p->run(in, 4099, 21) : RunResult{};
      for (const auto& [name, plan] : plans(t)) {
        std::vector<DrawSource> draws{plain.config.draws};
        if (gpu && c.draws && (name == "mincut" || name == "nothing kept"))
          draws = {DrawSource::Redraw, DrawSource::Stored, DrawSource::Prefill};
        for (const DrawSource d : draws) {
          KernelOptions o = plain;
          o.kind = KernelKind::Register;
          o.plan = plan;
          o.config.draws = d;
          const std::string what = std::string(c.product) + " " + name + " x" + std::to_string(markets) +
                                   (gpu ? std::string(" draws=") + (d == DrawSource::Redraw ? "redraw" : d == DrawSource::Stored ? "stored" : "prefill") : "");
          ASSERT_TRUE(o.plan.perValue) << what;
          std::unique_ptr<Kernel> k;
          ASSERT_NO_THROW(k = engine->compile(t, o)) << what;
          if (!caps.usable) continue;
          expectSameBits(want, k->run(in, 4099, 21), t, what);
        }
      }
    }
  }
}

TEST_P(PerValue, TheScratchKindRefusesThemInOneLine) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  if (!fieldAppliesTo(*findConfigField("draws"), entry.name)) GTEST_SKIP() << entry.name << " writes no GPU kernels";
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Tape t = products::byName("asian", {{"steps", 8}});
  PlanOptions po;
  po.segments = 3;
  KernelOptions o;
  o.precision = Precision::F32;
  o.config = defaultConfig(entry.name);
  o.kind = KernelKind::Scratch;
  o.plan = planMinCut(t, po);
  try {
    engine->compile(t, o);
    FAIL() << entry.name << " compiled a per-value plan as a scratch kernel";
  } catch (const EngineUnavailable& e) {
    EXPECT_EQ(std::string(e.what()), entry.name + ": a per-value plan (strategy mincut) runs as a register kernel, not "
                                                  "scratch: it keeps values, not segments' bookmarks (--kernel register)");
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, PerValue, ::testing::ValuesIn(engineNames()), testutil::engineParamName);

}  // namespace
