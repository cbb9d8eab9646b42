// The opencl engine on whatever OpenCL device is here (PoCL in CI): every
// kernel kind returns the same bits as the plain kernel (both scratch layouts,
// several segment lengths), fused markets equal separate dispatches, a repeat
// gives the same bits, chunked launches equal one launch, and the results
// agree with the double reference within an fp32 tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api/knobs.h"
#include "gpu/codegen/emit.h"
#include "gpu/host/compile.h"
#include "gpu/opencl/opencl.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tape/recorder.h"
#include "tests/common/reference_engines.h"
#include "tests/common/test_util.h"

using namespace tapelab;
using testutil::expectSameBits;
using testutil::g17;

namespace {

constexpr uint64_t kPaths = 1000;  // not a multiple of the 256-path block: the last group is partial
constexpr uint64_t kSeed = 20261129;

Engine* openclEngine(std::string* why) {
  static std::unique_ptr<Engine> engine;
  static std::string reason;
  static bool tried = false;
  if (!tried) {
    tried = true;
    const EngineCaps caps = testutil::capsOf(makeOpenCLEngine, engineSettingsFromEnvironment());
    if (caps.usable) engine = makeOpenCLEngine(engineSettingsFromEnvironment());
    else reason = caps.reason;
  }
  *why = reason;
  return engine.get();
}

#define REQUIRE_OPENCL()                                  \
  std::string why_;                                       \
  Engine* engine = openclEngine(&why_);                   \
  if (!engine) GTEST_SKIP() << "opencl unavailable: " << why_

KernelOptions optionsFor(const Tape& tape, KernelKind kind, int segLen = 0, ScratchLayout layout = ScratchLayout::SoA,
                         int markets = 1) {
  return testutil::kindOptions(tape, kind, 7, segLen, layout, markets);
}

RunResult runOne(Engine& engine, const Tape& tape, const KernelOptions& o, const std::vector<std::vector<double>>& in,
                 uint64_t paths = kPaths) {
  return engine.compile(tape, o)->run(in, paths, kSeed);
}

struct ScratchVariant {
  int segLen;
  ScratchLayout layout;
};

// Plain, register and the scratch variants on one tape: all the same bits.
void checkAllKindsAgree(Engine& engine, const Tape& tape, const std::vector<ScratchVariant>& scratch) {
  const std::vector<std::vector<double>> in{tape.inputDefaults};
  const RunResult plain = runOne(engine, tape, optionsFor(tape, KernelKind::Plain), in);
  ASSERT_TRUE(std::isfinite(plain.markets[0].value));
  expectSameBits(plain, runOne(engine, tape, optionsFor(tape, KernelKind::Register), in), tape.name + " register");
  for (const ScratchVariant& v : scratch) {
    const KernelOptions o = optionsFor(tape, KernelKind::Scratch, v.segLen, v.layout);
    expectSameBits(plain, runOne(engine, tape, o, in),
                   tape.name + " scratch " + toString(v.layout) + " seglen " + std::to_string(v.segLen) + " (" +
                       std::to_string(o.plan.segments()) + " segments, " + std::to_string(o.plan.scratchSlots) +
                       " slots)");
  }
}

}  // namespace

TEST(OpenCLKernels, CapsListEveryKind) {
  REQUIRE_OPENCL();
  const EngineCaps c = engine->caps();
  EXPECT_TRUE(c.usable);
  EXPECT_EQ(c.defaultPrecision, Precision::F32);
  EXPECT_EQ(c.kinds.size(), 4u);  // plain, register, scratch, tangent
  EXPECT_EQ(c.maxMarkets, 8);
  EXPECT_FALSE(c.reason.empty());
}

TEST(OpenCLKernels, Asian120AllKindsBitExact) {
  REQUIRE_OPENCL();
  std::vector<ScratchVariant> all;
  for (int len : {24, 48, 100, 300})
    for (ScratchLayout layout : {ScratchLayout::AoS, ScratchLayout::SoA}) all.push_back({len, layout});
  checkAllKindsAgree(*engine, products::asianCall(120), all);
}

