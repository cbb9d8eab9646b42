// The reference engines: double vs multiprecision vs float agreement; plain
// == checkpointed bit for bit for every plan; reproducibility across runs,
// thread counts and market batching.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>

#include "api/montecarlo.h"
#include "api/registry.h"
#include "planner/plan.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

using testutil::g17;

std::unique_ptr<Kernel> compileOn(const std::string& engine, const Tape& t, const KernelOptions& o,
                                  const EngineSettings& settings = {}) {
  return makeEngine(engine, settings)->compile(t, o);
}

KernelOptions plainOptions(const Tape& t) {
  KernelOptions o;
  o.plan = plainPlan(t);
  return o;
}

KernelOptions checkpointed(const Plan& p, KernelKind kind = KernelKind::Register) {
  KernelOptions o;
  o.kind = kind;
  o.plan = p;
  return o;
}

RunResult runOn(const std::string& engine, const Tape& t, const KernelOptions& o, uint64_t paths, uint64_t seed,
                const EngineSettings& settings = {}) {
  return compileOn(engine, t, o, settings)->run({t.inputDefaults}, paths, seed);
}

// Value, every Greek and every standard error, with ==.
void expectSameBits(const RunResult& x, const RunResult& y, const std::string& what) {
  ASSERT_EQ(x.markets.size(), y.markets.size()) << what;
  for (size_t m = 0; m < x.markets.size(); ++m) {
    const MarketResult &a = x.markets[m], &b = y.markets[m];
    EXPECT_EQ(a.value, b.value) << what << " market " << m << ": " << g17(a.value) << " vs " << g17(b.value);
    EXPECT_EQ(a.valueStderr, b.valueStderr) << what << " market " << m << " stderr";
    ASSERT_EQ(a.greeks.size(), b.greeks.size()) << what;
    for (size_t k = 0; k < a.greeks.size(); ++k) {
      EXPECT_EQ(a.greeks[k], b.greeks[k])
          << what << " market " << m << " greek " << k << ": " << g17(a.greeks[k]) << " vs " << g17(b.greeks[k]);
      EXPECT_EQ(a.greeksStderr[k], b.greeksStderr[k]) << what << " market " << m << " greek stderr " << k;
    }
  }
}

}  // namespace

// Double vs 50-digit: both engines sum per-path results in double in the same
// order, so they differ only by the double interpreter's rounding on each
// path. A path of the 50-step Asian is ~330 ops, each exact to 2^-53 relative,
// through exp/log/sqrt with condition numbers of order 1: a per-path relative
// error of a few hundred ulp at most (~5e-14); observed: at most 3e-15.
// 1e-12 relative to the size of the quantity (at least 1) is 20x the bound,
// and any real difference (a wrong rule, a precision leak into float) is
// orders larger. The kink max(avg-K, 0) could flip for a path with avg within
// 1e-13 of K: not among these paths.
TEST(ReferenceEngines, DoubleAgreesWithMultiprecision) {
  for (const Tape& t : {products::asianCall(50), products::europeanCall(16)}) {
    const RunResult d = runOn("reference", t, plainOptions(t), 200, 42);
    const RunResult mp = runOn("reference-mp", t, plainOptions(t), 200, 42);
    const MarketResult &a = d.markets[0], &b = mp.markets[0];
    auto tol = [](double x) { return 1e-12 * std::max(1.0, std::fabs(x)); };
    EXPECT_NEAR(a.value, b.value, tol(b.value)) << t.name << ": " << g17(a.value) << " vs " << g17(b.value);
    EXPECT_NEAR(a.valueStderr, b.valueStderr, tol(b.valueStderr)) << t.name;
    for (size_t k = 0; k < a.greeks.size(); ++k) {
      EXPECT_NEAR(a.greeks[k], b.greeks[k], tol(b.greeks[k]))
          << t.name << " d/d " << t.inputNames[k] << ": " << g17(a.greeks[k]) << " vs " << g17(b.greeks[k]);
      EXPECT_NEAR(a.greeksStderr[k], b.greeksStderr[k], tol(b.greeksStderr[k])) << t.name << " " << t.inputNames[k];
    }
    // Not trivially equal: the double engine does round.
    EXPECT_NE(a.value, 0.0);
  }
}

