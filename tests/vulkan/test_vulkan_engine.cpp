// The vulkan engine on whatever Vulkan device is here (lavapipe in CI):
// checkpointed kernels return the plain kernel's bits, a fused 3-market
// dispatch returns three single-market dispatches' bits, a repeat returns the
// same bits, and results agree with the double reference within an fp32
// tolerance, also for path counts that are not a multiple of the block and
// for path indices beyond 2^32.
//
// lavapipe compiles slowly (seconds per kernel of a few hundred nodes), so
// compiled kernels are shared between the tests of this file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <random>

#include "api/knobs.h"
#include "gpu/codegen/emit.h"
#include "gpu/vulkan/device.h"
#include "gpu/vulkan/spirv.h"
#include "gpu/vulkan/vulkan.h"
#include "planner/strategies.h"
#include "reference/interpreter.h"
#include "tape/philox.h"
#include "tape/products/products.h"
#include "tape/recorder.h"
#include "tests/common/cache_faults.h"
#include "tests/common/reference_engines.h"
#include "tests/common/test_util.h"
#include "util/files.h"

using namespace tapelab;
using testutil::expectSameBits;
using testutil::g17;

namespace {

constexpr uint64_t kSeed = 20261129;

Engine* vulkanEngine(std::string* why) {
  static std::unique_ptr<Engine>& engine = *new std::unique_ptr<Engine>;
  static std::string reason;
  static bool tried = false;
  if (!tried) {
    tried = true;
    engine = makeVulkanEngine(engineSettingsFromEnvironment());
    const EngineCaps caps = engine->caps();
    if (!caps.usable) {
      reason = caps.reason;
      engine.reset();
    }
  }
  *why = reason;
  return engine.get();
}

#define REQUIRE_VULKAN()                  \
  std::string why_;                       \
  Engine* engine = vulkanEngine(&why_);   \
  if (!engine) GTEST_SKIP() << "vulkan unavailable: " << why_

KernelOptions options(KernelKind kind, const Plan& plan = {}, int markets = 1, bool greeks = true,
                      ScratchLayout layout = ScratchLayout::SoA) {
  KernelOptions o;
  o.precision = Precision::F32;
  o.kind = kind;
  o.plan = plan;
  o.markets = markets;
  o.greeks = greeks;
  o.config.layout = layout;
  o.config.math = MathContract::Glsl;  // a Vulkan shader's contract (KernelConfig{} says ieee)
  return o;
}

// Compiled kernels, shared by the tests (key: a test-chosen name).
Kernel& kernel(Engine* engine, const std::string& key, const Tape& tape, const KernelOptions& o) {
  // Never destroyed: at exit the NVIDIA driver may be gone before static
  // destructors run (the H200 run crashed there with exit 139).
  static auto& cache = *new std::map<std::string, std::unique_ptr<Kernel>>;
  auto& k = cache[key];
  if (!k) k = engine->compile(tape, o);
  return *k;
}

const Tape& asian120() {
  static const Tape t = products::asianCall(120);
  return t;
}

Plan window(const Tape& t, int segments) {
  PlanOptions po;
  po.segments = segments;
  return makeStrategyPlan("window", t, po);
}

// fp32 against the double reference, on the same draws (so Monte-Carlo noise
// cancels and only rounding remains). Every path value is a chain of a few
// hundred dependent fp32 operations (about 6 per step) on intermediates up to
// ~20x the result (the Asian's average of spots near 100 minus a strike near
// 100 leaves a payoff near 5): relative rounding per path ~ 6e-8 x 720 x 20
// ~ 1e-3 in the worst case, and a mean of paths is no worse than its worst
// path. GLSL's exp/log may be a few ulp off on top, still far inside. A
// kernel that mis-indexes a draw, a path or an adjoint is off by much more.
constexpr double kF32Rel = 1e-3, kF32Abs = 1e-5;

void expectNearReference(const RunResult& ref, const RunResult& gpu, const std::string& what) {
  ASSERT_EQ(ref.markets.size(), gpu.markets.size());
  for (size_t m = 0; m < ref.markets.size(); ++m) {
    const MarketResult &a = ref.markets[m], &b = gpu.markets[m];
    EXPECT_NEAR(b.value, a.value, kF32Rel * std::abs(a.value) + kF32Abs) << what << " value";
    EXPECT_NEAR(b.valueStderr, a.valueStderr, kF32Rel * std::abs(a.valueStderr) + kF32Abs) << what << " value stderr";
    for (size_t i = 0; i < a.greeks.size(); ++i)
      EXPECT_NEAR(b.greeks[i], a.greeks[i], kF32Rel * std::abs(a.greeks[i]) + kF32Abs) << what << " greek " << i;
  }
}

RunResult reference(const Tape& t, const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) {
  KernelOptions o;
  o.precision = Precision::F64;
  return testutil::makeReference("reference")->compile(t, o)->run(inputs, paths, seed);
}

// A random tape that uses every op and stays finite: values kept in about
// [0.05, 20] by construction, so log/sqrt/div never see a bad argument.
Tape randomTape(uint32_t seed, int steps) {
  std::mt19937 rng(seed);
  auto pick = [&](const std::vector<Var>& pool) {
    return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
  };
  Recorder rec;
  std::vector<Var> pool;
  for (int i = 0; i < 3; ++i)
    pool.push_back(rec.input("x" + std::to_string(i), 0.5 + 1.5 * std::uniform_real_distribution<double>(0, 1)(rng)));
  uint32_t draws = 0;
  for (int s = 0; s < steps; ++s) {
    const Var x = pick(pool), y = pick(pool);
    Var r;
    switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
      case 0: r = exp(rec.randn(draws++) * 0.1) * x; break;
      case 1: r = sqrt(x * y); break;
      case 2: r = (x + y) * 0.5; break;
      case 3: r = sqrt(x / y); break;
      case 4: r = max(x, y) - min(x, y) * 0.5; break;
      case 5: r = abs(x - y) + 0.25; break;
      default: r = exp(-log(x)) * 0.5 + x * 0.5; break;
    }
    pool.push_back(r);
    if (pool.size() > 10) pool.erase(pool.begin() + 3);
  }
  Var out = pool.back();
  for (size_t i = pool.size() - 4; i + 1 < pool.size(); ++i) out = out + pool[i];
  rec.output(out);
  Tape t = rec.finish();
  t.name = "random-" + std::to_string(seed);
  return t;
}