TEST(OpenCLKernels, RandomTapesAllKindsBitExact) {
  REQUIRE_OPENCL();
  RandomTapeOptions ro;
  ro.nodes = 160;
  ro.draws = 12;
  ro.drawIndices = 8;  // some draws read twice: a recomputed segment must regenerate them
  // PoCL compiles each kernel for seconds: each tape gets both layouts, at different lengths.
  for (uint64_t seed : {1u, 2u}) {
    Tape t = randomTape(seed, ro);
    t.name = "random-" + std::to_string(seed);
    ASSERT_EQ(validate(t), "") << t.name;
    const ScratchLayout first = seed == 1 ? ScratchLayout::AoS : ScratchLayout::SoA;
    const ScratchLayout second = seed == 1 ? ScratchLayout::SoA : ScratchLayout::AoS;
    checkAllKindsAgree(*engine, t, {{13, first}, {48, second}});
  }
}

TEST(OpenCLKernels, FusedMarketsEqualSeparateDispatches) {
  REQUIRE_OPENCL();
  const Tape tape = products::asianCall(12);
  std::vector<std::vector<double>> ladder;
  for (double spot : {95.0, 100.0, 105.0}) {
    ladder.push_back(tape.inputDefaults);
    ladder.back()[0] = spot;
  }
  for (KernelKind kind : {KernelKind::Plain, KernelKind::Scratch}) {
    const RunResult fused = runOne(*engine, tape, optionsFor(tape, kind, 30, ScratchLayout::SoA, 3), ladder);
    ASSERT_EQ(fused.markets.size(), 3u);
    auto single = engine->compile(tape, optionsFor(tape, kind, 30, ScratchLayout::SoA, 1));
    for (size_t m = 0; m < ladder.size(); ++m) {
      RunResult one = single->run({ladder[m]}, kPaths, kSeed);
      RunResult fusedOne = fused;
      fusedOne.markets = {fused.markets[m]};
      expectSameBits(one, fusedOne, std::string(toString(kind)) + " market " + std::to_string(m));
    }
  }
}

// Where the lanes' Kahan sums live (registers, workgroup-local) moves values, never operations: the
// same bits, for fused markets in a register kernel and in a scratch AoS kernel.
TEST(OpenCLKernels, KahanPlacesGiveTheSameBits) {
  REQUIRE_OPENCL();
  const Tape tape = products::asianCall(12);
  std::vector<std::vector<double>> ladder{tape.inputDefaults, tape.inputDefaults};
  ladder[1][0] = 95.0;
  for (auto [kind, layout] : {std::pair{KernelKind::Register, ScratchLayout::SoA},
                              std::pair{KernelKind::Scratch, ScratchLayout::AoS}}) {
    const KernelOptions base = optionsFor(tape, kind, 30, layout, 2);
    const RunResult local = runOne(*engine, tape, base, ladder);  // KernelConfig{}: local
    for (KahanPlace place : {KahanPlace::Registers}) {
      KernelOptions o = base;
      o.config.sums = place;
      expectSameBits(local, runOne(*engine, tape, o, ladder),
                     std::string(toString(kind)) + " " + toString(layout) + ", sums in " + toString(place));
    }
  }
}

// outline_draws=on: Philox and Box-Muller as noinline functions, one copy in the kernel. The same bits
// as inlined, plain, register and scratch kernels alike, stored draws included; the dumped source says it.
TEST(OpenCLKernels, OutlineDrawsGiveTheSameBits) {
  REQUIRE_OPENCL();
  const Tape tape = products::asianCall(12);
  const std::vector<std::vector<double>> in{tape.inputDefaults};
  for (auto [kind, layout] : {std::pair{KernelKind::Plain, ScratchLayout::SoA}, std::pair{KernelKind::Register, ScratchLayout::SoA},
                              std::pair{KernelKind::Scratch, ScratchLayout::AoS}}) {
    KernelOptions o = optionsFor(tape, kind, kind == KernelKind::Plain ? 0 : 4, layout, 1);
    o.config.draws = DrawSource::Stored;
    const RunResult inlined = runOne(*engine, tape, o, in, 5000);
    o.config.outlineDraws = true;
    expectSameBits(inlined, runOne(*engine, tape, o, in, 5000), std::string(toString(kind)) + ", draws out of line");
    if (kind == KernelKind::Plain) {
      EXPECT_NE(testutil::dumpedSource(*engine, tape, o, "tapelab-opencl-outline").find("__attribute__((noinline))"),
                std::string::npos);
    }
  }
}

