// The cuda engine. Everywhere: NVRTC compiles every kernel kind the emitter
// makes (plain, register, scratch aos/soa, several markets, fp64) to PTX and
// SASS for sm_90, with --fmad=false; without a driver the engine is
// compile-only and says why. On a machine with an NVIDIA GPU: every kind
// returns plain's bits, markets fused == separate, and agreement with the
// reference (these skip, with the reason, where there is no driver).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "api/knobs.h"
#include "gpu/codegen/emit.h"
#include "gpu/host/compile.h"
#include "gpu/cuda/cuda.h"
#include "gpu/cuda/nvrtc.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tests/common/cache_faults.h"
#include "tests/common/reference_engines.h"
#include "tests/common/test_util.h"

using namespace tapelab;
using testutil::expectSameBits;
using testutil::g17;

namespace {

constexpr uint64_t kPaths = 100000;
constexpr uint64_t kSeed = 20261129;

KernelOptions optionsFor(const Tape& tape, KernelKind kind, int segLen = 0, ScratchLayout layout = ScratchLayout::SoA,
                         int markets = 1, Precision precision = Precision::F32) {
  return testutil::kindOptions(tape, kind, 16, segLen, layout, markets, precision);
}

struct Variant {
  std::string name;
  KernelOptions options;
};

std::vector<Variant> everyKind(const Tape& t) {
  return {
      {"plain", optionsFor(t, KernelKind::Plain)},
      {"register", optionsFor(t, KernelKind::Register)},
      {"scratch-aos", optionsFor(t, KernelKind::Scratch, 48, ScratchLayout::AoS)},
      {"scratch-soa", optionsFor(t, KernelKind::Scratch, 48, ScratchLayout::SoA)},
      {"plain-4-markets", optionsFor(t, KernelKind::Plain, 0, ScratchLayout::SoA, 4)},
      {"register-4-markets", optionsFor(t, KernelKind::Register, 0, ScratchLayout::SoA, 4)},
      {"scratch-soa-4-markets", optionsFor(t, KernelKind::Scratch, 100, ScratchLayout::SoA, 4)},
      {"scratch-aos-fp64", optionsFor(t, KernelKind::Scratch, 100, ScratchLayout::AoS, 1, Precision::F64)},
  };
}

#define REQUIRE_NVRTC()                                      \
  do {                                                       \
    std::string why_;                                        \
    if (!cu::nvrtcAvailable(&why_)) GTEST_SKIP() << why_;    \
  } while (0)

}  // namespace

TEST(CudaNvrtc, EveryKernelKindCompilesToPtxForSm90) {
  REQUIRE_NVRTC();
  const Tape t = products::asianCall(24);
  for (const Variant& v : everyKind(t)) {
    const EmittedKernel k = emitKernel(t, v.options, cudaDialect());
    std::string ptx;
    ASSERT_NO_THROW(ptx = compilePtx(k.source)) << v.name;
    EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << v.name;
    EXPECT_NE(ptx.find(".entry " + k.entry), std::string::npos) << v.name;
    // The scratch kernels touch the scratch buffer, the others never do.
    const bool scratch = v.options.kind == KernelKind::Scratch;
    EXPECT_EQ(k.scratchSlots > 0, scratch) << v.name;
  }
}

TEST(CudaNvrtc, EngineCompilesWithPtxasStatistics) {
  REQUIRE_NVRTC();
  auto engine = makeCudaEngine(engineSettingsFromEnvironment());
  const EngineCaps caps = engine->caps();
  EXPECT_TRUE(caps.usable || caps.compileOnly) << caps.reason;
  EXPECT_EQ(caps.defaultPrecision, Precision::F32);
  EXPECT_EQ(caps.kinds.size(), 4u);  // plain, register, scratch, tangent
  // SASS for sm_90 through ptxas: slower than PTX, so four kinds of a short tape.
  const Tape t = products::asianCall(24);
  const std::vector<Variant> all = everyKind(t);
  for (const Variant& v : {all[0], all[1], all[2], all[6]}) {
    std::unique_ptr<Kernel> k;
    ASSERT_NO_THROW(k = engine->compile(t, v.options)) << v.name;
    const KernelStats s = k->stats();
    EXPECT_GT(s.registers, 0) << v.name << ": ptxas should report registers";
    EXPECT_GE(s.spillBytes, 0) << v.name;
    EXPECT_GT(s.compileSeconds, 0) << v.name;
    EXPECT_NE(s.notes.find("registers"), std::string::npos) << v.name << ": " << s.notes;
    EXPECT_GT(s.instructions, 100) << v.name << ": PTX instructions of tapelab_kernel (the tuner's proxy)";
  }
}