// (The H200 run sets VK_DRIVER_FILES itself: ScopedEnv restores it.)
using testutil::ScopedEnv;

// x * randn(0): each path's value is its first draw.
Tape drawTape() {
  Recorder rec;
  Var x = rec.input("x", 1.0);
  rec.output(x * rec.randn(0));
  return rec.finish();
}

// The same kernel, its runs starting at path `first`.
KernelOptions fromPath(KernelOptions o, uint64_t first) {
  o.dispatch.pathOffset = first;
  return o;
}

}  // namespace

// ---------------------------------------------------------------- exactness

class VulkanAsian120 : public ::testing::TestWithParam<int> {};

TEST_P(VulkanAsian120, RegisterEqualsPlain) {
  REQUIRE_VULKAN();
  const Tape& t = asian120();
  const uint64_t paths = 1000;  // not a multiple of the 256-path block
  const RunResult plain = kernel(engine, "asian120-plain", t, options(KernelKind::Plain)).run({t.inputDefaults}, paths, kSeed);
  const int segments = GetParam();
  const Plan plan = window(t, segments);
  ASSERT_EQ(plan.segments(), segments);
  Kernel& reg = kernel(engine, "asian120-register-" + std::to_string(segments), t, options(KernelKind::Register, plan));
  expectSameBits(plain, reg.run({t.inputDefaults}, paths, kSeed), "register, " + std::to_string(segments) + " segments");
}

INSTANTIATE_TEST_SUITE_P(Segments, VulkanAsian120, ::testing::Values(2, 7, 16));

TEST(VulkanExact, ScratchEqualsPlainInBothLayouts) {
  REQUIRE_VULKAN();
  const Tape t = products::asianCall(24);
  const uint64_t paths = 700;
  const RunResult plain = kernel(engine, "asian24-plain", t, options(KernelKind::Plain)).run({t.inputDefaults}, paths, kSeed);
  PlanOptions po;
  po.segLen = 40;
  const Plan uniform = makeStrategyPlan("uniform", t, po);
  for (ScratchLayout layout : {ScratchLayout::SoA, ScratchLayout::AoS}) {
    Kernel& k = kernel(engine, std::string("asian24-scratch-") + toString(layout), t,
                       options(KernelKind::Scratch, uniform, 1, true, layout));
    expectSameBits(plain, k.run({t.inputDefaults}, paths, kSeed), std::string("scratch ") + toString(layout));
  }
}

