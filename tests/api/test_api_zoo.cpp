// The product zoo (tape/products/zoo.cpp) and the wide products (tape/products/wide.cpp, and the LMM) on
// every engine: each product, small, with its plain kernel against every checkpointed kind under a flat plan
// (window) and nested ones (revolve, two-level; the wide ones two-level, their scratch kernels in both
// layouts), bit for bit. Compile-only engines compile them all.
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

// Each wide product at a few steps: its shapes and ops, kernels that compile in seconds on lavapipe and PoCL.
std::vector<Tape> smallWide() {
  using products::byName;
  return {byName("bucketed", {{"steps", 8}, {"buckets", 8}}),
          byName("localvol", {{"steps", 3}, {"strikes", 5}, {"times", 3}}),
          byName("hestonbasket", {{"assets", 3}, {"steps", 3}}),
          byName("lmm", {{"forwards", 8}})};
}

// How a suite cuts and runs its tapes.
struct Cuts {
  const char* what;       // "zoo", "wide": the summary line's word
  int innerSegments;      // two-level's sub-segments
  bool revolve;           // revolve's nested plan too
  bool bothLayouts;       // scratch kernels in SoA and AoS
  uint64_t paths, seed;
};

// Every checkpointed kind under each plan against the plain kernel, == on every number (compiled only where
// the engine cannot run).
void checkpointedEqualsPlain(const std::string& engineName, const std::vector<Tape>& tapes, const Cuts& c) {
  const EngineEntry& entry = findEngine(engineName);
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const bool run = caps.usable && !caps.compileOnly;
  int compared = 0, compiled = 0;
  for (const Tape& tape : tapes) {
    SCOPED_TRACE(tape.name);
    ASSERT_EQ(validate(tape), "");
    const std::vector<std::vector<double>> in{tape.inputDefaults};
    KernelOptions plain;
    plain.precision = caps.defaultPrecision;
    std::unique_ptr<Kernel> plainKernel = engine->compile(tape, plain);
    ++compiled;
    const MarketResult p = run ? plainKernel->run(in, c.paths, c.seed).markets.at(0) : MarketResult{};
    if (run) {
      ASSERT_TRUE(std::isfinite(p.value)) << "value " << p.value;
      for (double g : p.greeks) ASSERT_FALSE(std::isnan(g));
    }
    PlanOptions o;
    o.segments = 4;
    o.innerSegments = c.innerSegments;
    std::vector<Plan> plans{makeStrategyPlan("window", tape, o)};
    if (c.revolve) plans.push_back(planRevolve(tape, o));
    plans.push_back(planTwoLevel(tape, o));
    for (KernelKind kind : caps.kinds) {
      if (kind == KernelKind::Plain || kind == KernelKind::Tangent) continue;
      for (const Plan& plan : plans)
        for (ScratchLayout layout : {ScratchLayout::SoA, ScratchLayout::AoS}) {
          if (layout == ScratchLayout::AoS && (kind != KernelKind::Scratch || !c.bothLayouts)) continue;  // scratch's alone
          KernelOptions k = plain;
          k.kind = kind;
          k.plan = plan;
          k.config.layout = layout;
          std::unique_ptr<Kernel> ck = engine->compile(tape, k);
          ++compiled;
          if (!run) continue;
          testutil::expectSameMarket(p, ck->run(in, c.paths, c.seed).markets.at(0),
                                     std::string(toString(kind)) + " " + plan.strategy +
                                         (c.bothLayouts ? std::string(" ") + toString(layout) : ""));
          ++compared;
        }
    }
  }
  std::cout << entry.name << ": " << compiled << " " << c.what << " kernels compiled, " << compared
            << " checkpointed results compared with plain" << std::endl;
  EXPECT_GT(compiled, 0);
  if (run) {
    EXPECT_GT(compared, 0);
  }
}

class Zoo : public ::testing::TestWithParam<std::string> {};
class Wide : public ::testing::TestWithParam<std::string> {};

TEST_P(Zoo, CheckpointedEqualsPlainFlatAndNested) {
  checkpointedEqualsPlain(GetParam(), smallZoo(), {"zoo", 3, true, false, 300, 11});
}

TEST_P(Wide, CheckpointedEqualsPlainFlatNestedAndBothLayouts) {
  checkpointedEqualsPlain(GetParam(), smallWide(), {"wide", 2, false, true, 200, 5});
}

INSTANTIATE_TEST_SUITE_P(Engines, Zoo, ::testing::ValuesIn(engineNames()), testutil::engineParamName);
INSTANTIATE_TEST_SUITE_P(Engines, Wide, ::testing::ValuesIn(engineNames()), testutil::engineParamName);

}  // namespace
