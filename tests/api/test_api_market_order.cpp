// Market-sequential kernels (MarketOrder::Sequential) on every GPU engine: flat
// and nested plans, register and scratch kinds, three markets in one dispatch;
// each market's value, Greeks and stderrs equal the engine's plain single-market
// kernel bit for bit. Compile-only engines compile them.
#include <gtest/gtest.h>

#include <algorithm>
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
        k.config.marketOrder = MarketOrder::Sequential;
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

// config shared_inputs: three markets that differ in one input (a ladder) or two, the others shared
// (KernelOptions::sharedInputs from sharedInputsOf): every kind, both market orders, the market loop
// and copies; each market equals the engine's plain single-market kernel bit for bit, and a run whose
// markets differ in a shared input is refused (tests/codegen: that the kernel shares them).
TEST_P(MarketOrders, SharedInputsKeepEveryBit) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const bool run = caps.usable && !caps.compileOnly;
  RandomTapeOptions ro;
  ro.nodes = 70;
  ro.draws = 8;
  ro.inputs = 4;
  ro.scatterInputs = true;
  int compared = 0;
  for (const Tape& tape : {products::asianCall(10), randomTape(23, ro)}) {
    std::vector<std::vector<double>> ladder(3, tape.inputDefaults);  // input 0 differs, then the last too
    ladder[1][0] *= 1.1;
    ladder[2][0] *= 0.9;
    if (tape.name.rfind("asian", 0) != 0) ladder[2][tape.numInputs() - 1] *= 0.95;
    const std::vector<int> shared = sharedInputsOf(ladder, 3);
    ASSERT_FALSE(shared.empty()) << tape.name;
    ASSERT_EQ(shared.front(), 1) << tape.name;
    KernelOptions plain;
    plain.precision = caps.defaultPrecision;
    std::unique_ptr<Kernel> single = engine->compile(tape, plain);
    std::vector<RunResult> singles, singleTangents;  // the tangent kind's Greeks are its own (forward mode)
    KernelOptions tangent = plain;
    tangent.kind = KernelKind::Tangent;
    const bool hasTangent = std::find(caps.kinds.begin(), caps.kinds.end(), KernelKind::Tangent) != caps.kinds.end();
    std::unique_ptr<Kernel> singleTangent = hasTangent ? engine->compile(tape, tangent) : nullptr;
    if (run)
      for (const auto& market : ladder) {
        singles.push_back(single->run({market}, 600, 5));
        if (hasTangent) singleTangents.push_back(singleTangent->run({market}, 600, 5));
      }
    PlanOptions po;
    po.segments = 3;
    const Plan window = makeStrategyPlan("window", tape, po);
    struct Variant {
      KernelKind kind;
      MarketOrder order;
      MarketCode code;
    };
    for (const Variant v : {Variant{KernelKind::Plain, MarketOrder::Sequential, MarketCode::Copies},
                            Variant{KernelKind::Register, MarketOrder::Sequential, MarketCode::Loop},
                            Variant{KernelKind::Register, MarketOrder::Joint, MarketCode::Copies},
                            Variant{KernelKind::Scratch, MarketOrder::Sequential, MarketCode::Copies},
                            Variant{KernelKind::Tangent, MarketOrder::Sequential, MarketCode::Copies}}) {
      if (std::find(caps.kinds.begin(), caps.kinds.end(), v.kind) == caps.kinds.end()) continue;
      KernelOptions k = plain;
      k.kind = v.kind;
      if (v.kind == KernelKind::Register || v.kind == KernelKind::Scratch) k.plan = window;
      k.markets = 3;
      k.config.marketOrder = v.order;
      k.config.markets = v.code;
      k.sharedInputs = shared;
      const std::string what = tape.name + " " + toString(v.kind) + " " + toString(v.order) +
                               (v.code == MarketCode::Loop ? " loop" : "") + " shared inputs";
      std::unique_ptr<Kernel> fused = engine->compile(tape, k);
      if (!run) continue;
      const RunResult all = fused->run(ladder, 600, 5);
      for (size_t m = 0; m < ladder.size(); ++m) {
        RunResult picked = all;
        picked.markets = {all.markets[m]};
        testutil::expectSameBits(v.kind == KernelKind::Tangent ? singleTangents[m] : singles[m], picked,
                                 what + " market " + std::to_string(m));
        ++compared;
      }
      std::vector<std::vector<double>> other = ladder;
      other[1][shared.front()] *= 1.5;  // a shared input that now differs
      try {
        fused->run(other, 600, 5);
        ADD_FAILURE() << what << ": markets differing in a shared input were priced";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("differs between the markets of one dispatch"), std::string::npos)
            << e.what();
      }
    }
  }
  std::cout << entry.name << ": " << compared << " markets of shared-input kernels compared with plain" << std::endl;
  if (run) {
    EXPECT_GT(compared, 0);
  }
}

// The GPU engines: the market order is their emitter's (CPU engines price markets one by one).
std::vector<std::string> gpuEngineNames() {
  std::vector<std::string> out;
  for (const std::string& name : engineNames())
    if (name == "vulkan" || name == "opencl" || name == "cuda" || name == "hip") out.push_back(name);
  return out;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MarketOrders);  // a build without GPU engines
INSTANTIATE_TEST_SUITE_P(Engines, MarketOrders, ::testing::ValuesIn(gpuEngineNames()), testutil::engineParamName);

}  // namespace