TEST(VulkanExact, RandomTapesRegisterAndScratchEqualPlain) {
  REQUIRE_VULKAN();
  for (uint32_t seed : {1u, 2u, 3u}) {
    const Tape t = randomTape(seed, 30);
    SCOPED_TRACE(t.name + ", " + std::to_string(t.size()) + " nodes");
    const std::vector<std::vector<double>> in{t.inputDefaults};
    const uint64_t paths = 300;
    const RunResult plain = engine->compile(t, options(KernelKind::Plain))->run(in, paths, kSeed + seed);
    const Plan w = window(t, 2 + static_cast<int>(seed) * 2);
    expectSameBits(plain, engine->compile(t, options(KernelKind::Register, w))->run(in, paths, kSeed + seed),
                   "register window");
    PlanOptions po;
    po.segLen = 17;
    const Plan u = makeStrategyPlan("uniform", t, po);
    expectSameBits(plain, engine->compile(t, options(KernelKind::Scratch, u))->run(in, paths, kSeed + seed),
                   "scratch uniform");
  }
}

TEST(VulkanExact, ThreeMarketsEqualThreeSingleDispatches) {
  REQUIRE_VULKAN();
  const Tape t = products::asianCall(24);
  const Plan plan = window(t, 4);
  std::vector<std::vector<double>> ladder;
  for (double spot : {90.0, 100.0, 110.0}) {
    ladder.push_back(t.inputDefaults);
    ladder.back()[0] = spot;
  }
  const uint64_t paths = 600;
  for (KernelKind kind : {KernelKind::Register, KernelKind::Plain}) {
    const std::string name = kind == KernelKind::Register ? "asian24-register-4" : "asian24-plain";
    const RunResult fused = kernel(engine, name + "-3m", t, options(kind, plan, 3)).run(ladder, paths, kSeed);
    Kernel& single = kernel(engine, name, t, options(kind, plan));
    for (size_t m = 0; m < ladder.size(); ++m) {
      RunResult one = single.run({ladder[m]}, paths, kSeed);
      RunResult picked = fused;
      picked.markets = {fused.markets[m]};
      expectSameBits(one, picked, name + " market " + std::to_string(m));
    }
  }
}

namespace {
// Three markets: the tape's defaults with spot 100 (its default), 90 and 110.
std::vector<std::vector<double>> spotLadder(const Tape& t) {
  std::vector<std::vector<double>> ladder{t.inputDefaults, t.inputDefaults, t.inputDefaults};
  ladder[1][0] = 90.0;
  ladder[2][0] = 110.0;
  return ladder;
}
}  // namespace

// Where the lanes' Kahan sums live (registers, workgroup-local) moves values, never operations: the
// same bits, in a fused register kernel and a scratch AoS kernel.
TEST(VulkanExact, KahanPlacesGiveTheSameBits) {
  REQUIRE_VULKAN();
  const Tape t = products::asianCall(24);
  const std::vector<std::vector<double>> ladder = spotLadder(t);
  const RunResult local =
      kernel(engine, "asian24-register-4-3m", t, options(KernelKind::Register, window(t, 4), 3)).run(ladder, 600, kSeed);
  KernelOptions inRegisters = options(KernelKind::Register, window(t, 4), 3);
  inRegisters.config.sums = KahanPlace::Registers;
  expectSameBits(local, engine->compile(t, inRegisters)->run(ladder, 600, kSeed), "register, sums in registers");
  const Tape r = randomTape(9, 30);
  PlanOptions po;
  po.segLen = 23;
  const Plan plan = makeStrategyPlan("uniform", r, po);
  const RunResult plain = engine->compile(r, options(KernelKind::Plain))->run({r.inputDefaults}, 400, kSeed);
  KernelOptions o = options(KernelKind::Scratch, plan, 1, true, ScratchLayout::AoS);
  o.config.sums = KahanPlace::Registers;
  expectSameBits(plain, engine->compile(r, o)->run({r.inputDefaults}, 400, kSeed), "scratch aos, sums in registers");
}

