// The tangent kernel kind on every engine: the value and its standard error are
// the plain kernel's bits (one and two markets); the Greeks agree with the plain
// kernel's adjoints within rounding; compile-only engines compile it. And the
// front door's rules: --wrt names inputs, needs --kernel tangent, and tangent
// takes no plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "api/montecarlo.h"
#include "api/registry.h"
#include "engine/tangent_chunks.h"
#include "planner/kind_model.h"
#include "planner/tangent_chunk.h"
#include "tape/recorder.h"
#include "tape/tangent.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

// A GPU emitter's engine with every kind, as the front-door tests resolve against (no device needed).
EngineCaps gpuCaps() {
  EngineCaps gpu;
  gpu.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Tangent};
  gpu.marketOrder = true;
  return gpu;
}

class Tangent : public ::testing::TestWithParam<std::string> {};

TEST_P(Tangent, ValueBitsOfPlainGreeksWithinRounding) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Tape t = products::asianCall(12);
  for (const int markets : {1, 2}) {
    std::vector<std::vector<double>> in(static_cast<size_t>(markets), t.inputDefaults);
    if (markets == 2) in[1][t.inputIndex("spot")] *= 1.1;
    KernelOptions plain;
    plain.precision = caps.fp64 ? caps.defaultPrecision : Precision::F32;
    plain.markets = markets;
    KernelOptions tangent = plain;
    tangent.kind = KernelKind::Tangent;
    std::unique_ptr<Kernel> p = engine->compile(t, plain), g = engine->compile(t, tangent);
    if (!caps.usable) continue;  // compile-only: compiling is the test
    const RunResult a = p->run(in, 1500, 3), b = g->run(in, 1500, 3);
    const double rel = plain.precision == Precision::F32 ? 2e-5 : 1e-12;
    for (int m = 0; m < markets; ++m) {
      const MarketResult &x = a.markets[m], &y = b.markets[m];
      EXPECT_TRUE(testutil::identicalBits(x.value, y.value)) << entry.name << " market " << m << ": "
                                                             << testutil::g17(x.value) << " vs " << testutil::g17(y.value);
      EXPECT_TRUE(testutil::identicalBits(x.valueStderr, y.valueStderr)) << entry.name << " market " << m;
      for (size_t k = 0; k < x.greeks.size(); ++k)
        EXPECT_NEAR(y.greeks[k], x.greeks[k], rel * (std::fabs(x.greeks[k]) + 1.0))
            << entry.name << " market " << m << " d/d " << t.inputNames[k];
    }
  }
}

