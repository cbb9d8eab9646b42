// cpu-jit's exactness promises: the same draws as tape/philox.h; the
// register-checkpointed kernel == the plain kernel, bit for bit, for every
// strategy and segment count; the same bits whatever the thread count, the
// market batching, or how many times a call is repeated.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "planner/strategies.h"
#include "reference/cpujit/probe.h"
#include "tape/philox.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tests/cpujit/cpujit_test_util.h"

using namespace tapelab;
using namespace cpujit_test;

namespace {

KernelOptions plainKernel(Precision p = Precision::F64) {
  KernelOptions o;
  o.precision = p;
  return o;
}

KernelOptions registerKernel(const Plan& plan, Precision p = Precision::F64) {
  KernelOptions o;
  o.precision = p;
  o.kind = KernelKind::Register;
  o.plan = plan;
  return o;
}

std::string describe(const Tape& t, const KernelOptions& o) {
  return t.name + " " + toString(o.kind) + (o.kind == KernelKind::Register ? " " + o.plan.strategy + "/" +
                                                                                 std::to_string(o.plan.segments())
                                                                           : "") +
         " " + toString(o.precision);
}

// For each tape: one plain kernel and the given register kernels, all run
// with the same paths and seed; every register result must be the plain one.
void expectRegisterEqualsPlain(const std::vector<std::pair<const Tape*, std::vector<Plan>>>& cases, Precision p,
                               uint64_t paths, uint64_t seed,
                               const EngineSettings& settings = engineSettingsFromEnvironment(),
                               int chunk = KernelConfig{}.jitChunk, int part = KernelConfig{}.jitPart) {
  std::vector<Job> jobs;
  for (const auto& [t, plans] : cases) {
    jobs.push_back({t, plainKernel(p)});
    for (const Plan& plan : plans) jobs.push_back({t, registerKernel(plan, p)});
  }
  for (Job& job : jobs) {  // config jit.chunk, jit.part
    job.options.config.jitChunk = chunk;
    job.options.config.jitPart = part;
  }
  const auto kernels = compileAll(jobs, settings);
  size_t j = 0;
  for (const auto& [t, plans] : cases) {
    const RunResult plain = kernels[j++]->run({t->inputDefaults}, paths, seed);
    EXPECT_TRUE(std::isfinite(plain.markets[0].value)) << t->name;
    for (size_t i = 0; i < plans.size(); ++i, ++j) {
      const RunResult reg = kernels[j]->run({t->inputDefaults}, paths, seed);
      expectSameBits(plain, reg, describe(*t, jobs[j].options));
    }
  }
}

}  // namespace

// u is exact in both precisions, so it must be the very same number; z is tape/philox.h's Box-Muller
// draw in the same operations and order, except that the radius's log is xsimd's instead of libm's
// (a few ulp apart): z within a few ulp of |z|'s scale, and the unit vector's part exact (every draw
// whose rho comes out the same has the same bits: most of them).
TEST(CpuJitDraws, SameUniformsAndNormalsAsPhilox) {
  CPUJIT_REQUIRE();
  const EngineSettings settings = engineSettingsFromEnvironment();
  const uint64_t firsts[] = {0, 1000, (uint64_t{1} << 32) - 2, 0x123456789abcull};
  for (Precision p : {Precision::F64, Precision::F32}) {
    int same = 0, all = 0;
    for (uint64_t seed : {uint64_t{0}, uint64_t{42}, uint64_t{0xfedcba9876543210ull}}) {
      for (uint64_t first : firsts) {
        for (uint32_t k : {0u, 1u, 2u, 7u, 250u, 100000u}) {
          const std::vector<JitDraw> d = cpuJitDraws(settings, p, seed, first, k);
          ASSERT_GE(d.size(), 1u);
          for (size_t l = 0; l < d.size(); ++l) {
            const uint64_t path = first + l;
            const uint32_t w = drawWord(seed, path, k);
            const double u = p == Precision::F64 ? uniformFromWord<double>(w) : uniformFromWord<float>(w);
            const double z = p == Precision::F64 ? drawNormal<double>(seed, path, k) : drawNormal<float>(seed, path, k);
            const std::string where = std::string(toString(p)) + " seed " + std::to_string(seed) + " path " +
                                      std::to_string(path) + " k " + std::to_string(k);
            EXPECT_EQ(d[l].u, u) << where;
            const double eps = p == Precision::F64 ? std::numeric_limits<double>::epsilon()
                                                   : std::numeric_limits<float>::epsilon();
            EXPECT_NEAR(d[l].z, z, 4 * eps * std::max(1.0, std::fabs(z))) << where << ": " << g17(d[l].z) << " vs " << g17(z);
            same += d[l].z == z;
            ++all;
          }
        }
      }
    }
    EXPECT_GT(same, all / 2) << toString(p) << ": most draws should have the reference's bits (" << same << " of " << all << ")";
  }
}