// outline_draws=on: GLSL cannot say "not inlined", so the engine sets SPIR-V's DontInline on tl_philox and
// tl_boxMuller after shaderc. The words say it (and nothing else marked), the kernels keep their bits.
TEST(VulkanExact, OutlineDrawsMarkTheHelpersAndKeepTheBits) {
  const std::string glsl =
      "#version 450\nlayout(local_size_x = 1) in;\nlayout(std430, binding = 0) buffer B { uint b[]; };\n"
      "uint tl_philox(uint x) { return x * 3u; }\nuint other(uint x) { return x + 1u; }\n"
      "void main() { b[0] = tl_philox(b[0]) + other(b[1]); }\n";
  constexpr uint32_t kOpFunction = 54;
  auto controls = [](const std::vector<uint32_t>& w) {
    std::vector<uint32_t> c;
    for (size_t i = 5; i < w.size(); i += w[i] >> 16)
      if ((w[i] & 0xFFFFu) == kOpFunction) c.push_back(w[i + 3]);
    return c;
  };
  const vulkan::Spirv plainWords = vulkan::compileGlsl(glsl, "", "");
  vulkan::Spirv marked = vulkan::compileGlsl(glsl, "", "", outlinedDrawHelpers());
  const std::vector<uint32_t> before = controls(plainWords.words), after = controls(marked.words);
  ASSERT_EQ(before.size(), 3u) << "main, tl_philox, other";
  EXPECT_EQ(std::count(before.begin(), before.end(), 2u), 0);
  EXPECT_EQ(std::count(after.begin(), after.end(), 2u), 1) << "tl_philox alone is DontInline";
  EXPECT_EQ(vulkan::markDontInline(marked.words, {"tl_philo"}), 0) << "a prefix of a name is not the name";

  REQUIRE_VULKAN();
  const Tape t = products::asianCall(24);
  const std::vector<std::vector<double>> ladder = spotLadder(t);
  for (const KernelKind kind : {KernelKind::Plain, KernelKind::Register}) {
    KernelOptions o = options(kind, kind == KernelKind::Plain ? Plan{} : window(t, 4), 3);
    const RunResult inlined = engine->compile(t, o)->run(ladder, 600, kSeed);
    o.config.outlineDraws = true;
    expectSameBits(inlined, engine->compile(t, o)->run(ladder, 600, kSeed),
                   std::string(toString(kind)) + ", draws out of line");
  }
}

// lanes=1: one path per lane changes the blocks (so the sums' rounding), not the
// promise: plain, register and a fused 3-market register kernel built with it give the same bits,
// and the price is the default's to rounding.
TEST(VulkanExact, OnePathPerLaneKeepsThePromise) {
  REQUIRE_VULKAN();
  const Tape t = products::asianCall(24);
  const std::vector<std::vector<double>> ladder = spotLadder(t);
  const uint64_t paths = 1000;
  auto onePerLane = [&](KernelKind kind, int markets) {
    KernelOptions o = options(kind, kind == KernelKind::Plain ? Plan{} : window(t, 4), markets);
    o.config.lanes = 1;
    return o;
  };
  const RunResult plain = engine->compile(t, onePerLane(KernelKind::Plain, 1))->run({ladder[0]}, paths, kSeed);
  const RunResult reg = engine->compile(t, onePerLane(KernelKind::Register, 1))->run({ladder[0]}, paths, kSeed);
  expectSameBits(plain, reg, "one path per lane: plain then register");
  const RunResult fused = engine->compile(t, onePerLane(KernelKind::Register, 3))->run(ladder, paths, kSeed);
  RunResult first = fused;
  first.markets = {fused.markets[0]};
  expectSameBits(plain, first, "one path per lane: plain then the fused kernel's market 0");
  const RunResult usual = kernel(engine, "asian24-plain", t, options(KernelKind::Plain)).run({ladder[0]}, paths, kSeed);
  EXPECT_NEAR(plain.markets[0].value, usual.markets[0].value, 1e-5 * std::abs(usual.markets[0].value));
}

// draws=stored: a register kernel that keeps its draws in the scratch buffer gives the plain
// kernel's bits, also when a submit holds several dispatches that reuse that buffer (two groups per
// dispatch here). The barrier between them once went only to the scratch kind: on an H200 the stored
// draws of overlapping dispatches then mixed (delta 0.56109 for 0.56130, 2026-12-01).
TEST(VulkanExact, StoredDrawsOverSeveralDispatchesGiveTheSameBits) {
  REQUIRE_VULKAN();
  const Tape t = products::asianCall(24);
  const std::vector<std::vector<double>> ladder = spotLadder(t);
  const RunResult plain = kernel(engine, "asian24-plain", t, options(KernelKind::Plain)).run({ladder[0]}, 3000, kSeed);
  for (DrawSource source : {DrawSource::Stored, DrawSource::Prefill}) {  // prefill: the forward sweep reads them too
    KernelOptions o = options(KernelKind::Register, window(t, 4), 3);
    o.config.draws = source;
    // Philox unrolled, as on a GPU: prefill's loop asks for [[dont_unroll]]'s extension itself (on the H200 it
    // once did not: GL_EXT_control_flow_attributes not requested, 2026-12-03d).
    o.config.philoxUnrolled = source == DrawSource::Prefill;
    o.dispatch.maxGroups = 2;
    const RunResult stored = engine->compile(t, o)->run(ladder, 3000, kSeed);
    RunResult first = stored;
    first.markets = {stored.markets[0]};
    expectSameBits(plain, first, std::string("register, 3 markets, draws ") +
                                     (source == DrawSource::Stored ? "stored" : "prefill") + ", 2 groups a dispatch");
  }
}

