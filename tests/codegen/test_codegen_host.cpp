// The host half of the GPU kernels' ABI (gpu/host): dispatches that cover every path once on block
// boundaries, partials added in double in block order (threaded or not), the run loop's offsets and caps,
// the scratch budget, the compile helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu/codegen/emit.h"
#include "gpu/host/compile.h"
#include "gpu/host/dispatch.h"
#include "planner/strategies.h"
#include "tests/codegen/small_tape.h"

using namespace tapelab;
using testutil::smallTape;

TEST(CodegenHost, DispatchesCoverEveryPathOnceOnBlockBoundaries) {
  const Tape t = smallTape();
  KernelOptions o;
  o.precision = Precision::F32;
  const EmittedKernel k = emitKernel(t, o, glslDialect());
  const uint64_t block = k.pathsPerGroup();
  for (uint64_t paths : {uint64_t{1}, uint64_t{255}, uint64_t{256}, uint64_t{1000}, uint64_t{1} << 20,
                         (uint64_t{1} << 33) + 7}) {
    const uint64_t first = (uint64_t{1} << 32) - 3;
    const auto ds = planDispatches(k, first, paths, 0x123456789abcdefull, 4096);
    uint64_t next = first;
    for (const Dispatch& d : ds) {
      const uint64_t start = (uint64_t{d.params.pathHi} << 32) | d.params.pathLo;
      EXPECT_EQ(start, next);
      EXPECT_EQ((start - first) % block, 0u);
      EXPECT_LE(d.groups, 4096u);
      EXPECT_GT(d.params.count, uint64_t(d.groups - 1) * block);
      EXPECT_LE(d.params.count, uint64_t(d.groups) * block);
      EXPECT_EQ(d.params.invocations, d.groups * 64u);
      EXPECT_EQ(d.params.seedLo, 0x89abcdefu);
      EXPECT_EQ(d.params.seedHi, 0x01234567u);
      EXPECT_EQ(d.params.zero, 0u);
      next += d.params.count;
    }
    EXPECT_EQ(next - first, paths);
  }
}

TEST(CodegenHost, PartialsAreAddedInDoubleInBlockOrder) {
  const Tape t = smallTape();
  KernelOptions o;
  o.precision = Precision::F32;
  o.markets = 2;
  const EmittedKernel k = emitKernel(t, o, glslDialect());
  ASSERT_EQ(k.width, 3);
  ASSERT_EQ(k.partialsPerGroup(), 12);
  // Two groups: market 0's value sums 1 and 2^-30 (a float sum would lose the second).
  std::vector<float> p(24, 0.0f);
  p[0] = 1.0f;
  p[12] = std::ldexp(1.0f, -30);
  p[6 + 1] = 4.0f;   // market 1, sum of d/dx
  p[6 + 3] = 2.0f;   // market 1, sum of value squares
  PartialSums sums(k);
  sums.add(p.data(), 2);
  const RunResult r = sums.finish(2, 7);
  ASSERT_EQ(r.markets.size(), 2u);
  EXPECT_EQ(r.markets[0].value, (1.0 + std::ldexp(1.0, -30)) / 2);
  EXPECT_EQ(r.markets[1].greeks[0], 2.0);
  EXPECT_EQ(r.markets[1].greeks.size(), 2u);
  EXPECT_EQ(packInputs(k, {{1, 2}, {3, 4}}).size(), 16u);
  EXPECT_THROW(packInputs(k, {{1, 2}}), std::invalid_argument);
}

// Large blocks of partials are added by several threads, each over its own sums: every sum still
// group after group, so the same bits as one loop (floats and doubles of mixed magnitudes, where
// another order would round differently).
TEST(CodegenHost, ThreadedPartialSumsEqualOneLoop) {
  const size_t per = 84;
  const uint32_t groups = uint32_t(2 * PartialSums::kParallelValues / per + 3);
  std::vector<float> f(groups * per);
  std::vector<double> d(groups * per);
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < f.size(); ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double v = std::ldexp(double(x % 1000003) - 500000.0, int(x % 41) - 20);
    d[i] = v;
    f[i] = float(v);
  }
  for (Precision precision : {Precision::F32, Precision::F64}) {
    const void* data = precision == Precision::F32 ? static_cast<const void*>(f.data()) : d.data();
    std::vector<double> oneLoop(per, 0.25);
    for (uint32_t g = 0; g < groups; ++g)
      for (size_t i = 0; i < per; ++i)
        oneLoop[i] += precision == Precision::F32 ? double(f[g * per + i]) : d[g * per + i];
    // The machine's own choice, then 7 threads whatever the cores (uneven column ranges), then one.
    for (size_t threads : {size_t{0}, size_t{7}, size_t{1}}) {
      std::vector<double> sums(per, 0.25);
      PartialSums::addColumns(data, groups, sums.data(), per, precision, threads);
      for (size_t i = 0; i < per; ++i)
        ASSERT_EQ(sums[i], oneLoop[i]) << "sum " << i << " " << toString(precision) << ", threads " << threads;
    }
    // Another order of the same values rounds differently: the comparison above can fail.
    double reversed = 0.25;
    for (uint32_t g = groups; g-- > 0;) reversed += precision == Precision::F32 ? double(f[g * per]) : d[g * per];
    EXPECT_NE(reversed, oneLoop[0]) << toString(precision);
  }
}

