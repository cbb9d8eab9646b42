// The product zoo (tape/products/zoo.cpp) on every engine: each product, small, with its plain
// kernel against every checkpointed kind under a flat plan (window) and nested ones (revolve,
// two-level), bit for bit. Compile-only engines compile them all.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "api/registry.h"
#include "planner/nested.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

// Every zoo product, a few steps each: the same ops and shapes as the full tapes, kernels that
// compile in seconds on lavapipe and PoCL.
std::vector<Tape> smallZoo() {
  using products::byName;
  return {byName("heston", {{"steps", 6}}),
          byName("cev", {{"steps", 6}}),
          byName("barrier", {{"steps", 6}}),
          byName("barrier", {{"steps", 6}, {"smoothing", 0.01}}),
          byName("lookback", {{"steps", 6}}),
          byName("lmm", {{"forwards", 6}}),
          byName("worstof", {{"steps", 2}, {"assets", 20}}),
          byName("neural", {{"steps", 3}, {"hidden", 4}}),
          byName("heat", {{"steps", 6}, {"points", 9}})};
}

class Zoo : public ::testing::TestWithParam<std::string> {};

TEST_P(Zoo, CheckpointedEqualsPlainFlatAndNested) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const bool run = caps.usable && !caps.compileOnly;
  int compared = 0, compiled = 0;
  for (const Tape& tape : smallZoo()) {
    SCOPED_TRACE(tape.name);
    ASSERT_EQ(validate(tape), "");
    const std::vector<std::vector<double>> in{tape.inputDefaults};
    KernelOptions plain;
    plain.precision = caps.defaultPrecision;
    std::unique_ptr<Kernel> plainKernel = engine->compile(tape, plain);
    ++compiled;
    const MarketResult p = run ? plainKernel->run(in, 300, 11).markets.at(0) : MarketResult{};
    if (run) {
      ASSERT_TRUE(std::isfinite(p.value)) << "value " << p.value;
      for (double g : p.greeks) ASSERT_FALSE(std::isnan(g));
    }
    PlanOptions o;
    o.segments = 4;
    o.innerSegments = 3;
    const std::vector<Plan> plans{makeStrategyPlan("window", tape, o), planRevolve(tape, o), planTwoLevel(tape, o)};
    for (KernelKind kind : caps.kinds) {
      if (kind == KernelKind::Plain || kind == KernelKind::Tangent) continue;
      for (const Plan& plan : plans) {
        KernelOptions k = plain;
        k.kind = kind;
        k.plan = plan;
        std::unique_ptr<Kernel> ck = engine->compile(tape, k);
        ++compiled;
        if (!run) continue;
        testutil::expectSameMarket(p, ck->run(in, 300, 11).markets.at(0),
                                   std::string(toString(kind)) + " " + plan.strategy);
        ++compared;
      }
    }
  }
  std::cout << entry.name << ": " << compiled << " zoo kernels compiled, " << compared
            << " checkpointed results compared with plain" << std::endl;
  EXPECT_GT(compiled, 0);
  if (run) {
    EXPECT_GT(compared, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Zoo, ::testing::ValuesIn(engineNames()), testutil::engineParamName);

}  // namespace