// A register kernel over `segments` windows of asian24 with 3 markets and `o`'s loop fields: its dumped
// GLSL holds `loopHeader` and the extension [[dont_unroll]] needs (Philox unrolled, as on a GPU, so the
// loop must ask for it itself), and each market has the bits of the single-market kernel.
static void expectLoopedMarketsAsAlone(Engine* engine, KernelOptions o, int segments, const std::string& name, const std::string& loopHeader) {
  const Tape t = products::asianCall(24);
  const std::vector<std::vector<double>> ladder = spotLadder(t);
  o.plan = window(t, segments);
  o.markets = 3;
  o.config.philoxUnrolled = true;
  const std::string source = testutil::dumpedSource(*engine, t, o, "tapelab-vulkan-" + name);
  EXPECT_NE(source.find(loopHeader), std::string::npos) << name;
  EXPECT_NE(source.find("GL_EXT_control_flow_attributes"), std::string::npos) << name;
  const RunResult looped = engine->compile(t, o)->run(ladder, 600, kSeed);
  Kernel& single = kernel(engine, "asian24-register-" + std::to_string(segments), t,
                          options(KernelKind::Register, window(t, segments)));
  for (size_t m = 0; m < ladder.size(); ++m) {
    RunResult fromLoop = looped;
    fromLoop.markets = {looped.markets[m]};
    expectSameBits(single.run({ladder[m]}, 600, kSeed), fromLoop, name + ", market " + std::to_string(m));
  }
}

// markets=loop on GLSL: the markets' forward and reverse as a rolled loop over arrays (OpenCL's
// test covers a nested plan and an input recorded mid-tape).
TEST(VulkanExact, MarketLoopGivesTheSameBits) {
  REQUIRE_VULKAN();
  KernelOptions o = options(KernelKind::Register);
  o.config.markets = MarketCode::Loop;
  expectLoopedMarketsAsAlone(engine, o, 4, "market-loop", "[[dont_unroll]] for (int tl_m = 0; tl_m < 3; ++tl_m)");
}

TEST(VulkanExact, ScratchMarketsEqualSingleDispatches) {
  REQUIRE_VULKAN();
  const Tape t = randomTape(9, 30);
  PlanOptions po;
  po.segLen = 23;
  const Plan plan = makeStrategyPlan("uniform", t, po);
  std::vector<std::vector<double>> two{t.inputDefaults, t.inputDefaults};
  two[1][1] *= 1.25;
  for (ScratchLayout layout : {ScratchLayout::SoA, ScratchLayout::AoS}) {
    const RunResult fused = engine->compile(t, options(KernelKind::Scratch, plan, 2, true, layout))->run(two, 400, kSeed);
    std::unique_ptr<Kernel> single = engine->compile(t, options(KernelKind::Plain));
    for (size_t m = 0; m < 2; ++m) {
      RunResult picked = fused;
      picked.markets = {fused.markets[m]};
      expectSameBits(single->run({two[m]}, 400, kSeed), picked,
                     std::string("scratch ") + toString(layout) + " market " + std::to_string(m));
    }
  }
}

TEST(VulkanExact, RepeatGivesTheSameBits) {
  REQUIRE_VULKAN();
  const Tape& t = asian120();
  Kernel& k = kernel(engine, "asian120-register-7", t, options(KernelKind::Register, window(t, 7)));
  const RunResult a = k.run({t.inputDefaults}, 1000, kSeed);
  const RunResult b = k.run({t.inputDefaults}, 1000, kSeed);
  expectSameBits(a, b, "repeat");
  const RunResult c = k.run({t.inputDefaults}, 1000, kSeed + 1);
  EXPECT_NE(a.markets[0].value, c.markets[0].value) << "another seed, other draws";
}

// Kernels of one device built and run on several threads at once (compare
// builds an engine's kernels in parallel) give the bits they give one at a time.
TEST(VulkanExact, KernelsBuiltAndRunOnSeveralThreads) {
  REQUIRE_VULKAN();
  std::vector<Tape> tapes;
  for (uint32_t seed : {21u, 22u, 23u, 24u}) tapes.push_back(randomTape(seed, 12));
  auto optionsFor = [](const Tape& t, size_t i) {
    return i % 2 ? options(KernelKind::Register, window(t, 3)) : options(KernelKind::Plain);
  };
  std::vector<RunResult> serial;
  for (size_t i = 0; i < tapes.size(); ++i)
    serial.push_back(engine->compile(tapes[i], optionsFor(tapes[i], i))->run({tapes[i].inputDefaults}, 700, kSeed));
  std::vector<std::future<RunResult>> parallel;
  for (size_t i = 0; i < tapes.size(); ++i)
    parallel.push_back(std::async(std::launch::async, [&, i] {
      auto k = engine->compile(tapes[i], optionsFor(tapes[i], i));
      RunResult r = k->run({tapes[i].inputDefaults}, 700, kSeed);
      EXPECT_EQ(r.paths, 700u);
      return k->run({tapes[i].inputDefaults}, 700, kSeed);
    }));
  for (size_t i = 0; i < tapes.size(); ++i) expectSameBits(serial[i], parallel[i].get(), tapes[i].name + " on its own thread");
}