// config tangent_chunk (engine/tangent_chunks.h): a tangent kernel in chunks of inputs returns the unchunked
// kernel's bits, value and every Greek, whatever the chunk (a last chunk shorter than the rest, one input a
// chunk), with and without --wrt, at one and two markets, under the engine's own defaults (closed forms, fused
// tangents, the rolled time loop where they are on); each chunk differentiates by its own inputs only.
TEST_P(Tangent, ChunksGiveTheUnchunkedBits) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Tape t = products::basketCall(2, 6);  // 2 assets: 5 or more inputs
  ASSERT_GE(t.numInputs(), 5);
  for (const int markets : {1, 2}) {
    std::vector<std::vector<double>> in(static_cast<size_t>(markets), t.inputDefaults);
    if (markets == 2) in[1][0] *= 1.1;
    for (const std::vector<int>& wrt : {std::vector<int>{}, std::vector<int>{0, 2, 3, 4}}) {
      KernelOptions whole;
      whole.precision = caps.fp64 ? caps.defaultPrecision : Precision::F32;
      whole.markets = markets;
      whole.kind = KernelKind::Tangent;
      whole.wrt = wrt;
      whole.config = defaultConfig(entry.name, caps.cpuDevice, markets, "tangent");
      const std::unique_ptr<Kernel> one = compileKernel(*engine, t, whole);
      const RunResult a = caps.usable ? one->run(in, 1000, 5) : RunResult{};
      for (const int chunk : {1, 3}) {
        KernelOptions split = whole;
        split.config.tangentChunk = chunk;
        const std::vector<std::vector<int>> chunks = tangentChunks(split, t.numInputs());
        const size_t inputs = wrt.empty() ? static_cast<size_t>(t.numInputs()) : wrt.size();
        EXPECT_EQ(chunks.size(), (inputs + chunk - 1) / chunk);
        const std::unique_ptr<Kernel> k = compileKernel(*engine, t, split);
        EXPECT_NE(k->stats().notes.find("tangent_chunk=" + std::to_string(chunk) + ": " + std::to_string(chunks.size()) +
                                        " tangent kernels"),
                  std::string::npos)
            << k->stats().notes;
        if (!caps.usable) continue;  // compile-only: compiling is the test
        const RunResult b = k->run(in, 1000, 5);
        for (int m = 0; m < markets; ++m)
          testutil::expectSameMarket(a.markets[m], b.markets[m],
                                     entry.name + " markets " + std::to_string(markets) + " market " + std::to_string(m) +
                                         " chunk " + std::to_string(chunk) + " wrt " + std::to_string(wrt.size()));
        if (!wrt.empty()) {
          EXPECT_TRUE(std::isnan(b.markets[0].greeks[1])) << entry.name;  // not differentiated
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Tangent, ::testing::ValuesIn(engineNames()), testutil::engineParamName);

// The front door with tangent_chunk: --max-nodes bounds each chunk's terms (the unchunked kernel refused, the
// chunked one not), the kind model charges the forward sweep once a chunk, and a field that does not split
// says so in the kernel's stats.
TEST(TangentFrontDoor, ChunksBoundEachKernelAndCostTheirForwardSweeps) {
  const Tape lmm = products::byName("lmm", products::ProductParams{{"forwards", 8}});
  const EngineCaps gpu = gpuCaps();
  RunConfig c;
  c.engine = "cuda";
  c.kernel = KernelKind::Tangent;
  std::vector<int> all(static_cast<size_t>(lmm.numInputs()));
  for (size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int>(k);
  const int64_t terms = tangentTermCount(lmm, all);
  c.maxNodes = static_cast<uint64_t>(terms) - 1;
  try {
    resolveKernel(lmm, c, gpu);
    ADD_FAILURE() << "the unchunked kernel's " << terms << " terms passed a bound of " << c.maxNodes;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tangent_chunk=N"), std::string::npos) << e.what();
  }
  c.userConfig = parseConfigText("tangent_chunk=4");
  const KernelOptions o = resolveKernel(lmm, c, gpu);
  EXPECT_EQ(o.config.tangentChunk, 4);
  const std::vector<std::vector<int>> chunks = tangentChunks(o, lmm.numInputs());
  EXPECT_EQ(chunks.size(), (all.size() + 3) / 4);
  int64_t largest = 0;  // the bound is each chunk's: one under the largest chunk's terms refuses it
  for (const std::vector<int>& chunk : chunks) largest = std::max(largest, tangentTermCount(lmm, chunk));
  c.maxNodes = static_cast<uint64_t>(largest) - 1;
  try {
    resolveKernel(lmm, c, gpu);
    ADD_FAILURE() << "a chunk of " << largest << " terms passed a bound of " << c.maxNodes;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(" by 4 inputs carries "), std::string::npos) << e.what();
  }

  KindJob job;
  job.adjointPlan = plainPlan(lmm);
  const KindPrediction whole = predictKinds(lmm, job);
  job.tangentChunk = 4;
  const KindPrediction chunked = predictKinds(lmm, job);
  const double fours = static_cast<double>((all.size() + 3) / 4);
  const KindPrediction forwardOnly = [&] {
    KindJob none = job;
    none.wrt = {0};
    none.tangentChunk = 0;
    return predictKinds(lmm, none);
  }();
  // The forward sweep once more a chunk, nothing else: chunks of 4 and of 2 add their extra sweeps alike.
  job.tangentChunk = 2;
  const KindPrediction halves = predictKinds(lmm, job);
  const double more4 = (chunked.tangentInstructions - whole.tangentInstructions) / (fours - 1);
  const double more2 = (halves.tangentInstructions - whole.tangentInstructions) / static_cast<double>((all.size() + 1) / 2 - 1);
  EXPECT_GT(more4, 0);
  EXPECT_NEAR(more4, more2, 1e-6 * more4);
  EXPECT_LT(more4, forwardOnly.tangentInstructions) << "a forward sweep costs less than the kernel of one tangent";

  // Not split: the field said unused, on the reference engine (a tangent kernel of 5 inputs, chunks of 8).
  const Tape asian = products::asianCall(4);
  KernelOptions k;
  k.kind = KernelKind::Tangent;
  k.config.tangentChunk = 8;
  const auto kernel = compileKernel(*findEngine("reference").make(EngineSettings{}), asian, k);
  const std::vector<std::string> unused = kernel->stats().configUnused;
  EXPECT_NE(std::find(unused.begin(), unused.end(),
                      "tangent_chunk=8: the kernel differentiates by 5 inputs, no more than 8: one kernel"),
            unused.end());
  k.kind = KernelKind::Plain;
  const std::vector<std::string> plain = compileKernel(*findEngine("reference").make(EngineSettings{}), asian, k)->stats().configUnused;
  EXPECT_NE(std::find(plain.begin(), plain.end(), "tangent_chunk=8: not a tangent kernel"), plain.end());
}

// A partial (pow's b * pow(a, b - 1)) is computed once a kernel that carries a slot through it: in chunks of one
// input, x + y's pow pays it in both kernels, so the chunked prediction adds a forward sweep and one partial.
TEST(TangentFrontDoor, TheKindModelChargesAPartialOnceAChunk) {
  Recorder rec;
  const Var x = rec.input("x", 1.5), y = rec.input("y", 0.5);
  rec.output(pow(x + y, 3.0));
  const Tape t = rec.finish();
  KindJob job;
  job.adjointPlan = plainPlan(t);
  job.gpu = false;
  const KindPrediction whole = predictKinds(t, job);
  job.tangentChunk = 1;
  const KindPrediction ones = predictKinds(t, job);
  const CostModel& c = CostModel::measured();
  double forward = 0;
  for (int32_t i = 0; i < t.size(); ++i) forward += c.of(t.op[i]);
  EXPECT_NEAR(ones.tangentInstructions - whole.tangentInstructions, forward + ruleCost("(b * pow(a, b - one))", c), 1e-9)
      << "one forward sweep and pow's partial once more";
}

// auto's tangent chunk (planner/tangent_chunk.h): lmm-40's tangent kernel (585,934 terms, no loop) splits into
// the fewest chunks within the bound, where one input more a chunk passes it; the Asian's stays one kernel; a
// rolled loop's later iterations are not written out (the 5 x 252 Heston basket: within the bound rolled, a
// tenth of its unrolled terms); the neural SDE would need more than the most chunks and stays whole. The front door takes it for a
// GPU engine's tangent kernel where nothing names the field; a tangent_chunk=0 named, a CPU engine and --kernel
// auto's adjoint keep one kernel.
TEST(TangentFrontDoor, AutoChunksAWideTapesTangentKernelWithinTheBound) {
  const Tape lmm = products::byName("lmm", products::ProductParams{{"forwards", 40}});
  std::vector<int> all(static_cast<size_t>(lmm.numInputs()));
  for (size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int>(k);
  const AutoTangentChunk a = autoTangentChunk(lmm, all, true);
  EXPECT_EQ(a.wholeTerms, tangentTermCount(lmm, all));
  ASSERT_GT(a.chunk, 0) << a.why();
  EXPECT_EQ(a.kernels, static_cast<int>((all.size() + a.chunk - 1) / a.chunk));
  EXPECT_LE(a.chunkTerms, kTangentChunkTerms);
  int64_t largest = 0;  // one input more a chunk: some chunk over the bound
  for (size_t at = 0; at < all.size(); at += static_cast<size_t>(a.chunk) + 1)
    largest = std::max(largest, tangentTermCount(lmm, std::vector<int>(all.begin() + static_cast<std::ptrdiff_t>(at),
                                                                       all.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                                                         all.size(), at + a.chunk + 1)))));
  EXPECT_GT(largest, kTangentChunkTerms) << a.why();
  EXPECT_NE(a.why().find(" kernels of at most "), std::string::npos) << a.why();

  const Tape asian = products::asianCall(252);
  EXPECT_EQ(autoTangentChunk(asian, {0, 1, 2, 3, 4}, false).chunk, 0);
  EXPECT_EQ(autoTangentChunk(asian, {0, 1, 2, 3, 4}, true, 7, {1, 2, 3, 4}).chunk, 0) << "the ladder's rolled kernel";
  // Several markets: a value an input the markets differ in reaches is written once a market.
  EXPECT_GT(autoTangentChunk(lmm, all, true, 7).wholeTerms, 6 * a.wholeTerms);
  const Tape heston = products::byName("hestonbasket", products::ProductParams{{"assets", 5}, {"steps", 252}});
  std::vector<int> hin(static_cast<size_t>(heston.numInputs()));
  for (size_t k = 0; k < hin.size(); ++k) hin[k] = static_cast<int>(k);
  const AutoTangentChunk rolled = autoTangentChunk(heston, hin, true), unrolled = autoTangentChunk(heston, hin, false);
  EXPECT_EQ(rolled.chunk, 0) << rolled.why();
  EXPECT_LT(rolled.wholeTerms, unrolled.wholeTerms / 10) << rolled.why() << "; " << unrolled.why();
  const Tape neural = products::byName("neural", products::ProductParams{{"steps", 16}, {"hidden", 16}});
  std::vector<int> nin(static_cast<size_t>(neural.numInputs()));
  for (size_t k = 0; k < nin.size(); ++k) nin[k] = static_cast<int>(k);
  const AutoTangentChunk whole = autoTangentChunk(neural, nin, true);
  EXPECT_EQ(whole.chunk, 0) << whole.why();
  EXPECT_GT(whole.wholeTerms, kTangentChunkTerms);
  EXPECT_NE(whole.why().find("more than 32 chunks"), std::string::npos) << whole.why();

  const EngineCaps gpu = gpuCaps();
  RunConfig c;
  c.engine = "cuda";
  c.kernel = KernelKind::Tangent;
  EXPECT_EQ(resolveKernel(lmm, c, gpu).config.tangentChunk, a.chunk);
  RunConfig named = c;
  named.userConfig = parseConfigText("tangent_chunk=0");
  EXPECT_EQ(resolveKernel(lmm, named, gpu).config.tangentChunk, 0) << "a tangent_chunk=0 named: one kernel";
  RunConfig cpu = c;
  cpu.engine = "cpu-jit";
  EXPECT_EQ(resolveKernel(lmm, cpu, gpu).config.tangentChunk, 0) << "cpu-jit splits its C++ itself (jit.part)";
  RunConfig automatic;
  automatic.engine = "cuda";
  std::string why;
  const KernelOptions picked = resolveKernel(lmm, automatic, gpu, 1, nullptr, nullptr, &why);
  EXPECT_EQ(picked.kind, KernelKind::Register) << why;
  EXPECT_EQ(picked.config.tangentChunk, 0) << "the adjoint kernel carries no chunk";
}

TEST(TangentFrontDoor, WrtNeedsTheTangentKernelAndKnownNames) {
  const Tape t = products::asianCall(4);
  EngineCaps caps;
  caps.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Tangent};
  RunConfig c;
  c.wrt = {"vol", "spot"};
  EXPECT_THROW(resolveKernel(t, c, caps), std::invalid_argument);  // --wrt without --kernel tangent
  c.kernel = KernelKind::Tangent;
  const KernelOptions o = resolveKernel(t, c, caps);
  EXPECT_EQ(o.kind, KernelKind::Tangent);
  EXPECT_EQ(o.wrt, (std::vector<int>{t.inputIndex("spot"), t.inputIndex("vol")}));
  c.wrt = {"gamma"};
  EXPECT_THROW(resolveKernel(t, c, caps), std::invalid_argument);
  c.wrt = {};
  c.checkpoint = Checkpoint::count(4);
  EXPECT_THROW(resolveKernel(t, c, caps), std::invalid_argument);  // nothing to cut
  caps.kinds = {KernelKind::Plain};
  c.checkpoint = Checkpoint::automatic();
  EXPECT_THROW(resolveKernel(t, c, caps), std::invalid_argument);  // engine without the kind
}

// --kernel auto (issue 46): with nothing named, the kind planner/kind_model.h predicts faster, and why;
// whatever the user names (a kernel, a segment count, a strategy) keeps its meaning and no model speaks.
TEST(TangentFrontDoor, AutoPicksTheKindTheModelPredictsAndSaysWhy) {
  const EngineCaps gpu = gpuCaps();
  RunConfig c;
  c.engine = "cuda";
  c.userConfig = parseConfigText("loops=rolled");
  std::string why;
  const KernelOptions asian = resolveKernel(products::asianCall(252), c, gpu, 1, nullptr, nullptr, &why);
  EXPECT_EQ(asian.kind, KernelKind::Tangent) << why;  // 5 inputs, a rolled time loop
  EXPECT_EQ(why.rfind("auto: tangent: ", 0), 0u) << why;
  const Tape lmm = products::byName("lmm", products::ProductParams{{"forwards", 40}});
  const KernelOptions wide = resolveKernel(lmm, c, gpu, 1, nullptr, nullptr, &why);
  EXPECT_EQ(wide.kind, KernelKind::Register) << why;  // 81 inputs: the adjoint
  EXPECT_EQ(why.rfind("auto: adjoint: ", 0), 0u) << why;
  RunConfig segments = c;
  segments.checkpoint = Checkpoint::count(8);
  EXPECT_EQ(resolveKernel(products::asianCall(252), segments, gpu, 1, nullptr, nullptr, &why).kind, KernelKind::Register);
  EXPECT_TRUE(why.empty()) << why;
  RunConfig strategy = c;
  strategy.strategy = "window";
  EXPECT_NE(resolveKernel(products::asianCall(252), strategy, gpu, 1, nullptr, nullptr, &why).kind, KernelKind::Tangent);
  EXPECT_TRUE(why.empty()) << why;
  RunConfig named = c;
  named.kernel = KernelKind::Register;
  EXPECT_EQ(resolveKernel(products::asianCall(252), named, gpu, 1, nullptr, nullptr, &why).kind, KernelKind::Register);
  EXPECT_TRUE(why.empty()) << why;
  RunConfig valueOnly = c;
  valueOnly.greeks = false;  // no Greeks: nothing to choose
  EXPECT_NE(resolveKernel(products::asianCall(252), valueOnly, gpu, 1, nullptr, nullptr, &why).kind, KernelKind::Tangent);
}

// The kind --kernel auto picks on each zoo tape (cuda, one market, its defaults) is the one the H100 timed
// faster (runs/h100-2026-12-06, call3 and call4: 1M paths, compare's register and tangent rows), where the
// margin was over 5%: cev's tangent kernel ran 1,042.6 against the register kernel's 723.0 once the model
// charged pow's partial once a node instead of once a tangent slot (78,581 -> 39,860 predicted; sm_90 counts
// 25,845). worstof (register 334.2, tangent 324.8) is inside its noise and left out; lmm-40's tangent kernel
// did not compile within the call, neural-16x16's is over --max-nodes: the adjoint is the kind that runs.
TEST(TangentFrontDoor, AutoOnTheZooPicksTheKindTheH100TimedFaster) {
  const EngineCaps gpu = gpuCaps();
  RunConfig c;
  c.engine = "cuda";
  const std::pair<const char*, KernelKind> timed[] = {
      {"european", KernelKind::Tangent}, {"asian", KernelKind::Tangent},    {"basket", KernelKind::Tangent},
      {"heston", KernelKind::Register},  {"cev", KernelKind::Tangent},      {"barrier", KernelKind::Tangent},
      {"lookback", KernelKind::Tangent}, {"lmm", KernelKind::Register},     {"neural", KernelKind::Register},
      {"heat", KernelKind::Register}};
  for (const auto& [name, faster] : timed) {
    const Tape t = products::byName(name, products::ProductParams{});
    std::string why;
    const KernelKind picked = resolveKernel(t, c, gpu, 1, nullptr, nullptr, &why).kind;
    EXPECT_EQ(picked == KernelKind::Tangent, faster == KernelKind::Tangent) << name << ": " << why;
  }
}

// The 7-point ladder (spot differs, strike, vol, rate and maturity shared): the register kernel's default cuts
// are the periodic strategy's, whose segments roll around the market loop, 16 of them, and auto still picks
// the tangent kernel, which the H100 timed faster (runs/h100-2026-12-06c/call11: 4,511.2 against the rolled
// register kernel's 2,762.6). At one market auto asks about 64 nodes a segment (planner/strategies.h): 24 of
// the 1,536-node Asian, which the periodic strategy's whole Philox calls make 32 (1,007.7 against 883.8 at 16 in call5).
TEST(TangentFrontDoor, TheLadderRollsTheRegisterKernelAndPicksTheTangentKernel) {
  const EngineCaps gpu = gpuCaps();
  RunConfig c;
  c.engine = "cuda";
  const Tape t = products::asianCall(252);
  const std::vector<int> shared = {1, 2, 3, 4};
  std::string why;
  EXPECT_EQ(resolveKernel(t, c, gpu, 7, nullptr, nullptr, &why, shared).kind, KernelKind::Tangent) << why;
  EXPECT_NE(why.find("0.80 and 0.80"), std::string::npos) << why;  // both kinds roll
  RunConfig r = c;
  r.kernel = KernelKind::Register;
  const Plan ladder = resolveKernel(t, r, gpu, 7, nullptr, nullptr, nullptr, shared).plan;
  EXPECT_EQ(ladder.strategy, "periodic");
  EXPECT_EQ(ladder.segments(), 16);
  const Plan one = resolveKernel(t, r, gpu, 1).plan;
  EXPECT_EQ(one.strategy, "periodic");
  EXPECT_EQ(one.segments(), 32);
  RunConfig named = r;
  named.checkpoint = Checkpoint::count(16);  // a count named keeps its meaning
  EXPECT_EQ(resolveKernel(t, named, gpu, 1).plan.segments(), 16);
  RunConfig prefill = r;
  prefill.userConfig = parseConfigText("draws=prefill");  // prefilled draws do not roll: window's cuts
  EXPECT_EQ(resolveKernel(t, prefill, gpu, 1).plan.strategy, "window");
  r.userConfig = parseConfigText("markets=copies");  // no market loop: the segments stay written out, window's cuts
  EXPECT_EQ(resolveKernel(t, r, gpu, 7, nullptr, nullptr, nullptr, shared).plan.strategy, "window");
}

TEST(TangentFrontDoor, PricesThroughMonteCarlo) {
  RunConfig c;
  c.engine = "reference";
  c.kernel = KernelKind::Tangent;
  c.wrt = {"spot"};
  const Result r = MonteCarlo::of(products::asianCall()).steps(8).config(c).build().run(500, 1);
  EXPECT_GT(r.greek("spot"), 0.0);
  EXPECT_TRUE(std::isnan(r.greek("vol")));
}

}  // namespace