// The static count the compile-only tuner ranks by: statement lines of one entry's body, not its
// directives, labels, braces or another function's lines.
TEST(CudaNvrtc, PtxInstructionsCountOneEntrysStatements) {
  const std::string ptx =
      ".version 8.0\n.target sm_90\n"
      ".visible .entry tapelab_reduce(\n\t.param .u64 p0\n)\n{\n\t.reg .b32 %r<4>;\n\tmov.u32 %r1, 0;\n\tret;\n}\n"
      ".visible .entry tapelab_kernel(\n\t.param .u64 p0,\n\t.param .u32 p1\n)\n{\n\t.reg .f32 %f<9>;\n"
      "\tld.param.u64 %rd1, [p0];\n$L__BB0_1:\n\tadd.f32 %f1, %f2, %f3;\n\t// a comment;\n"
      "\t{\n\tmul.rn.f32 %f4, %f1, %f1;\n\t}\n\t@%p1 bra $L__BB0_1;\n\tret;\n}\n";
  EXPECT_EQ(cu::ptxInstructions(ptx, "tapelab_kernel"), 5);  // ld, add, mul, bra, ret
  EXPECT_EQ(cu::ptxInstructions(ptx, "tapelab_reduce"), 2);  // mov, ret
  EXPECT_EQ(cu::ptxInstructions(ptx), 7);
  EXPECT_EQ(cu::ptxInstructions(ptx, "no_such_entry"), 0);
}

TEST(CudaNvrtc, RandomTapesCompileToPtx) {
  REQUIRE_NVRTC();
  RandomTapeOptions ro;
  ro.nodes = 120;
  ro.drawIndices = 8;
  for (uint64_t seed : {11u, 12u}) {
    const Tape t = randomTape(seed, ro);
    for (const Variant& v : everyKind(t))
      EXPECT_NO_THROW(compilePtx(emitKernel(t, v.options, cudaDialect()).source)) << "seed " << seed << " " << v.name;
  }
}

