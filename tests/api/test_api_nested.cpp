// Nested plans on every engine: revolve, two-level and a random cut tree,
// register and scratch kinds, one and two markets, each bit-identical to the
// engine's plain kernel. Compile-only engines compile them.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "api/registry.h"
#include "planner/nested.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

// Segment s of `top` cut again: s odd as a chain of two parts, else into
// three parts with the middle one cut again.
Plan handNested(const Tape& t) {
  PlanOptions o;
  o.segments = 3;
  const Plan top = makeStrategyPlan("window", t, o);
  std::vector<CutTree> inner;
  for (int s = 0; s < top.segments(); ++s) {
    const int32_t lo = top.begin(s), len = top.end(s) - lo;
    CutTree c;
    if (len < 8) {
      inner.push_back(c);
      continue;
    }
    if (s % 2 == 1) {
      c.chain = true;
      c.cuts = {lo + len / 2};
    } else {
      c.cuts = {lo + len / 3, lo + 2 * len / 3};
      CutTree middle;
      middle.cuts = {lo + len / 2};
      c.inner = {CutTree{}, middle, CutTree{}};
    }
    inner.push_back(c);
  }
  return makePlan(t, top.bounds, "hand-nested", std::move(inner));
}

class Nested : public ::testing::TestWithParam<std::string> {};

TEST_P(Nested, EveryScheduleGivesPlainBits) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Precision prec = caps.defaultPrecision;
  RandomTapeOptions ro;
  ro.nodes = 90;
  ro.draws = 10;
  int compared = 0;
  for (const Tape& tape : {products::asianCall(12), randomTape(7, ro)}) {
    PlanOptions o;
    o.segments = 4;
    o.innerSegments = 3;
    std::vector<Plan> plans{planRevolve(tape, o), planTwoLevel(tape, o), handNested(tape)};
    for (const int markets : {1, 2}) {
      std::vector<std::vector<double>> in(static_cast<size_t>(markets), tape.inputDefaults);
      if (markets == 2) in[1][0] *= 1.1;
      KernelOptions plain;
      plain.precision = prec;
      plain.markets = markets;
      std::unique_ptr<Kernel> plainKernel = engine->compile(tape, plain);
      const bool run = caps.usable && !caps.compileOnly;
      const RunResult p = run ? plainKernel->run(in, 700, 5) : RunResult{};
      for (KernelKind kind : caps.kinds) {
        if (kind == KernelKind::Plain || kind == KernelKind::Tangent) continue;  // tangent has no plan: test_api_tangent.cpp
        for (const Plan& plan : plans) {
          ASSERT_TRUE(plan.nested()) << plan.strategy;
          KernelOptions k = plain;
          k.kind = kind;
          k.plan = plan;
          std::unique_ptr<Kernel> kernel = engine->compile(tape, k);
          if (!run) continue;
          testutil::expectSameBits(p, kernel->run(in, 700, 5),
                                   tape.name + " " + toString(kind) + " " + plan.strategy + " x" + std::to_string(markets));
          ++compared;
        }
      }
    }
  }
  std::cout << entry.name << ": " << compared << " nested kernels compared with plain" << std::endl;
  if (caps.usable && !caps.compileOnly) {
    EXPECT_GT(compared, 0);
  }
}

std::vector<std::string> enginesButMp() {  // every engine but reference-mp (the multiprecision interpreter)
  std::vector<std::string> out = engineNames();
  std::erase(out, "reference-mp");
  return out;
}

INSTANTIATE_TEST_SUITE_P(Engines, Nested, ::testing::ValuesIn(enginesButMp()), testutil::engineParamName);

}  // namespace