TEST(VulkanExact, ValueOnlyKernelGivesTheSameValue) {
  REQUIRE_VULKAN();
  const Tape t = products::asianCall(24);
  const RunResult full = kernel(engine, "asian24-plain", t, options(KernelKind::Plain)).run({t.inputDefaults}, 700, kSeed);
  const RunResult value =
      engine->compile(t, options(KernelKind::Plain, {}, 1, false))->run({t.inputDefaults}, 700, kSeed);
  EXPECT_EQ(value.markets[0].value, full.markets[0].value);
  for (double g : value.markets[0].greeks) EXPECT_EQ(g, 0.0);
}

// ---------------------------------------------------------------- reference

TEST(VulkanReference, Asian120AgreesWithDoubleReference) {
  REQUIRE_VULKAN();
  const Tape& t = asian120();
  const uint64_t paths = 1000;
  const RunResult gpu = kernel(engine, "asian120-plain", t, options(KernelKind::Plain)).run({t.inputDefaults}, paths, kSeed);
  expectNearReference(reference(t, {t.inputDefaults}, paths, kSeed), gpu, "asian120");
}

TEST(VulkanReference, RandomTapesAgreeWithDoubleReference) {
  REQUIRE_VULKAN();
  for (uint32_t seed : {4u, 5u}) {
    const Tape t = randomTape(seed, 40);
    const RunResult gpu = engine->compile(t, options(KernelKind::Register, window(t, 3)))->run({t.inputDefaults}, 500, kSeed);
    expectNearReference(reference(t, {t.inputDefaults}, 500, kSeed), gpu, t.name);
  }
}

// value = x * z0 with z0 a standard normal draw, against the host's sum of the
// same fp32 draws (drawNormal<float>: they differ by GLSL's log, sqrt and a driver's fma, within ulps;
// and the summation). On the
// sums, a path counted twice or skipped moves the total by |z| (about 0.8 on
// average), far more than N draws each within a few ulp (N * 2e-6).
TEST(VulkanPaths, CountsThatAreNotMultiplesOfTheBlock) {
  REQUIRE_VULKAN();
  const Tape t = drawTape();
  Kernel& k = kernel(engine, "draw", t, options(KernelKind::Plain));
  for (uint64_t paths : {1, 2, 63, 64, 65, 255, 256, 257, 1000, 3001}) {
    const RunResult gpu = k.run({{1.0}}, paths, kSeed);
    double sum = 0, sumSquares = 0;  // the CPU's draws of paths 0 .. n-1
    for (uint64_t p = 0; p < paths; ++p) {
      const double z = drawNormal<float>(kSeed, p, 0);
      sum += z;
      sumSquares += z * z;
    }
    const double n = static_cast<double>(paths), tol = 2e-6 * n + 1e-6;
    const MarketResult& r = gpu.markets[0];  // the sum of squares back from the standard error
    const double squares = n > 1 ? r.valueStderr * r.valueStderr * n * (n - 1) + n * r.value * r.value : r.value * r.value;
    EXPECT_EQ(gpu.paths, paths);
    EXPECT_NEAR(r.value * n, sum, tol) << paths << " paths";
    EXPECT_NEAR(r.greeks[0] * n, sum, tol) << paths << " paths";
    EXPECT_NEAR(squares, sumSquares, 10 * tol) << paths << " paths";
  }
}