// math=approx on OpenCL: native_exp, native_log and native_sqrt in every kernel alike (the draws'
// too), so the checkpointed kernels keep the plain kernel's bits (fp32; fp64 is untouched).
TEST(OpenCLKernels, ApproxMathKeepsPlainAndCheckpointedEqual) {
  REQUIRE_OPENCL();
  const Tape tape = products::asianCall(12);
  const std::vector<std::vector<double>> in{tape.inputDefaults};
  KernelOptions plainOptions = optionsFor(tape, KernelKind::Plain, 0, ScratchLayout::SoA, 1);
  plainOptions.config.math = MathContract::Approx;
  const RunResult plain = runOne(*engine, tape, plainOptions, in, 20000);
  for (auto [kind, layout] : {std::pair{KernelKind::Register, ScratchLayout::SoA},
                              std::pair{KernelKind::Scratch, ScratchLayout::AoS}}) {
    KernelOptions o = optionsFor(tape, kind, 30, layout, 1);
    o.config.math = MathContract::Approx;
    expectSameBits(plain, runOne(*engine, tape, o, in, 20000), std::string(toString(kind)) + ", approximate math");
  }
  // The runtime passed the field to the emitter: its dumped source spells the native functions.
  EXPECT_NE(testutil::dumpedSource(*engine, tape, plainOptions, "tapelab-opencl-approx").find("native_exp("),
            std::string::npos);
  plainOptions.config.math = MathContract::Ieee;
  const RunResult exact = runOne(*engine, tape, plainOptions, in, 20000);
  std::printf("OpenCL approximate math %s the default's price here\n",
              exact.markets[0].value == plain.markets[0].value ? "gives" : "moves");
}

// markets=loop: a register kernel whose segments loop over the markets, forward and reverse (one
// copy of the code; the persistent per-market values and their adjoints in arrays the loop indexes) gives each market the bits
// of its own single-market kernel, with a flat plan and with a two-level one (whose inner leaves stay
// unrolled); the source has the loop, and kernels it does not apply to are unchanged.
TEST(OpenCLKernels, MarketLoopGivesTheSameBits) {
  REQUIRE_OPENCL();
  const Tape tape = products::asianCall(12);
  std::vector<std::vector<double>> ladder{tape.inputDefaults, tape.inputDefaults, tape.inputDefaults};
  ladder[1][0] = 95.0;
  ladder[2][0] = 105.0;
  KernelOptions flat = optionsFor(tape, KernelKind::Register, 3, ScratchLayout::SoA, 3);
  KernelOptions nested = flat;
  PlanOptions po;
  po.segments = 3;
  po.innerSegments = 2;
  nested.plan = makeStrategyPlan("two-level", tape, po);
  for (KernelOptions o : {flat, nested}) {
    o.config.markets = MarketCode::Loop;
    const RunResult looped = runOne(*engine, tape, o, ladder);
    KernelOptions single = o;
    single.markets = 1;
    for (size_t m = 0; m < ladder.size(); ++m) {
      RunResult one = runOne(*engine, tape, single, {ladder[m]});
      RunResult fromLoop = looped;
      fromLoop.markets = {looped.markets[m]};
      expectSameBits(one, fromLoop, "market loop, plan " + o.plan.strategy + ", market " + std::to_string(m));
    }
  }
  KernelOptions loop = flat;
  loop.config.markets = MarketCode::Loop;
  EXPECT_NE(emitKernel(tape, loop, openclDialect()).source.find("for (int tl_m = 0; tl_m < 3; ++tl_m)"),
            std::string::npos);
  KernelOptions joint = loop;
  joint.config.marketOrder = MarketOrder::Joint;
  const EmittedKernel jointKernel = emitKernel(tape, joint, openclDialect());
  EXPECT_EQ(jointKernel.source.find("tl_m"), std::string::npos) << "joint order: no loop";
  ASSERT_EQ(jointKernel.configUnused.size(), 1u);
  EXPECT_EQ(jointKernel.configUnused[0], "markets=loop: markets in joint order");
}