// Float vs double: the same uniforms (23-bit, exact in float), inputs rounded
// to float (relative 3e-8), each op rounded to 2^-24. Over the 50-step
// Asian's chain of ~50 multiplications and a 50-term sum the per-path relative
// error is ~50 * 6e-8 = 3e-6; the mean keeps that order (observed: at most
// 7e-6). 1e-4 relative to the quantity's scale (at least 1) gives 15x margin
// and still catches an fp32 engine that computes something else.
TEST(ReferenceEngines, FloatAgreesWithDoubleWithinFloatRounding) {
  for (const Tape& t : {products::asianCall(50), products::europeanCall(16), products::basketCall(3, 10)}) {
    const RunResult d = runOn("reference", t, plainOptions(t), 2000, 5);
    KernelOptions fo = plainOptions(t);
    fo.precision = Precision::F32;
    const RunResult f = runOn("reference-f32", t, fo, 2000, 5);
    const MarketResult &a = d.markets[0], &b = f.markets[0];
    auto tol = [](double x) { return 1e-4 * std::max(1.0, std::fabs(x)); };
    EXPECT_NEAR(b.value, a.value, tol(a.value)) << t.name;
    EXPECT_NE(b.value, a.value) << t.name << ": float gave the double's bits; is it computing in float?";
    for (size_t k = 0; k < a.greeks.size(); ++k)
      EXPECT_NEAR(b.greeks[k], a.greeks[k], tol(a.greeks[k]))
          << t.name << " d/d " << t.inputNames[k] << ": " << g17(b.greeks[k]) << " vs " << g17(a.greeks[k]);
  }
}

namespace {

// Every strategy at 2, 7 and 16 segments, uniform plans by segment length,
// and hand-made bounds: a cut after the first node, before the last, uneven
// thirds, one segment per node, and random cuts.
std::vector<Plan> plansFor(const Tape& t) {
  const int32_t n = t.size();
  std::vector<Plan> plans;
  for (const StrategyEntry& s : strategies())
    for (int segs : {2, 7, 16}) {
      PlanOptions o;
      o.segments = segs;
      plans.push_back(makeStrategyPlan(s.name, t, o));
    }
  for (int len : {1, 10, static_cast<int>(defaultSegLen(n))}) {
    PlanOptions o;
    o.segLen = len;
    plans.push_back(planUniform(t, o));
  }
  plans.push_back(makePlan(t, {0, 1, n}, "first-node"));
  plans.push_back(makePlan(t, {0, n - 1, n}, "last-node"));
  plans.push_back(makePlan(t, {0, n / 3, 2 * n / 3 + 1, n}, "thirds"));
  std::vector<int32_t> every;
  for (int32_t i = 0; i <= n; ++i) every.push_back(i);
  plans.push_back(makePlan(t, every, "every-node"));
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<int32_t> b{0};
    for (int32_t i = 1; i < n; ++i)
      if (rng() % 23 == 0) b.push_back(i);
    b.push_back(n);
    plans.push_back(makePlan(t, b, "random"));
  }
  return plans;
}

std::string describe(const Plan& p) {
  return p.strategy + " (" + std::to_string(p.segments()) + " segments)";
}

}  // namespace

TEST(ReferenceEngines, CheckpointedEqualsPlainBitForBit) {
  // 1,100 paths: two reduction blocks, the last one partial.
  for (const Tape& t : {products::asianCall(120), products::basketCall(4, 12)}) {
    const RunResult plain = runOn("reference", t, plainOptions(t), 1100, 99);
    const std::vector<Plan> plans = plansFor(t);
    for (size_t i = 0; i < plans.size(); ++i) {
      const Plan& p = plans[i];
      ASSERT_GT(p.segments(), 1) << describe(p);
      // The reference runs register and scratch kernels alike: scratch on every third plan is enough.
      for (KernelKind kind : {KernelKind::Register, KernelKind::Scratch})
        if (kind == KernelKind::Register || i % 3 == 0)
          expectSameBits(plain, runOn("reference", t, checkpointed(p, kind), 1100, 99),
                         t.name + " " + describe(p) + " " + toString(kind));
    }
  }
}