// Paths straddling 2^32 (the carry into the path's high word) and far beyond,
// against the double interpreter evaluated at the same path indices.
TEST(VulkanPaths, PathIndicesBeyondTwoToThe32) {
  REQUIRE_VULKAN();
  const Tape t = products::asianCall(24);
  Kernel& k = kernel(engine, "asian24-register-4", t, options(KernelKind::Register, window(t, 4)));
  for (uint64_t first : {(uint64_t{1} << 32) - 100, (uint64_t{7} << 40) + 12345}) {
    const uint64_t paths = 300;
    const RunResult gpu = kernel(engine, "asian24-register-4-from-" + std::to_string(first), t,
                                 fromPath(options(KernelKind::Register, window(t, 4)), first))
                              .run({t.inputDefaults}, paths, kSeed);
    PathInterpreter<double> interp(t, nullptr, true);
    PathResult<double> one;
    std::vector<double> sums(1 + t.numInputs(), 0.0), squares(1 + t.numInputs(), 0.0);
    for (uint64_t p = first; p < first + paths; ++p) {
      interp.run(t.inputDefaults, kSeed, p, one);
      sums[0] += one.value;
      squares[0] += one.value * one.value;
      for (int i = 0; i < t.numInputs(); ++i) {
        sums[1 + i] += one.adjoints[i];
        squares[1 + i] += one.adjoints[i] * one.adjoints[i];
      }
    }
    RunResult ref;
    ref.markets = {finishMoments(sums, squares, paths)};
    expectNearReference(ref, gpu, "first path " + std::to_string(first));
    // and not the paths from 0
    const RunResult fromZero = k.run({t.inputDefaults}, paths, kSeed);
    EXPECT_NE(fromZero.markets[0].value, gpu.markets[0].value);
  }
}

// Each path's value is one draw: the GPU's draw against tape/philox.h's
// drawNormal<float>. The Philox words must match exactly (a wrong word gives
// an unrelated normal); Box-Muller then differs only by GLSL's log and sqrt,
// which may be a few ulp from the CPU's, and by whether the driver fuses the
// polynomials' fma (the Vulkan spec lets it split one: Mesa's lavapipe does), an ulp or two.
TEST(VulkanDraws, MatchDrawNormalFloat) {
  REQUIRE_VULKAN();
  const Tape t = drawTape();
  int exact = 0, total = 0;
  for (uint64_t path : {uint64_t{0}, uint64_t{1}, uint64_t{77}, (uint64_t{1} << 32) + 5, ~uint64_t{0} - 3}) {
    Kernel& k = kernel(engine, "draw-from-" + std::to_string(path), t, fromPath(options(KernelKind::Plain), path));
    for (uint64_t seed : {uint64_t{0}, uint64_t{42}, uint64_t{0xfedcba9876543210ull}}) {
      const double gpu = k.run({{1.0}}, 1, seed).markets[0].value;
      const float cpu = drawNormal<float>(seed, path, 0);
      EXPECT_NEAR(gpu, cpu, 4e-6 * std::max(1.0f, std::abs(cpu))) << "path " << path << " seed " << seed;
      exact += gpu == static_cast<double>(cpu);
      ++total;
    }
  }
  RecordProperty("exact_draws", std::to_string(exact) + "/" + std::to_string(total));
  std::printf("draws equal to the CPU's bit for bit: %d of %d\n", exact, total);
}

// ---------------------------------------------------------------- plumbing

TEST(VulkanEngine, CapsAndUnknownDevice) {
  REQUIRE_VULKAN();
  const EngineCaps caps = engine->caps();
  EXPECT_EQ(caps.defaultPrecision, Precision::F32);
  EXPECT_EQ(caps.maxMarkets, 8);
  EXPECT_FALSE(caps.reason.empty());
  EngineSettings nowhere = engineSettingsFromEnvironment();
  nowhere.vulkan.device = "no-such-device-anywhere";
  const EngineCaps none = makeVulkanEngine(nowhere)->caps();
  EXPECT_FALSE(none.usable);
  EXPECT_NE(none.reason.find("TAPELAB_VULKAN_DEVICE"), std::string::npos) << none.reason;
  // No driver for the loader: unusable, with the reason.
  EngineCaps noDriver;
  {
    ScopedEnv icd("VK_ICD_FILENAMES", "/nonexistent/tapelab-icd.json");
    ScopedEnv driver("VK_DRIVER_FILES", "/nonexistent/tapelab-icd.json");
    noDriver = makeVulkanEngine(engineSettingsFromEnvironment())->caps();  // the loader's variables are part of the device's key
  }
  EXPECT_FALSE(noDriver.usable);
  EXPECT_NE(noDriver.reason.find("vulkan:"), std::string::npos) << noDriver.reason;
  EngineSettings first = engineSettingsFromEnvironment();
  first.vulkan.device = "0";
  EXPECT_TRUE(makeVulkanEngine(first)->caps().usable);
  KernelOptions f64 = options(KernelKind::Plain);
  f64.precision = Precision::F64;
  EXPECT_THROW(engine->compile(asian120(), f64), std::invalid_argument);
  EXPECT_THROW(engine->compile(asian120(), options(KernelKind::Register)), std::invalid_argument) << "no plan";
}