TEST(CudaNvrtc, NoFusedMultiplyAdd) {
  REQUIRE_NVRTC();
  // --fmad=false: a*b+c stays a multiply and an add (rounded twice), as in every other engine.
  const std::string ptx = compilePtx(
      "extern \"C\" __global__ void k(float* x, double* y) { x[0] = x[1] * x[2] + x[3]; y[0] = y[1] * y[2] + y[3]; }");
  EXPECT_EQ(ptx.find("fma.rn"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("mad."), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("mul.rn.f32"), std::string::npos) << ptx;
}

TEST(CudaNvrtc, CompileErrorCarriesTheLog) {
  REQUIRE_NVRTC();
  try {
    compilePtx("extern \"C\" __global__ void k(float* x) { x[0] = undeclared_name; }");
    FAIL() << "bad source compiled";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("undeclared_name"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[source: "), std::string::npos) << e.what();
  }
}

// The market loop's shared constants (on by default) fit beside the Kahan sums in the workgroup
// memory a kernel may declare (48 KiB): at 8 markets in fp32 the sums fill it (96 sums x 2 x 64 lanes
// x 4 bytes), so the constants stay per lane and the kernel still builds; at 4 markets they are shared.
TEST(CudaNvrtc, SharedConstantsYieldToKahanSumsThatFillTheWorkgroupMemory) {
  REQUIRE_NVRTC();
  auto engine = makeCudaEngine(engineSettingsFromEnvironment());
  const Tape t = products::asianCall(24);
  for (int markets : {4, 8}) {
    KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 3, 0, ScratchLayout::SoA, markets);
    o.config.markets = MarketCode::Loop;
    o.config.sums = KahanPlace::Local;
    const std::string source = emitKernel(t, o, cudaDialect()).source;
    const std::string shared = "__shared__ float v0[" + std::to_string(markets) + "];";
    EXPECT_EQ(source.find(shared) != std::string::npos, markets == 4) << markets << " markets";
    EXPECT_NE(source.find("tl_red[" + std::to_string(markets * 24 * 64) + "]"), std::string::npos)
        << markets << " markets: the Kahan sums in workgroup memory";
    KernelStats s;
    ASSERT_NO_THROW(s = engine->compile(t, o)->stats()) << markets << " markets";
    EXPECT_GT(s.registers, 0) << s.notes;
  }
}

TEST(CudaNvrtc, DumpsTheSource) {
  REQUIRE_NVRTC();
  auto engine = makeCudaEngine(engineSettingsFromEnvironment());
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tapelab-cuda-dump-" + std::to_string(::getpid()));
  const Tape t = products::asianCall(8);
  KernelOptions o = optionsFor(t, KernelKind::Scratch, 20, ScratchLayout::AoS);
  o.dumpDir = dir.string();
  const KernelStats s = engine->compile(t, o)->stats();
  ASSERT_FALSE(s.sourcePath.empty());
  std::ifstream f(s.sourcePath);
  const std::string text((std::istreambuf_iterator<char>(f)), {});
  EXPECT_NE(text.find("__global__"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// No PTX or CUBIN from another key's entry, none read from a special file (README, "Faults").
TEST(CudaNvrtc, ForeignOrSpecialCacheEntriesAreRebuilt) {
  REQUIRE_NVRTC();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tapelab-nvrtc-cache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string source = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n";
  const std::string other = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 3.0f; }\n";
  bool hit = false;
  const cu::NvrtcOutput first = cu::compileCudaCached(source, "k.cu", 9, 0, dir.string(), &hit);
  ASSERT_TRUE(first.ok) << first.log;
  std::filesystem::path entry, otherEntry;
  for (const auto& e : std::filesystem::directory_iterator(dir / "cuda")) entry = e.path();
  cu::compileCudaCached(other, "k.cu", 9, 0, dir.string(), &hit);
  for (const auto& e : std::filesystem::directory_iterator(dir / "cuda"))
    if (e.path() != entry) otherEntry = e.path();
  testutil::expectForeignAndSpecialEntriesRebuilt(entry, otherEntry, [&] {
    bool again = false;
    const cu::NvrtcOutput out = cu::compileCudaCached(source, "k.cu", 9, 0, dir.string(), &again);
    EXPECT_EQ(out.ptx, first.ptx);
    EXPECT_EQ(out.cubin, first.cubin);
    return again;
  });
  std::filesystem::remove_all(dir);
}

TEST(CudaEngine, CompileOnlyWithoutDriverSaysWhy) {
  REQUIRE_NVRTC();
  auto engine = makeCudaEngine(engineSettingsFromEnvironment());
  const EngineCaps caps = engine->caps();
  if (caps.usable) GTEST_SKIP() << "a CUDA device is here: " << caps.reason;
  EXPECT_TRUE(caps.compileOnly);
  EXPECT_NE(caps.reason.find("compile-only"), std::string::npos) << caps.reason;
  const Tape t = products::asianCall(8);
  auto k = engine->compile(t, optionsFor(t, KernelKind::Plain));
  EXPECT_THROW(k->run({t.inputDefaults}, 1000, kSeed), EngineUnavailable);
}

class CudaRun : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = makeCudaEngine(engineSettingsFromEnvironment());
    const EngineCaps caps = engine_->caps();
    if (!caps.usable) GTEST_SKIP() << "cuda cannot run here: " << caps.reason;
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(CudaRun, Asian120AllKindsBitExact) {
  const Tape t = products::asianCall(120);
  const std::vector<std::vector<double>> in{t.inputDefaults};
  const RunResult plain = engine_->compile(t, optionsFor(t, KernelKind::Plain))->run(in, kPaths, kSeed);
  expectSameBits(plain, engine_->compile(t, optionsFor(t, KernelKind::Register))->run(in, kPaths, kSeed), "register");
  for (int len : {24, 48, 100, 300})
    for (ScratchLayout l : {ScratchLayout::AoS, ScratchLayout::SoA})
      expectSameBits(plain, engine_->compile(t, optionsFor(t, KernelKind::Scratch, len, l))->run(in, kPaths, kSeed),
                     std::string("scratch ") + toString(l) + " " + std::to_string(len));
  // Agreement with the double reference: the fp32 tolerance of test_opencl_kernels.cpp.
  const RunResult ref = testutil::makeReference("reference")->compile(t, optionsFor(t, KernelKind::Plain))->run(in, 4000, kSeed);
  const RunResult few = engine_->compile(t, optionsFor(t, KernelKind::Plain))->run(in, 4000, kSeed);
  EXPECT_NEAR(few.markets[0].value, ref.markets[0].value, 1e-4 * std::abs(ref.markets[0].value));
  for (size_t k = 0; k < ref.markets[0].greeks.size(); ++k)
    EXPECT_NEAR(few.markets[0].greeks[k], ref.markets[0].greeks[k],
                1e-4 * std::max(std::abs(ref.markets[0].greeks[k]), 1e-2 * std::abs(ref.markets[0].value)))
        << t.inputNames[k];
}

TEST_F(CudaRun, FusedMarketsEqualSeparateAndRepeatIsExact) {
  const Tape t = products::asianCall(60);
  std::vector<std::vector<double>> ladder;
  for (double spot : {95.0, 100.0, 105.0}) {
    ladder.push_back(t.inputDefaults);
    ladder.back()[0] = spot;
  }
  auto fused = engine_->compile(t, optionsFor(t, KernelKind::Scratch, 48, ScratchLayout::SoA, 3));
  const RunResult all = fused->run(ladder, kPaths, kSeed);
  expectSameBits(all, fused->run(ladder, kPaths, kSeed), "repeat");
  auto single = engine_->compile(t, optionsFor(t, KernelKind::Scratch, 48, ScratchLayout::SoA, 1));
  for (size_t m = 0; m < ladder.size(); ++m) {
    RunResult one = single->run({ladder[m]}, kPaths, kSeed);
    RunResult part = all;
    part.markets = {all.markets[m]};
    expectSameBits(one, part, "market " + std::to_string(m));
  }
}

// The occupancy field reaches ptxas: min_blocks=8 caps a 64-lane block's registers at
// 65536 / (8 * 64) = 128 (the bits: CudaRun below).
TEST(CudaNvrtc, MinBlocksCapsRegisters) {
  REQUIRE_NVRTC();
  auto engine = makeCudaEngine(engineSettingsFromEnvironment());
  const Tape t = products::asianCall(24);
  KernelOptions o = optionsFor(t, KernelKind::Register, 0, ScratchLayout::SoA, 4);
  o.config.minBlocks = 8;
  const KernelStats s = engine->compile(t, o)->stats();
  EXPECT_GT(s.registers, 0) << s.notes;
  EXPECT_LE(s.registers, 128) << s.notes;
}

// One path per lane lets the compiler drop the lanes' Kahan sums kept in registers: at 7 markets
// the register kernel needs fewer registers plus spill bytes than with four paths per lane. The
// approximate math compiles.
TEST(CudaNvrtc, OnePathPerLaneNeedsLessStateAndApproxMathCompiles) {
  REQUIRE_NVRTC();
  auto engine = makeCudaEngine(engineSettingsFromEnvironment());
  const Tape t = products::asianCall(24);
  KernelOptions o = optionsFor(t, KernelKind::Register, 0, ScratchLayout::SoA, 7);
  o.config.sums = KahanPlace::Registers;
  const KernelStats four = engine->compile(t, o)->stats();
  o.config.lanes = 1;
  const KernelStats one = engine->compile(t, o)->stats();
  ASSERT_GT(four.registers, 0) << four.notes;
  ASSERT_GT(one.registers, 0) << one.notes;
  EXPECT_LT(one.registers * 4 + one.spillStoreBytes, four.registers * 4 + four.spillStoreBytes)
      << "one path per lane: " << one.notes << "; four: " << four.notes;
  o.config.math = MathContract::Approx;
  EXPECT_GT(engine->compile(t, o)->stats().registers, 0);
  o.config.draws = DrawSource::Stored;  // draws in the scratch buffer: compiles, reports its scratch bytes
  EXPECT_GT(engine->compile(t, o)->stats().registers, 0);
}

// Out-of-line draws, with and without the market loop: the plain kernel's bits.
TEST_F(CudaRun, OutlineDrawsGiveTheSameBits) {
  const Tape t = products::asianCall(60);
  std::vector<std::vector<double>> ladder{t.inputDefaults, t.inputDefaults, t.inputDefaults};
  ladder[0][0] = 95.0;
  ladder[2][0] = 105.0;
  const RunResult plain = engine_->compile(t, optionsFor(t, KernelKind::Plain, 0, ScratchLayout::SoA, 3))->run(ladder, kPaths, kSeed);
  for (int variant = 0; variant < 2; ++variant) {
    KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 4, 0, ScratchLayout::SoA, 3);
    o.config.outlineDraws = true;
    o.config.markets = variant == 1 ? MarketCode::Loop : MarketCode::Copies;
    expectSameBits(plain, engine_->compile(t, o)->run(ladder, kPaths, kSeed),
                   "register, 4 segments, draws out of line" + std::string(variant == 1 ? ", markets in a loop" : ""));
  }
}

// shared_constants in the market loop (the inputs' and their drift's arrays in shared memory),
// with and without stored draws and 2 paths per lane: the plain kernel's bits.
TEST_F(CudaRun, SharedConstantsGiveTheSameBits) {
  const Tape t = products::asianCall(60);
  std::vector<std::vector<double>> ladder{t.inputDefaults, t.inputDefaults, t.inputDefaults};
  ladder[0][0] = 95.0;
  ladder[2][2] = 0.3;
  for (int variant = 0; variant < 2; ++variant) {
    KernelOptions p = optionsFor(t, KernelKind::Plain, 0, ScratchLayout::SoA, 3);
    p.config.lanes = variant == 1 ? 2 : 4;  // the blocks' sums, so their last bits, depend on it
    const RunResult plain = engine_->compile(t, p)->run(ladder, kPaths, kSeed);
    KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 4, 0, ScratchLayout::SoA, 3);
    o.config.markets = MarketCode::Loop;
    o.config.sharedConstants = true;
    o.config.draws = variant == 1 ? DrawSource::Stored : DrawSource::Redraw;
    o.config.lanes = p.config.lanes;
    const std::string source = emitKernel(t, o, cudaDialect()).source;
    ASSERT_NE(source.find("__shared__ float v0[3];"), std::string::npos) << "the spot's array is not shared";
    expectSameBits(plain, engine_->compile(t, o)->run(ladder, kPaths, kSeed),
                   "register, 4 segments, markets in a loop, constants shared" +
                       std::string(variant == 1 ? ", draws stored, 2 paths per lane" : ""));
  }
}

// The device's sums over more groups than the reduction fetches a step (256) and not a multiple of
// its batch (8): 1,003 groups of one path per lane, in fp32 and fp64, equal the host's BlockReduction
// over runBlocks.
TEST_F(CudaRun, DeviceSumsOverManyGroupsEqualTheHosts) {
  const Tape t = products::asianCall(12);
  for (Precision p : {Precision::F32, Precision::F64}) {
    KernelOptions o = optionsFor(t, KernelKind::Register, 0, ScratchLayout::SoA, 2, p);
    o.config.lanes = 1;  // 64 paths a group
    constexpr uint64_t paths = 1003 * 64 - 17;
    std::vector<std::vector<double>> ladder{t.inputDefaults, t.inputDefaults};
    ladder[1][0] = 104.0;
    auto kernel = engine_->compile(t, o);
    const RunResult device = kernel->run(ladder, paths, kSeed);
    BlockReduction host;
    kernel->runBlocks(ladder, 0, paths, kSeed, host);
    expectSameBits(host.finish(ladder.size(), t.numInputs(), paths, kSeed), device,
                   std::string("1,003 groups, ") + toString(p) + ": sums on the device and on the host");
  }
}

// Dispatches pipelined over launches of four (their partials added on the device behind each
// kernel or beside the next one, or copied back and added on the host) give the bits of one dispatch and of the host's
// BlockReduction; with the timeline each kernel has its device time, and a gap to the one before
// except the first of each launch of four; the kernels fit inside the run's time.
TEST_F(CudaRun, PipelinedDispatchesAndTheirTimelineKeepTheBits) {
  const Tape t = products::asianCall(60);
  std::vector<std::vector<double>> ladder{t.inputDefaults, t.inputDefaults, t.inputDefaults};
  ladder[0][0] = 95.0;
  ladder[2][0] = 105.0;
  const KernelOptions base = optionsFor(t, KernelKind::Register, 48, ScratchLayout::SoA, 3);
  constexpr uint64_t paths = 20000;  // 79 groups of 256 paths
  const RunResult whole = engine_->compile(t, base)->run(ladder, paths, kSeed);
  ASSERT_EQ(whole.dispatches.size(), 1u);
  EXPECT_EQ(whole.dispatches[0].kernelSeconds, -1.0) << "no timeline asked for";
  for (int variant = 0; variant < 4; ++variant) {
    const bool timeline = variant >= 1;
    KernelOptions o = base;
    o.dispatch.maxGroups = 8;  // 10 dispatches: launches of 4, 4 and 2
    o.dispatch.timeline = timeline;
    // 2: copied back, added on the host; 3: the reductions beside the next kernel; else behind their own
    o.config.cudaSums = variant == 2 ? SumsPlace::Host : variant == 3 ? SumsPlace::Beside : SumsPlace::Device;
    auto kernel = engine_->compile(t, o);
    const RunResult split = kernel->run(ladder, paths, kSeed);
    expectSameBits(whole, split, std::string("10 dispatches, timeline ") + (timeline ? "on" : "off") +
                                     (variant == 2 ? ", sums on the host" : variant == 3 ? ", sums beside" : ""));
    // run() adds the partials on the device (tapelab_reduce), runBlocks hands them to the host's
    // BlockReduction: the same additions in the same order.
    BlockReduction host;
    kernel->runBlocks(ladder, 0, paths, kSeed, host);
    expectSameBits(host.finish(ladder.size(), t.numInputs(), paths, kSeed), split, "sums on the device and on the host");
    ASSERT_EQ(split.dispatches.size(), 10u);
    double kernels = 0;
    for (size_t i = 0; i < split.dispatches.size(); ++i) {
      const DispatchTiming& d = split.dispatches[i];
      if (!timeline) {
        EXPECT_EQ(d.kernelSeconds, -1.0);
        continue;
      }
      EXPECT_GT(d.kernelSeconds, 0.0) << "dispatch " << i;
      if (i % 4 == 0) EXPECT_EQ(d.gapSeconds, -1.0) << "dispatch " << i << " starts a launch";
      else EXPECT_GE(d.gapSeconds, 0.0) << "dispatch " << i;
      kernels += d.kernelSeconds;
    }
    EXPECT_LE(kernels, split.seconds);
  }
}

TEST_F(CudaRun, KahanPlacesAndLaunchBoundsGiveTheSameBits) {
  const Tape t = products::asianCall(60);
  std::vector<std::vector<double>> ladder{t.inputDefaults, t.inputDefaults, t.inputDefaults};
  ladder[0][0] = 95.0;
  ladder[2][0] = 105.0;
  for (auto [kind, layout] : {std::pair{KernelKind::Register, ScratchLayout::SoA},
                              std::pair{KernelKind::Scratch, ScratchLayout::AoS}}) {
    const KernelOptions base = optionsFor(t, kind, 48, layout, 3);
    const RunResult local = engine_->compile(t, base)->run(ladder, kPaths, kSeed);
    for (KahanPlace place : {KahanPlace::Registers, KahanPlace::Local})
      for (int minBlocks : {0, 6}) {
        KernelOptions o = base;
        o.config.sums = place;
        o.config.minBlocks = minBlocks;
        expectSameBits(local, engine_->compile(t, o)->run(ladder, kPaths, kSeed),
                       std::string(toString(kind)) + ", sums in " + toString(place) + ", min blocks " +
                           std::to_string(minBlocks));
      }
  }
}

// Box-Muller pairs (tape/philox.h, version 4) compile in every kernel kind in both precisions; a block
// computes each pair it reads once (the plain kernel of a 24-draw tape: 12 pairs, 6 Philox calls).
TEST(CudaNvrtc, BoxMullerPairsCompileInEveryKind) {
  REQUIRE_NVRTC();
  const Tape t = products::asianCall(24);
  for (Variant v : everyKind(t)) {
    const EmittedKernel k = emitKernel(t, v.options, cudaDialect());
    EXPECT_NE(k.source.find("2 tl_boxMuller(unsigned int a, unsigned int b)"), std::string::npos) << v.name;
    EXPECT_EQ(k.source.find("tl_normal"), std::string::npos) << v.name << ": no quantile (version 3) beside it";
    ASSERT_NO_THROW(compilePtx(k.source)) << v.name;
  }
  KernelOptions o = optionsFor(t, KernelKind::Plain, 0, ScratchLayout::SoA, 1);
  const std::string plain = emitKernel(t, o, cudaDialect()).source;
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = plain.find(what); at != std::string::npos; at = plain.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(" = tl_boxMuller("), 12);
  EXPECT_EQ(count(" = tl_drawWords("), 6);
  o.kind = KernelKind::Tangent;  // the tangent kind draws in its forward sweep too
  ASSERT_NO_THROW(compilePtx(emitKernel(t, o, cudaDialect()).source)) << "tangent";
}

// Draws in and out of line, redrawn and stored, against the plain kernel: the same bits in every kind, with
// one and four paths per lane, 64- and 256-lane workgroups, in fp32 and fp64, and 4 segments of a 60-draw
// tape (15 draws a segment: segment bounds split Philox calls and Box-Muller pairs, each block computing
// the pairs it reads).
TEST_F(CudaRun, DrawVariantsGiveTheSameBits) {
  const Tape t = products::asianCall(60);
  const uint64_t paths = kPaths + 45;
  for (Precision precision : {Precision::F32, Precision::F64}) {
    KernelOptions p = testutil::kindOptions(t, KernelKind::Plain, 0, 0, ScratchLayout::SoA, 1, precision);
    for (int variant = 0; variant < 4; ++variant) {
      p.config.lanes = variant % 2 == 0 ? 1 : 4;
      p.config.workgroup = variant < 2 ? 64 : 256;
      const RunResult plain = engine_->compile(t, p)->run({t.inputDefaults}, paths, kSeed);
      for (KernelKind kind : {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch}) {
        KernelOptions o = testutil::kindOptions(t, kind, 4, 24, ScratchLayout::SoA, 1, precision);
        o.config = p.config;
        o.config.outlineDraws = variant == 1 || variant == 2;
        o.config.draws = variant == 3 ? DrawSource::Stored : DrawSource::Redraw;
        expectSameBits(plain, engine_->compile(t, o)->run({t.inputDefaults}, paths, kSeed),
                       std::string(toString(kind)) + " " + toString(precision) + ", variant " + std::to_string(variant));
      }
    }
  }
}

// draws=prefill compiles in both precisions, both layouts and a tape ending in a part Philox call: a rolled
// loop over whole calls, each computing its two pairs, then the last call's; the forward sweep loads its
// draws a segment at a time (a key from the previous segment: without it ptxas hoisted 252 loads and
// spilled them).
TEST(CudaNvrtc, PrefilledDrawsCompile) {
  REQUIRE_NVRTC();
  for (int steps : {24, 26})
    for (Precision precision : {Precision::F32, Precision::F64})
      for (ScratchLayout layout : {ScratchLayout::SoA, ScratchLayout::AoS}) {
        const Tape t = products::asianCall(steps);
        KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 4, 0, layout, 1, precision);
        o.config.draws = DrawSource::Prefill;
        const std::string name = std::to_string(steps) + " steps " + toString(precision) + " " + toString(layout);
        const EmittedKernel k = emitKernel(t, o, cudaDialect());
        EXPECT_NE(k.source.find("const unsigned int tl_dk1 = "), std::string::npos) << name;
        EXPECT_NE(k.source.find("for (unsigned int tl_dg = 0u; tl_dg < 6u; ++tl_dg)"), std::string::npos) << name;
        EXPECT_NE(k.source.find(" tl_dn1 = tl_boxMuller(tl_dw.z, tl_dw.w);"), std::string::npos) << name;
        EXPECT_EQ(k.source.find("tl_drawWords(6u,") != std::string::npos, steps == 26) << name << ": the call of two words after the loop";
        ASSERT_NO_THROW(compilePtx(k.source)) << name;
      }
}