TEST(ReferenceEngines, CheckpointedEqualsPlainInFloatAndMultiprecision) {
  const Tape t = products::asianCall(20);
  KernelOptions fp = plainOptions(t);
  fp.precision = Precision::F32;
  const RunResult plainF = runOn("reference-f32", t, fp, 1500, 3);
  const RunResult plainMp = runOn("reference-mp", t, plainOptions(t), 40, 3);
  for (int segs : {2, 7, 16}) {
    PlanOptions po;
    po.segments = segs;
    const Plan p = planWindow(t, po);
    KernelOptions fo = checkpointed(p);
    fo.precision = Precision::F32;
    expectSameBits(plainF, runOn("reference-f32", t, fo, 1500, 3), "f32 " + describe(p));
    expectSameBits(plainMp, runOn("reference-mp", t, checkpointed(p), 40, 3), "mp " + describe(p));
  }
}

// The check above has teeth: a plan that forgets a bookmark gives NaN Greeks
// (the interpreter poisons every value it is allowed to forget), not the plain
// kernel's bits by accident.
TEST(ReferenceEngines, PlanMissingABookmarkPoisonsTheGreeks) {
  const Tape t = products::asianCall(30);
  PlanOptions po;
  po.segments = 5;
  Plan p = planWindow(t, po);
  int32_t forgotten = -1;
  for (int32_t j : p.crossing)
    if (t.op[j] != Op::Input) forgotten = j;
  ASSERT_GE(forgotten, 0);
  p.isPersistent[forgotten] = 0;
  // The schedule (planner/schedule.h) finds the value a segment reads but nobody
  // holds before anything runs; poisoning is the interpreter's second line
  // (tests/reference/test_reference_nested.cpp plants a lowering bug and sees it fail).
  try {
    runOn("reference", t, checkpointed(p), 100, 1);
    ADD_FAILURE() << "forgetting node " << forgotten << " went unnoticed";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("value " + std::to_string(forgotten) + " "), std::string::npos) << e.what();
  }
}

TEST(ReferenceEngines, CheckpointingThroughMonteCarloEqualsPlain) {
  RunConfig off;
  off.checkpoint = Checkpoint::off();
  const Result plain = MonteCarlo::of(products::asianCall()).steps(120).config(off).build().run(3000, 8);
  EXPECT_EQ(plain.kernel.kind, KernelKind::Plain);
  for (const char* segs : {"2", "7", "16"})
    for (const char* strategy : {"uniform", "window"}) {
      RunConfig c;
      c.checkpoint = Checkpoint::parse(segs, "--checkpoint");
      c.strategy = strategy;
      const Result r = MonteCarlo::of(products::asianCall()).steps(120).config(c).build().run(3000, 8);
      EXPECT_EQ(r.kernel.kind, KernelKind::Register);
      EXPECT_EQ(r.kernel.plan.segments(), std::atoi(segs));
      expectSameBits(plain.run, r.run, std::string("--checkpoint ") + segs + " --strategy " + strategy);
    }
}

TEST(ReferenceEngines, SameSeedTwiceGivesTheSameBits) {
  const Tape t = products::asianCall(50);
  auto k = compileOn("reference", t, plainOptions(t));
  const RunResult a = k->run({t.inputDefaults}, 5000, 77);
  const RunResult b = k->run({t.inputDefaults}, 5000, 77);
  const RunResult c = compileOn("reference", t, plainOptions(t))->run({t.inputDefaults}, 5000, 77);
  expectSameBits(a, b, "same kernel");
  expectSameBits(a, c, "fresh kernel");
  const RunResult other = k->run({t.inputDefaults}, 5000, 78);
  EXPECT_NE(a.markets[0].value, other.markets[0].value) << "seed 78 gave seed 77's value";
}

TEST(ReferenceEngines, ThreadCountDoesNotChangeTheBits) {
  // 10,000 paths: ten blocks, so two or three threads really share them.
  for (const Tape& t : {products::asianCall(50), products::basketCall(3, 8)}) {
    std::optional<RunResult> one;
    for (unsigned threads : {1u, 2u, 3u}) {
      EngineSettings settings;
      settings.threads = threads;
      PlanOptions po;
      po.segments = 7;
      for (const KernelOptions& o : {plainOptions(t), checkpointed(planWindow(t, po))}) {
        const RunResult r = runOn("reference", t, o, 10000, 4242, settings);
        if (!one) one = r;
        else expectSameBits(*one, r, t.name + " with " + std::to_string(threads) + " threads " + toString(o.kind));
      }
    }
  }
}