TEST(VulkanEngine, DumpAndSpirvCache) {
  REQUIRE_VULKAN();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tapelab-vk-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  EngineSettings settings = engineSettingsFromEnvironment();
  settings.cacheDir = (dir / "cache").string();
  auto fresh = [&] { return makeVulkanEngine(settings); };
  Recorder rec;
  Var x = rec.input("x", 2.0);
  rec.output(exp(x * rec.randn(3)) * 1.5);
  const Tape t = rec.finish();
  KernelOptions o = options(KernelKind::Plain);
  o.dumpDir = (dir / "dump").string();
  std::unique_ptr<Kernel> first = fresh()->compile(t, o);
  const KernelStats s1 = first->stats();
  ASSERT_FALSE(s1.sourcePath.empty());
  EXPECT_TRUE(std::filesystem::exists(s1.sourcePath));
  EXPECT_NE(s1.notes.find("spirv compiled"), std::string::npos) << s1.notes;
  EXPECT_GT(s1.compileSeconds, 0.0);
  const KernelStats s2 = fresh()->compile(t, o)->stats();
  EXPECT_NE(s2.notes.find("spirv cached"), std::string::npos) << s2.notes;
  EXPECT_EQ(first->run({{2.0}}, 100, 1).markets[0].value, fresh()->compile(t, o)->run({{2.0}}, 100, 1).markets[0].value);
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------- faults (README, "Faults")

// A SPIR-V cache entry that is truncated or has a byte changed is a miss: compiled
// again (the same words) and rewritten, never handed to the driver.
TEST(VulkanFaults, CorruptSpirvCacheEntryIsRebuilt) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tapelab-vulkan-spirv-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string glsl = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
  const vulkan::Spirv first = vulkan::compileGlsl(glsl, "", dir.string());
  ASSERT_FALSE(first.cacheHit);
  ASSERT_TRUE(vulkan::compileGlsl(glsl, "", dir.string()).cacheHit);
  std::filesystem::path entry;
  for (const auto& e : std::filesystem::directory_iterator(dir / "vulkan")) entry = e.path();
  const std::string whole = readFile(entry).value();
  for (const std::string& bad : {whole.substr(0, whole.size() - 8), whole.substr(0, whole.size() / 2),
                                 [&] { std::string b = whole; b[whole.size() / 2] ^= 4; return b; }()}) {
    ASSERT_TRUE(writeFileAtomic(entry, bad));
    const vulkan::Spirv again = vulkan::compileGlsl(glsl, "", dir.string());
    EXPECT_FALSE(again.cacheHit);
    EXPECT_EQ(again.words, first.words);
    EXPECT_EQ(readFile(entry), whole);
  }
  std::filesystem::remove_all(dir);
}

// No SPIR-V from another key's entry, none read from a special file (README, "Faults").
TEST(VulkanFaults, ForeignOrSpecialSpirvEntriesAreRebuilt) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tapelab-vulkan-spirv-foreign-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string glsl = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
  const std::string other = "#version 450\nlayout(local_size_x = 2) in;\nvoid main() {}\n";
  const vulkan::Spirv first = vulkan::compileGlsl(glsl, "", dir.string());
  std::filesystem::path entry, otherEntry;
  for (const auto& e : std::filesystem::directory_iterator(dir / "vulkan")) entry = e.path();
  vulkan::compileGlsl(other, "", dir.string());
  for (const auto& e : std::filesystem::directory_iterator(dir / "vulkan"))
    if (e.path() != entry) otherEntry = e.path();
  testutil::expectForeignAndSpecialEntriesRebuilt(entry, otherEntry, [&] {
    const vulkan::Spirv again = vulkan::compileGlsl(glsl, "", dir.string());
    EXPECT_EQ(again.words, first.words);
    return again.cacheHit;
  });
  std::filesystem::remove_all(dir);
}

// A buffer larger than the device's memory: one line with the bytes needed and
// what the heap has, before anything is allocated.
TEST(VulkanFaults, BufferBeyondDeviceMemoryIsOneLineWithTheBytes) {
  REQUIRE_VULKAN();
  const std::shared_ptr<vulkan::Device> dev = vulkan::openDevice(engineSettingsFromEnvironment());
  VkDeviceSize largest = 0;
  for (uint32_t h = 0; h < dev->memory.memoryHeapCount; ++h) largest = std::max(largest, dev->memory.memoryHeaps[h].size);
  vulkan::Buffer b;
  try {
    b.allocate(dev, largest + 1, false);
    FAIL() << "a buffer of " << largest + 1 << " bytes was allocated";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(largest + 1) + " bytes exceeds the device's memory heap of " +
                        std::to_string(largest) + " bytes"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  EXPECT_EQ(b.buffer, VK_NULL_HANDLE);
}