// The market loop's shared adjoint arrays: an input recorded mid-tape (its adjoint first written in
// segment 2, last in segment 1) must keep its array after its segments, for the Greeks read after the
// sweep, though two inputs used only in segment 0 then need arrays too. The Greeks equal the plain kernel's.
TEST(OpenCLKernels, MarketLoopKeepsALateInputsAdjoint) {
  REQUIRE_OPENCL();
  Recorder rec;
  Var x = rec.input("x", 1.25), w = rec.input("w", 0.5);
  Var z0 = rec.randn(0);
  Var a = exp(x * z0 * 0.25);
  Var b = a * a + x * w;
  Var c = sqrt(b);
  Var y = rec.input("y", 0.75);
  Var d = c * y + z0;
  Var e = log(abs(d) + 2.0);
  Var f = e * y + c;
  rec.output(abs(f) * e);
  const Tape tape = rec.finish();
  const int32_t yAt = y.node();
  KernelOptions o;
  o.precision = Precision::F32;
  o.kind = KernelKind::Register;
  o.markets = 2;
  o.plan = makePlan(tape, {0, yAt, yAt + 3, tape.size()}, "late input");
  o.config.markets = MarketCode::Loop;
  const std::vector<std::vector<double>> markets{{1.25, 0.5, 0.75}, {1.1, 0.6, 0.8}};
  KernelOptions plain = optionsFor(tape, KernelKind::Plain, 0, ScratchLayout::SoA, 2);
  expectSameBits(runOne(*engine, tape, plain, markets, 3000), runOne(*engine, tape, o, markets, 3000),
                 "market loop, an input in segment 1");
  EXPECT_NE(emitKernel(tape, o, openclDialect()).source.find("float ds0[2];"), std::string::npos)
      << "the adjoint arrays are shared";
}

// draws=stored: recomputed segments read the forward sweep's draws from the scratch buffer instead of
// drawing again; draws=prefill: a loop fills those slots before the forward sweep, which reads them too.
// The plain kernel's bits, with the draw slots beside the scratch kind's own (AoS, 2 markets) and in a
// nested plan, over 12 draws (three whole Philox calls: prefill's rolled loop) and 14 (a call of two words).
TEST(OpenCLKernels, StoredDrawsGiveTheSameBits) {
  REQUIRE_OPENCL();
  for (int steps : {12, 14})
    for (DrawSource source : {DrawSource::Stored, DrawSource::Prefill}) {
      const std::string name = std::to_string(steps) + " steps, draws " + (source == DrawSource::Stored ? "stored" : "prefill");
      const Tape tape = products::asianCall(steps);
      std::vector<std::vector<double>> ladder{tape.inputDefaults, tape.inputDefaults};
      ladder[1][0] = 95.0;
      KernelOptions plainOptions = optionsFor(tape, KernelKind::Plain, 0, ScratchLayout::SoA, 2);
      const RunResult plain = runOne(*engine, tape, plainOptions, ladder);
      KernelOptions scratch = optionsFor(tape, KernelKind::Scratch, 30, ScratchLayout::AoS, 2);
      scratch.config.draws = source;
      expectSameBits(plain, runOne(*engine, tape, scratch, ladder), "scratch aos, " + name);
      KernelOptions nested = optionsFor(tape, KernelKind::Register, 0, ScratchLayout::SoA, 2);
      PlanOptions po;
      po.segments = 3;
      po.innerSegments = 2;
      nested.plan = makeStrategyPlan("two-level", tape, po);
      nested.config.draws = source;
      expectSameBits(plain, runOne(*engine, tape, nested, ladder), "register, two-level plan, " + name);
      const EmittedKernel emitted = emitKernel(tape, nested, openclDialect());
      EXPECT_EQ(emitted.scratchSlots, steps) << "one slot per draw, " << name;
      EXPECT_EQ(emitted.source.find("tl_boxMuller(tl_dw.") != std::string::npos, source == DrawSource::Prefill) << name;
      EXPECT_EQ(emitted.source.find("for (uint tl_dg = 0u; tl_dg < 3u; ++tl_dg)") != std::string::npos,
                source == DrawSource::Prefill) << name << ": three whole calls in the loop";
      KernelOptions valueOnly = nested;
      valueOnly.greeks = false;
      const EmittedKernel k = emitKernel(tape, valueOnly, openclDialect());
      EXPECT_EQ(k.scratchSlots, 0) << "no reverse sweep, nothing to store";
      EXPECT_EQ(k.configUnused, (std::vector<std::string>{source == DrawSource::Stored ? "draws=stored: value only"
                                                                                         : "draws=prefill: value only",
                                                          "first_terms=set: no adjoints (a tangent kernel, or no Greeks)"}));
    }
}