// The 120-step Asian under every strategy (16 segments), window at 2 and 64;
// the 252-step Asian and a basket in both precisions.
TEST(CpuJitExact, RegisterEqualsPlainOnProducts) {
  CPUJIT_REQUIRE();
  const Tape asian120 = products::asianCall(120);
  std::vector<Plan> asianPlans;
  for (const StrategyEntry& s : strategies()) asianPlans.push_back(makeStrategyPlan(s.name, asian120, {16, 0}));
  for (int segs : {2, 64}) asianPlans.push_back(makeStrategyPlan("window", asian120, {segs, 0}));
  const Tape asian252 = products::asianCall(252);
  const Tape basket = products::basketCall(3, 24);
  expectRegisterEqualsPlain({{&asian120, asianPlans},
                             {&asian252, {makeStrategyPlan("window", asian252, {16, 0})}},
                             {&basket, {makeStrategyPlan("window", basket, {4, 0}),
                                        makeStrategyPlan("uniform", basket, {7, 0})}}},
                            Precision::F64, 3001, 42);
  expectRegisterEqualsPlain({{&asian252, {makeStrategyPlan("window", asian252, {16, 0})}},
                             {&basket, {makeStrategyPlan("window", basket, {4, 0})}}},
                            Precision::F32, 3001, 42);
}

// Random tapes (kinks, shared draws, scattered inputs, wild values with
// NaN/Inf) under several plans; also with generated functions of at most 40
// nodes in translation units of about 100, so the chunked plain kernel, the
// chunked recompute of long segments and the split compile are exercised as
// well as the one-function forms.
TEST(CpuJitExact, RegisterEqualsPlainOnRandomTapes) {
  CPUJIT_REQUIRE();
  RandomTapeOptions o;
  o.nodes = 300;
  o.inputs = 4;
  o.draws = 20;
  const Tape a = randomTape(1, o);
  o.drawIndices = 8;  // draws read by several nodes
  o.scatterInputs = true;
  const Tape b = randomTape(2, o);
  RandomTapeOptions w;
  w.nodes = 120;
  w.wellConditioned = false;  // NaN and Inf on some paths
  const Tape wild = randomTape(7, w);
  auto plans = [](const Tape& t, bool all) {
    std::vector<Plan> p = {makeStrategyPlan("window", t, {5, 0}), makePlan(t, {0, 1, t.size() - 1, t.size()}, "edges")};
    if (all) p.push_back(makeStrategyPlan("optimal", t, {3, 0}));
    return p;
  };
  {
    SCOPED_TRACE("jit.chunk 40, jit.part 100");  // several translation units too
    const EngineSettings settings = engineSettingsFromEnvironment();
    expectRegisterEqualsPlain({{&a, plans(a, false)}, {&b, plans(b, false)}}, Precision::F64, 1100, 9, settings, 40, 100);
    expectRegisterEqualsPlain({{&a, {plans(a, false)[0]}}}, Precision::F32, 1100, 9, settings, 40, 100);
  }
  expectRegisterEqualsPlain({{&a, plans(a, true)}, {&b, plans(b, true)}, {&wild, plans(wild, true)}},
                            Precision::F64, 1100, 9);
}

// Blocks of paths are fixed by path index, so the thread count changes
// nothing; a repeated call changes nothing; several markets in one call give
// each market the bits of its own single-market call (draws are shared, and a
// draw is a pure function of (seed, path, k)).
TEST(CpuJitExact, ThreadsRepeatsAndMarketsDoNotChangeBits) {
  CPUJIT_REQUIRE();
  const Tape t = products::asianCall(60);
  KernelOptions o = registerKernel(makeStrategyPlan("window", t, {8, 0}));
  o.markets = 3;
  EngineSettings settings = engineSettingsFromEnvironment();
  auto withThreads = [&](unsigned n) {
    settings.threads = n;
    return jit(settings)->compile(t, o);  // the cached object: no compile
  };
  const auto k = jit()->compile(t, o);
  std::vector<std::vector<double>> markets(3, t.inputDefaults);
  markets[1][0] = 90.0;
  markets[2][2] = 0.35;
  const uint64_t paths = 10 * 1024 + 17;
  const RunResult one = withThreads(1)->run(markets, paths, 5);
  const RunResult two = withThreads(2)->run(markets, paths, 5);
  expectSameBits(one, two, "1 vs 2 threads");
  expectSameBits(one, withThreads(3)->run(markets, paths, 5), "1 vs 3 threads");
  expectSameBits(one, k->run(markets, paths, 5), "repeated");
  for (size_t m = 0; m < markets.size(); ++m) {
    const RunResult single = k->run({markets[m]}, paths, 5);
    RunResult picked = one;
    picked.markets = {one.markets[m]};
    expectSameBits(picked, single, "market " + std::to_string(m) + " alone");
  }
  EXPECT_NE(one.markets[0].value, one.markets[1].value);
  EXPECT_NE(one.markets[0].greeks[2], one.markets[2].greeks[2]);
}

// Value only: the forward sweep alone gives the same value bits as the Greeks kernel.
TEST(CpuJitExact, ValueOnlyMatchesTheGreeksKernelsValue) {
  CPUJIT_REQUIRE();
  const Tape t = products::asianCall(60);
  KernelOptions v = plainKernel();
  v.greeks = false;
  const auto kernels = compileAll({{&t, v}, {&t, plainKernel()}});
  const RunResult a = kernels[0]->run({t.inputDefaults}, 2500, 11);
  const RunResult b = kernels[1]->run({t.inputDefaults}, 2500, 11);
  EXPECT_EQ(a.markets[0].value, b.markets[0].value) << g17(a.markets[0].value) << " vs " << g17(b.markets[0].value);
  EXPECT_EQ(a.markets[0].valueStderr, b.markets[0].valueStderr);
  for (double g : a.markets[0].greeks) EXPECT_EQ(g, 0.0);
}