// draws=prefill: a loop computes every draw of the path into the scratch buffer before the forward sweep,
// and both sweeps read them. Against the plain kernel: register and scratch kernels, fp32 and fp64, 1 and
// 4 paths per lane, 64- and 256-lane workgroups, SoA and AoS, a tape of whole Philox calls (60 draws: the
// rolled loop) and one that ends in a call of two words (62), path counts that leave the last warp
// part-full and with one lane, and 3 markets.
TEST_F(CudaRun, PrefilledDrawsGiveTheSameBits) {
  for (int steps : {60, 62}) {
    const Tape t = products::asianCall(steps);
    for (Precision precision : {Precision::F32, Precision::F64})
      for (int variant = 0; variant < 4; ++variant) {
        const uint64_t paths = kPaths + (variant % 2 == 0 ? 45 : 1);
        KernelOptions p = testutil::kindOptions(t, KernelKind::Plain, 0, 0, ScratchLayout::SoA, 1, precision);
        p.config.lanes = variant < 2 ? 1 : 4;
        p.config.workgroup = variant % 2 == 0 ? 64 : 256;
        const RunResult plain = engine_->compile(t, p)->run({t.inputDefaults}, paths, kSeed);
        for (KernelKind kind : {KernelKind::Register, KernelKind::Scratch}) {
          KernelOptions o = testutil::kindOptions(t, kind, 4, 24, variant == 3 ? ScratchLayout::AoS : ScratchLayout::SoA, 1,
                                                  precision);
          o.config = p.config;
          o.config.layout = variant == 3 ? ScratchLayout::AoS : ScratchLayout::SoA;
          o.config.draws = DrawSource::Prefill;
          o.config.outlineDraws = variant == 1;
          const std::string name = std::string(toString(kind)) + " " + toString(precision) + ", " + std::to_string(steps) +
                                   " steps, variant " + std::to_string(variant);
          const EmittedKernel k = emitKernel(t, o, cudaDialect());
          EXPECT_NE(k.source.find("tl_dg < 15u"), std::string::npos) << name << ": the rolled loop over whole calls";
          expectSameBits(plain, engine_->compile(t, o)->run({t.inputDefaults}, paths, kSeed), name);
        }
      }
    std::vector<std::vector<double>> ladder{t.inputDefaults, t.inputDefaults, t.inputDefaults};
    ladder[0][0] = 95.0;
    ladder[2][0] = 105.0;
    KernelOptions p = optionsFor(t, KernelKind::Plain, 0, ScratchLayout::SoA, 3);
    p.config.lanes = 1;
    const RunResult plain = engine_->compile(t, p)->run(ladder, kPaths + 1, kSeed);
    KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 4, 24, ScratchLayout::SoA, 3);
    o.config.lanes = 1;
    o.config.markets = MarketCode::Loop;
    o.config.draws = DrawSource::Prefill;
    expectSameBits(plain, engine_->compile(t, o)->run(ladder, kPaths + 1, kSeed), "3 markets, " + std::to_string(steps) + " steps");
  }
}