// A runner that records what the host loop hands it and returns zero partials.
struct RecordingRunner final : DispatchRunner {
  std::vector<Dispatch> seen;
  uint32_t uploadedGroups = 0;
  size_t perLaunch = 1;
  std::vector<size_t> batches;
  void upload(const std::vector<unsigned char>&, uint32_t maxGroups, size_t) override { uploadedGroups = maxGroups; }
  size_t dispatchesPerLaunch() const override { return perLaunch; }
  void launch(std::span<const Dispatch> batch, PartialSums& sums) override {
    batches.push_back(batch.size());
    for (const Dispatch& d : batch) {
      seen.push_back(d);
      std::vector<float> zeros(size_t(d.groups) * 12, 0.0f);
      sums.add(zeros.data(), d.groups);
    }
  }
};

TEST(CodegenHost, RunLoopHonoursPathOffsetAndGroupCap) {
  KernelOptions o;
  o.precision = Precision::F32;
  o.markets = 2;
  const EmittedKernel k = emitKernel(smallTape(), o, glslDialect());
  const uint64_t block = k.pathsPerGroup();
  const std::vector<std::vector<double>> in{{1, 2}, {3, 4}};
  {
    RecordingRunner r;
    runDispatches(k, DispatchOptions{}, 4096, in, 10 * block, 1, r);
    ASSERT_EQ(r.seen.size(), 1u);
    EXPECT_EQ(r.seen[0].params.pathLo, 0u);
    EXPECT_EQ(r.uploadedGroups, 10u);
  }
  DispatchOptions dispatch;
  dispatch.pathOffset = 4294967396u;  // above 2^32
  dispatch.maxGroups = 3;
  RecordingRunner r;
  r.perLaunch = 2;
  const RunResult res = runDispatches(k, dispatch, 4096, in, 10 * block, 1, r);
  ASSERT_EQ(r.seen.size(), 4u);  // 3 + 3 + 3 + 1 groups
  EXPECT_EQ(r.seen[0].groups, 3u);
  EXPECT_EQ(r.seen[3].groups, 1u);
  EXPECT_EQ(r.seen[0].params.pathHi, 1u);
  EXPECT_EQ(r.seen[0].params.pathLo, 100u);
  EXPECT_EQ(r.batches, (std::vector<size_t>{2, 2}));
  EXPECT_EQ(r.uploadedGroups, 3u);
  EXPECT_EQ(res.markets.size(), 2u);
  EXPECT_EQ(res.paths, 10 * block);
  EXPECT_EQ(dispatchGroupCap(4096, 0), 4096u);
  EXPECT_EQ(dispatchGroupCap(4096, 3), 3u);
  EXPECT_EQ(dispatchGroupCap(2, 3), 2u);  // never above the engine's own limit
  EXPECT_THROW(runDispatches(k, dispatch, 4096, in, 0, 1, r), std::invalid_argument);
}

TEST(CodegenHost, ScratchBudgetCapsGroupsPerDispatch) {
  const Tape t = smallTape();
  PlanOptions po;
  po.segLen = 8;
  KernelOptions o;
  o.precision = Precision::F32;
  o.kind = KernelKind::Scratch;
  o.plan = makeStrategyPlan("uniform", t, po);
  const EmittedKernel k = emitKernel(t, o, openclDialect());
  ASSERT_GT(k.scratchSlots, 0);
  const uint64_t perGroup = uint64_t(k.workgroupSize) * k.scratchSlots * 4;
  EXPECT_EQ(scratchGroupCap(k, 1000, 5 * perGroup + 1, "X"), 5u);
  EXPECT_EQ(scratchGroupCap(k, 4, 5 * perGroup, "X"), 4u);
  try {
    scratchGroupCap(k, 1000, perGroup - 1, "OpenCL", " on Dev");
    FAIL() << "a budget below one workgroup's scratch was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("OpenCL: one workgroup's scratch (", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(" on Dev"), std::string::npos) << e.what();
  }
  KernelOptions plain;
  plain.precision = Precision::F32;
  EXPECT_EQ(scratchGroupCap(emitKernel(t, plain, openclDialect()), 77, 0, "X"), 77u);
}

TEST(CodegenHost, CompileHelpers) {
  EXPECT_EQ(logHead("  a  \n\n b\n c\n", 2), "a | b | ...");
  EXPECT_EQ(logHead("one\r\n", 8), "one");
  CompileOnlyKernel k(KernelStats{}, "why not");
  try {
    k.run({}, 1, 1);
    FAIL();
  } catch (const EngineUnavailable& e) {
    EXPECT_STREQ(e.what(), "why not");
  }
}

// The fences that keep plain and checkpointed kernels exact on shader compilers
// (emit.cpp, tests/data/regressions): transcendentals and divisions read
// their arguments and give their result through opq; a kink's comparison reads
// fenced operands but selects the unfenced ones (or it is a max again).