TEST(ReferenceEngines, SeveralMarketsInOneRunEqualEachAlone) {
  const Tape t = products::asianCall(40);
  std::vector<std::vector<double>> sets;
  for (double spot : {90.0, 100.0, 110.0}) {
    std::vector<double> in = t.inputDefaults;
    in[0] = spot;
    in[2] = spot / 500;  // vol too
    sets.push_back(in);
  }
  KernelOptions o = plainOptions(t);
  o.markets = 3;
  const RunResult together = compileOn("reference", t, o)->run(sets, 2500, 9);
  ASSERT_EQ(together.markets.size(), 3u);
  for (size_t m = 0; m < sets.size(); ++m) {
    const RunResult alone = compileOn("reference", t, plainOptions(t))->run({sets[m]}, 2500, 9);
    RunResult picked = together;
    picked.markets = {together.markets[m]};
    expectSameBits(alone, picked, "market " + std::to_string(m));
  }
  // Through the Pricer: 3 markets, 2 per dispatch (the last group padded), checkpointed.
  RunConfig c;
  c.checkpoint = Checkpoint::count(5);
  const Result batched = MonteCarlo::of(t).config(c).markets(2).build().runMarkets(sets, 2500, 9);
  ASSERT_EQ(batched.run.markets.size(), 3u);
  expectSameBits(together, batched.run, "2 markets per dispatch, checkpointed");
}

TEST(ReferenceEngines, ResultsReportValueGreeksErrorsAndSpeed) {
  const Result r = MonteCarlo::of(products::asianCall()).steps(20).on("reference").build().run(4000, 3);
  EXPECT_EQ(r.run.paths, 4000u);
  EXPECT_EQ(r.run.seed, 3u);
  EXPECT_GT(r.run.seconds, 0.0);
  EXPECT_GT(r.pathsPerSecond(), 0.0);
  EXPECT_EQ(r.engine, "reference");
  EXPECT_GT(r.price(), 0.0);
  EXPECT_GT(r.priceStderr(), 0.0);
  for (const char* in : {"spot", "strike", "vol", "rate", "maturity"}) EXPECT_GT(r.greekStderr(in), 0.0) << in;
  EXPECT_GT(r.greek("spot"), 0.0);
  EXPECT_LT(r.greek("strike"), 0.0);
  EXPECT_THROW(r.greek("nosuch"), std::invalid_argument);
  // Without Greeks: the same value, no reverse sweep.
  const Result v = MonteCarlo::of(products::asianCall()).steps(20).greeks(false).build().run(4000, 3);
  EXPECT_EQ(v.price(), r.price());
  EXPECT_EQ(v.greek("spot"), 0.0);
}

TEST(ReferenceEngines, InvalidRequestsAreRejected) {
  const Tape t = products::asianCall(10);
  EXPECT_THROW(MonteCarlo::of(t).on("nosuch").build(), std::invalid_argument);
  EXPECT_THROW(MonteCarlo::of(t).set("nosuch", 1.0).build(), std::invalid_argument);
  RunConfig typo;
  typo.strategy = "nope";  // rejected even on a tape too short to be cut
  EXPECT_THROW(MonteCarlo::of(products::europeanCall(4)).config(typo).build(), std::invalid_argument);
  KernelOptions bad;
  bad.kind = KernelKind::Register;  // no plan
  EXPECT_THROW(compileOn("reference", t, bad), std::invalid_argument);
  Tape broken = t;
  broken.a.back() = broken.size();  // an argument from the future
  EXPECT_THROW(compileOn("reference", broken, plainOptions(t)), std::invalid_argument);
  auto k = compileOn("reference", t, plainOptions(t));
  EXPECT_THROW(k->run({{1.0, 2.0}}, 10, 1), std::invalid_argument);  // wrong number of inputs
}