// draws=prefill over draw indices that repeat and skip (no whole Philox call: every group in a block of its
// own, a slot per distinct index): the plain kernel's bits.
TEST(OpenCLKernels, PrefilledIrregularDrawsGiveTheSameBits) {
  REQUIRE_OPENCL();
  Tape tape = products::asianCall(8);
  const uint32_t indices[] = {3, 3, 0, 9, 9, 10, 11, 12};
  size_t k = 0;
  for (int32_t i = 0; i < tape.size(); ++i)
    if (tape.op[i] == Op::Randn) tape.imm[i] = indices[k++];
  ASSERT_EQ(k, 8u);
  const std::vector<std::vector<double>> ladder{tape.inputDefaults};
  const RunResult plain = runOne(*engine, tape, optionsFor(tape, KernelKind::Plain, 0, ScratchLayout::SoA), ladder);
  for (KernelKind kind : {KernelKind::Register, KernelKind::Scratch}) {
    KernelOptions o = optionsFor(tape, kind, kind == KernelKind::Scratch ? 20 : 0, ScratchLayout::AoS);
    o.config.draws = DrawSource::Prefill;
    const EmittedKernel emitted = emitKernel(tape, o, openclDialect());
    EXPECT_EQ(emitted.source.find("tl_dg"), std::string::npos) << "no rolled loop: no whole call";
    EXPECT_NE(emitted.source.find("tl_drawWords(3u,"), std::string::npos) << "index 12's call";
    expectSameBits(plain, runOne(*engine, tape, o, ladder), std::string(toString(kind)) + ", irregular draws");
  }
}

TEST(OpenCLKernels, RepeatGivesSameBits) {
  REQUIRE_OPENCL();
  const Tape tape = products::asianCall(24);
  auto k = engine->compile(tape, optionsFor(tape, KernelKind::Scratch, 30, ScratchLayout::AoS));
  const RunResult a = k->run({tape.inputDefaults}, kPaths, kSeed);
  const RunResult b = k->run({tape.inputDefaults}, kPaths, kSeed);
  expectSameBits(a, b, "repeat");
  const RunResult c = k->run({tape.inputDefaults}, kPaths, kSeed + 1);
  EXPECT_NE(a.markets[0].value, c.markets[0].value) << "another seed must give other paths";
}

TEST(OpenCLKernels, ScratchThatDoesNotFitIsChunked) {
  REQUIRE_OPENCL();
  const Tape tape = products::asianCall(24);
  const KernelOptions o = optionsFor(tape, KernelKind::Scratch, 20, ScratchLayout::SoA);
  auto k = engine->compile(tape, o);
  const RunResult whole = k->run({tape.inputDefaults}, 5000, kSeed);
  const int64_t wholeBytes = k->stats().scratchBytes;
  ASSERT_GT(wholeBytes, 0);
  // A budget of two workgroups' scratch: 5000 paths need 20 groups, so at least 10 dispatches.
  const int64_t perGroup = wholeBytes / ((5000 + 255) / 256);
  KernelOptions small = o;
  small.dispatch.scratchBudget = static_cast<uint64_t>(2 * perGroup);
  auto chunked = engine->compile(tape, small);
  const RunResult parts = chunked->run({tape.inputDefaults}, 5000, kSeed);
  const int64_t chunkBytes = chunked->stats().scratchBytes;
  EXPECT_LE(chunkBytes, 2 * perGroup);
  expectSameBits(whole, parts, "chunked launch");
}