// Several markets per dispatch: a 3-point ladder through the register kernel with the markets in a loop,
// in sequential and joint order, and the scratch kernel, over a path count whose last warp has one lane,
// against the plain kernel; the tangent kind's values too (its Greeks are tangents).
TEST_F(CudaRun, DrawsAtSeveralMarketsGiveTheSameBits) {
  const Tape t = products::asianCall(60);
  std::vector<std::vector<double>> ladder{t.inputDefaults, t.inputDefaults, t.inputDefaults};
  ladder[0][0] = 95.0;
  ladder[2][0] = 105.0;
  const uint64_t paths = kPaths + 1;
  KernelOptions p = optionsFor(t, KernelKind::Plain, 0, ScratchLayout::SoA, 3);
  p.config.lanes = 1;  // the blocks' composition, so the sums' rounding: the same lanes on both sides
  const RunResult plain = engine_->compile(t, p)->run(ladder, paths, kSeed);
  struct Case { KernelKind kind; MarketOrder order; MarketCode code; const char* name; };
  for (const Case& c : {Case{KernelKind::Register, MarketOrder::Sequential, MarketCode::Loop, "register, loop, sequential"},
                        Case{KernelKind::Register, MarketOrder::Joint, MarketCode::Copies, "register, copies, joint"},
                        Case{KernelKind::Scratch, MarketOrder::Sequential, MarketCode::Copies, "scratch"},
                        Case{KernelKind::Plain, MarketOrder::Sequential, MarketCode::Copies, "plain"}}) {
    KernelOptions o = testutil::kindOptions(t, c.kind, 4, 24, ScratchLayout::SoA, 3);
    o.config.marketOrder = c.order;
    o.config.markets = c.code;
    o.config.lanes = 1;
    expectSameBits(plain, engine_->compile(t, o)->run(ladder, paths, kSeed), c.name);
  }
  KernelOptions tangent = p;
  tangent.kind = KernelKind::Tangent;
  const RunResult tan = engine_->compile(t, tangent)->run(ladder, paths, kSeed);
  ASSERT_EQ(tan.markets.size(), plain.markets.size());
  for (size_t m = 0; m < plain.markets.size(); ++m)
    EXPECT_EQ(tan.markets[m].value, plain.markets[m].value) << "tangent, market " << m;
}
