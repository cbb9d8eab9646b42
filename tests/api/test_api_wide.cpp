// The wide products (tape/products/wide.cpp, and the LMM) on every engine: each, small, with its
// plain kernel against every checkpointed kind under a flat plan (window) and a nested one
// (two-level), scratch kernels in both layouts, bit for bit (==). Compile-only engines compile them.
#include <gtest/gtest.h>

#include <iostream>

#include "api/registry.h"
#include "planner/nested.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

// Each wide product at a few steps: its shapes and ops, kernels that compile in seconds on lavapipe and PoCL.
std::vector<Tape> smallWide() {
  using products::byName;
  return {byName("bucketed", {{"steps", 8}, {"buckets", 8}}),
          byName("localvol", {{"steps", 3}, {"strikes", 5}, {"times", 3}}),
          byName("hestonbasket", {{"assets", 3}, {"steps", 3}}),
          byName("lmm", {{"forwards", 8}})};
}

class Wide : public ::testing::TestWithParam<std::string> {};

TEST_P(Wide, CheckpointedEqualsPlainFlatNestedAndBothLayouts) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const bool run = caps.usable && !caps.compileOnly;
  int compared = 0, compiled = 0;
  for (const Tape& tape : smallWide()) {
    SCOPED_TRACE(tape.name);
    ASSERT_EQ(validate(tape), "");
    const std::vector<std::vector<double>> in{tape.inputDefaults};
    KernelOptions plain;
    plain.precision = caps.defaultPrecision;
    std::unique_ptr<Kernel> plainKernel = engine->compile(tape, plain);
    ++compiled;
    const MarketResult p = run ? plainKernel->run(in, 200, 5).markets.at(0) : MarketResult{};
    PlanOptions o;
    o.segments = 4;
    o.innerSegments = 2;
    const std::vector<Plan> plans{makeStrategyPlan("window", tape, o), planTwoLevel(tape, o)};
    for (KernelKind kind : caps.kinds) {
      if (kind == KernelKind::Plain || kind == KernelKind::Tangent) continue;
      for (const Plan& plan : plans)
        for (ScratchLayout layout : {ScratchLayout::SoA, ScratchLayout::AoS}) {
          if (kind != KernelKind::Scratch && layout == ScratchLayout::AoS) continue;  // a layout is scratch's alone
          KernelOptions k = plain;
          k.kind = kind;
          k.plan = plan;
          k.layout = layout;
          std::unique_ptr<Kernel> ck = engine->compile(tape, k);
          ++compiled;
          if (!run) continue;
          testutil::expectSameMarket(p, ck->run(in, 200, 5).markets.at(0),
                                     std::string(toString(kind)) + " " + plan.strategy + " " + toString(layout));
          ++compared;
        }
    }
  }
  std::cout << entry.name << ": " << compiled << " wide kernels compiled, " << compared
            << " checkpointed results compared with plain" << std::endl;
  EXPECT_GT(compiled, 0);
  if (run) {
    EXPECT_GT(compared, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Wide, ::testing::ValuesIn(engineNames()), testutil::engineParamName);

}  // namespace