// A run's dispatches (RunResult::dispatches): one entry per dispatch, in order, their groups adding up
// to the run's, each one's partials on the host within the run, after the setup and after the one
// before. OpenCL times no kernel: those fields stay -1.
TEST(OpenCLKernels, RunListsItsDispatches) {
  REQUIRE_OPENCL();
  const Tape tape = products::asianCall(24);
  KernelOptions o = optionsFor(tape, KernelKind::Register);
  o.dispatch.maxGroups = 3;
  o.dispatch.timeline = true;  // asked for, but this engine has no device timestamps
  const RunResult r = runOne(*engine, tape, o, {tape.inputDefaults}, 5000);
  const uint32_t groups = (5000 + 255) / 256;  // 20: 7 dispatches of 3, 3, ..., 2
  ASSERT_EQ(r.dispatches.size(), 7u);
  uint32_t total = 0;
  double before = r.setupSeconds;
  EXPECT_GE(r.setupSeconds, 0.0);
  for (const DispatchTiming& d : r.dispatches) {
    total += d.groups;
    EXPECT_LE(d.groups, 3u);
    EXPECT_GE(d.readySeconds, before);
    EXPECT_GE(d.sumSeconds, 0.0);
    EXPECT_EQ(d.kernelSeconds, -1.0);
    EXPECT_EQ(d.gapSeconds, -1.0);
    before = d.readySeconds + d.sumSeconds;
  }
  EXPECT_EQ(total, groups);
  EXPECT_LE(before, r.seconds);
}

TEST(OpenCLKernels, AgreesWithReferenceWithinFp32Tolerance) {
  REQUIRE_OPENCL();
  // Tolerance. The kernel and the reference draw the same uniforms (exact in
  // fp32) and run the same expression tree; the differences are fp32
  // rounding: each op adds at most 2^-24 relative error, and a path's value
  // and adjoints go through at most ~n ops of the 744-node tape, so the
  // worst-case relative error per path is ~744 * 6e-8 = 4.4e-5 (random
  // rounding makes it ~sqrt(n) times smaller in practice); fp32 Kahan and
  // tree sums add O(log2 256) ulps. So 1e-4 relative to the quantity's scale
  // (its magnitude, or the value's for a near-zero Greek). The payoff's kink
  // could flip a path sitting within 1e-5 of the strike between fp32 and
  // double; with 1000 paths none does for this seed, and such a flip would
  // show here as a failure, not be hidden by the tolerance.
  const Tape tape = products::asianCall(120);
  const std::vector<std::vector<double>> in{tape.inputDefaults};
  const RunResult ref = testutil::makeReference("reference")->compile(tape, optionsFor(tape, KernelKind::Plain))->run(in, kPaths, kSeed);
  for (KernelKind kind : {KernelKind::Plain, KernelKind::Scratch}) {
    const RunResult got = runOne(*engine, tape, optionsFor(tape, kind, 100), in);
    const MarketResult& r = ref.markets[0];
    const MarketResult& g = got.markets[0];
    const double scale = std::abs(r.value);
    EXPECT_NEAR(g.value, r.value, 1e-4 * scale) << "value " << g17(g.value) << " vs reference " << g17(r.value);
    for (size_t k = 0; k < r.greeks.size(); ++k)
      EXPECT_NEAR(g.greeks[k], r.greeks[k], 1e-4 * std::max(std::abs(r.greeks[k]), scale * 1e-2))
          << tape.inputNames[k] << ": " << g17(g.greeks[k]) << " vs reference " << g17(r.greeks[k]);
  }
}

TEST(OpenCLKernels, Fp64WhereTheDeviceHasIt) {
  REQUIRE_OPENCL();
  const Tape tape = products::asianCall(24);
  KernelOptions plain = optionsFor(tape, KernelKind::Plain);
  plain.precision = Precision::F64;
  if (!engine->caps().fp64) {
    EXPECT_THROW(engine->compile(tape, plain), std::invalid_argument);
    GTEST_SKIP() << "device has no fp64";
  }
  KernelOptions scratch = optionsFor(tape, KernelKind::Scratch, 30, ScratchLayout::AoS);
  scratch.precision = Precision::F64;
  const std::vector<std::vector<double>> in{tape.inputDefaults};
  const RunResult a = runOne(*engine, tape, plain, in);
  expectSameBits(a, runOne(*engine, tape, scratch, in), "fp64 scratch");
  const RunResult ref = testutil::makeReference("reference")->compile(tape, plain)->run(in, kPaths, kSeed);
  // Same tree in double on both sides; only the sum order differs.
  EXPECT_NEAR(a.markets[0].value, ref.markets[0].value, 1e-12 * std::abs(ref.markets[0].value));
}
