// Market-sequential kernels (MarketOrder::Sequential) on every GPU engine: flat
// and nested plans, register and scratch kinds, three markets in one dispatch;
// each market's value, Greeks and stderrs equal the engine's plain single-market
// kernel bit for bit. Compile-only engines compile them.
#include <gtest/gtest.h>

#include <iostream>

#include "api/registry.h"
#include "planner/nested.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

class MarketOrders : public ::testing::TestWithParam<std::string> {};

TEST_P(MarketOrders, SequentialEqualsPlainSingleMarket) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const bool run = caps.usable && !caps.compileOnly;
  RandomTapeOptions ro;
  ro.nodes = 80;
  ro.draws = 9;
  int compared = 0;
  for (const Tape& tape : {products::asianCall(12), randomTape(11, ro)}) {
    std::vector<std::vector<double>> ladder(3, tape.inputDefaults);
    ladder[1][0] *= 1.1;
    ladder[2][tape.numInputs() - 1] *= 0.9;
    KernelOptions plain;
    plain.precision = caps.defaultPrecision;
    std::unique_ptr<Kernel> single = engine->compile(tape, plain);
    std::vector<RunResult> singles;
    if (run)
      for (const auto& market : ladder) singles.push_back(single->run({market}, 700, 3));
    PlanOptions po;
    po.segments = 4;
    po.innerSegments = 2;
    std::vector<Plan> plans{planTwoLevel(tape, po)};  // nested: leaves under an inner block's bookmarks
    if (tape.name.rfind("asian", 0) == 0) plans.push_back(makeStrategyPlan("window", tape, po));  // flat
    for (const Plan& plan : plans) {
      for (KernelKind kind : caps.kinds) {
        if (kind != KernelKind::Register && kind != KernelKind::Scratch) continue;
        KernelOptions k = plain;
        k.kind = kind;
        k.plan = plan;
        k.markets = 3;
        k.marketOrder = MarketOrder::Sequential;
        std::unique_ptr<Kernel> fused = engine->compile(tape, k);
        if (!run) continue;
        const RunResult all = fused->run(ladder, 700, 3);
        const std::string what = tape.name + " " + toString(kind) + " " + plan.strategy + " sequential";
        for (size_t m = 0; m < ladder.size(); ++m) {
          RunResult picked = all;
          picked.markets = {all.markets[m]};
          testutil::expectSameBits(singles[m], picked, what + " market " + std::to_string(m));
          ++compared;
        }
      }
    }
  }
  std::cout << entry.name << ": " << compared << " sequential markets compared with plain" << std::endl;
  if (run) {
    EXPECT_GT(compared, 0);
  }
}

// The GPU engines: the market order is their emitter's (CPU engines price markets one by one).
std::vector<std::string> engineNames() {
  std::vector<std::string> out;
  for (const auto& e : engineRegistry())
    if (e.name == "vulkan" || e.name == "opencl" || e.name == "cuda" || e.name == "hip") out.push_back(e.name);
  return out;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MarketOrders);  // a build without GPU engines
INSTANTIATE_TEST_SUITE_P(Engines, MarketOrders, ::testing::ValuesIn(engineNames()), testutil::engineParamName);

}  // namespace
