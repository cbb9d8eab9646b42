// The tuner's four steps (api/tune_steps.h), each alone: the candidates a tape gives, each engine's
// pruning model, the bench of a run function, the ranking and the store's verdict; and the one
// "same bits" (engine/engine.h) and median (util/stats.h) they decide with.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "api/tune_steps.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "util/stats.h"

using namespace tapelab;

namespace {

PlanChoice choice(const std::string& label, int32_t peakLive, double recompute) {
  PlanChoice p{label, {}};
  p.metrics.peakLive = peakLive;
  p.metrics.recomputeCost = recompute;
  return p;
}

TuneCandidate timedCandidate(const std::string& plan, double median, double spread, BitsCheck bits) {
  TuneCandidate c;
  c.plan = plan;
  c.status = CandidateStatus::Timed;
  c.median = median;
  c.spread = spread;
  c.bits = bits;
  return c;
}

EngineCaps capsOf(bool gpuEmitter) {
  EngineCaps c;
  c.marketOrder = gpuEmitter;  // the GPU emitter's engines have a market order
  return c;
}

}  // namespace

TEST(TuneStatus, EachStatusHasOneWordAndTheDetailFollows) {
  std::set<std::string> words;
  for (CandidateStatus s : {CandidateStatus::NotTried, CandidateStatus::Pruned, CandidateStatus::Failed,
                            CandidateStatus::Compiled, CandidateStatus::Timed})
    words.insert(toString(s));
  EXPECT_EQ(words.size(), 5u) << "one word each";
  TuneCandidate c;
  c.status = CandidateStatus::NotTried;
  c.why = "budget";
  EXPECT_EQ(c.statusText(), "not tried: budget");
  c.status = CandidateStatus::Timed;
  c.why.clear();
  EXPECT_EQ(c.statusText(), "timed");
  EXPECT_TRUE(c.timed());
  EXPECT_STREQ(toString(BitsCheck::SamePlain), "==plain");
  EXPECT_STREQ(toString(BitsCheck::Differ), "DIFFER");
  EXPECT_STREQ(toString(BitsCheck::Unchecked), "-");
}

// Step 1: plain first, each checkpointed plan once (by its cuts), none past the tape's size, none at all
// without register kernels; an unknown strategy is an error.
TEST(TuneCandidates, PlainAndEachDistinctPlanOnce) {
  const Tape tape = products::asianCall(24);
  const std::vector<PlanChoice> plans = candidatePlans(tape, {"window", "marginal"}, {4, 8, 4000}, 1, true);
  ASSERT_FALSE(plans.empty());
  EXPECT_EQ(plans.front().label, "plain");
  std::set<std::string> labels;
  std::set<std::vector<int32_t>> cuts;
  for (const PlanChoice& p : plans) {
    EXPECT_TRUE(labels.insert(p.label).second) << p.label << " twice";
    const Plan plan = planForLabel(tape, p.label, 1);
    EXPECT_TRUE(cuts.insert(plan.bounds).second) << p.label << ": the cuts of another";
    EXPECT_EQ(planMetrics(tape, plan).peakLive, p.metrics.peakLive) << p.label;
  }
  EXPECT_GT(plans.size(), 1u);
  EXPECT_EQ(labels.count("window 4000"), 0u) << "more segments than nodes";
  EXPECT_EQ(candidatePlans(tape, {"window"}, {4, 8}, 1, false).size(), 1u) << "no register kernels: plain alone";
  EXPECT_THROW(candidatePlans(tape, {"windw"}, {4}, 1, true), std::exception);
}

TEST(TuneCandidates, FieldsSearchedAndTheirVariants) {
  const ConfigField* math = findConfigField("math");
  ASSERT_NE(math, nullptr);
  EXPECT_FALSE(searchesField(*math, "cpu-jit", {})) << "the job fixes math";
  for (const ConfigField& f : configFields()) {
    if (!searchesField(f, "cpu-jit", {})) continue;
    EXPECT_FALSE(searchesField(f, "cpu-jit", {f.name})) << f.name << ": fixed by --config";
    const KernelConfig best = defaultConfig("cpu-jit", true, 1);
    EXPECT_FALSE(fieldVariant(f, best, f.get(best))) << f.name << ": its own value is no candidate";
    for (const std::string& v : searchValues(f)) {
      const auto c = fieldVariant(f, best, v);
      if (c) {
        EXPECT_EQ(f.get(*c), v) << f.name;
      }
    }
  }
  // A value that does not act on the candidate's kernel builds the same kernel: no candidate
  // (engine/config.h fieldActs). The layout and the market order are searched like every field.
  const ConfigField& order = *findConfigField("market_order");
  const ConfigField& layout = *findConfigField("layout");
  const KernelConfig cuda = defaultConfig("cuda", false, 7);
  EXPECT_TRUE(searchesField(order, "cuda", {}));
  EXPECT_TRUE(searchesField(layout, "cuda", {}));
  EXPECT_FALSE(searchesField(order, "cuda", {"market_order"})) << "fixed by --config";
  EXPECT_TRUE(fieldVariant(order, cuda, "joint", {"register", 7, true}));
  EXPECT_FALSE(fieldVariant(order, cuda, "joint", {"register", 1, true})) << "one market: one order";
  EXPECT_FALSE(fieldVariant(order, cuda, "joint", {"plain", 7, true}));
  EXPECT_FALSE(fieldVariant(layout, cuda, "aos", {"plain", 7, true}));
  EXPECT_TRUE(fieldVariant(layout, cuda, "aos", {"register", 7, true})) << "cuda stores its draws in the buffer";
  KernelConfig joint = cuda;
  joint.marketOrder = MarketOrder::Joint;
  EXPECT_FALSE(fieldVariant(*findConfigField("markets"), joint, "copies", {"register", 7, true}))
      << "markets=copies|loop under the joint order: the same kernel";
}

// Step 2: cuda and hip prune by the calibrated register budget; the other engines do not, and say why.
TEST(TunePrune, EachEngineItsOwnModel) {
  for (const char* engine : {"cuda", "hip"}) {
    const PruneModel m = pruneModelFor(engine, capsOf(true), 2);
    EXPECT_TRUE(m.prunes()) << engine;
    EXPECT_EQ(m.peakLiveBudget, registerBudget(2)) << engine;
    EXPECT_NE(m.says.find("sm_90 register budget"), std::string::npos) << m.says;
  }
  for (const char* engine : {"vulkan", "opencl"}) {
    const PruneModel m = pruneModelFor(engine, capsOf(true), 2);
    EXPECT_FALSE(m.prunes()) << engine;
    EXPECT_NE(m.says.find("no register budget"), std::string::npos) << m.says;
  }
  const PruneModel cpu = pruneModelFor("cpu-jit", capsOf(false), 1);
  EXPECT_FALSE(cpu.prunes());
  EXPECT_EQ(cpu.says, "a CPU engine: no register budget prunes them");
}

TEST(TunePrune, LeastRecomputeFirstWithinTheBudget) {
  PruneModel m;
  m.peakLiveBudget = 50;
  const std::vector<PlanChoice> plans = {choice("plain", 400, 0), choice("a 8", 40, 30), choice("b 8", 60, 1),
                                         choice("c 8", 45, 10), choice("d 8", 30, 10)};
  const PrunedPlans p = prunePlans(plans, m, 2);
  EXPECT_EQ(p.timed, (std::vector<std::string>{"plain", "d 8", "c 8"})) << "count + 1, (recompute, peak_live)";
  ASSERT_EQ(p.over.size(), 1u);
  EXPECT_EQ(p.over[0].label, "b 8");
  EXPECT_EQ(p.within, 4u);
  const PrunedPlans all = prunePlans(plans, PruneModel{}, 10);
  EXPECT_TRUE(all.over.empty()) << "no budget: nothing pruned";
  EXPECT_EQ(all.timed.size(), plans.size());
}

TEST(TunePrune, NothingFitsTheLeastPeakLiveIsTimed) {
  PruneModel m;
  m.peakLiveBudget = 10;
  const PrunedPlans p = prunePlans({choice("plain", 400, 0), choice("a 8", 90, 1), choice("b 8", 60, 5)}, m, 4);
  EXPECT_EQ(p.timed, (std::vector<std::string>{"plain", "b 8"}));
  EXPECT_EQ(p.over.size(), 2u) << "still reported as pruned";
}

// Step 3: the runs a bench makes, on the seed given, and their median and spread.
TEST(TuneBench, RunsTheSeedGivenAndTakesTheMedian) {
  int calls = 0;
  const BenchRuns b = benchRuns(
      [&](uint64_t seed) {
        ++calls;
        RunResult r;
        r.seed = seed;
        return r;
      },
      5, 42);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(b.seconds.size(), 5u);
  EXPECT_EQ(b.last.seed, 42u);
  EXPECT_EQ(b.median, median(b.seconds));
  EXPECT_GE(b.spread, 0);
}

TEST(TuneBench, BitsAgainstThePlainKernel) {
  RunResult a;
  a.markets.push_back({1.5, 0.25, {0.5, -0.0}, {0.1, 0.2}});
  RunResult b = a;
  EXPECT_EQ(checkBits(a, b), BitsCheck::SamePlain);
  b.markets[0].greeks[1] = 0.0;  // +0 and -0 are other bits
  EXPECT_EQ(checkBits(a, b), BitsCheck::Differ);
  b = a;
  b.markets[0].greeksStderr[0] = std::nextafter(0.1, 1.0);
  EXPECT_EQ(checkBits(a, b), BitsCheck::Differ) << "the stderrs are bits too";
  b = a;
  b.markets.push_back(a.markets[0]);
  EXPECT_EQ(checkBits(a, b), BitsCheck::Differ) << "another market count";
  // A tangent kernel: its values the plain kernel's bits, its Greeks summed in another order.
  b = a;
  b.markets[0].greeks[0] = std::nextafter(0.5, 1.0);
  EXPECT_EQ(checkBits(b, a, KernelKind::Tangent), BitsCheck::SameValue);
  EXPECT_STREQ(toString(BitsCheck::SameValue), "==value");
  b.markets[0].valueStderr = std::nextafter(0.25, 1.0);
  EXPECT_EQ(checkBits(b, a, KernelKind::Tangent), BitsCheck::Differ) << "the value's stderr is a value's bits";
}

TEST(TuneStats, Median) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({}), 0);
}

// Step 4: beats needs the bits and a margin past the spreads; the ranking puts timed-with-bits first by
// speed, then timed that differ, then compiled by the compiler's statistics, then the rest.
TEST(TuneRank, BeatsNeedsTheBitsAndAMarginPastTheNoise) {
  const TuneCandidate fast = timedCandidate("a", 1.0, 0.02, BitsCheck::SamePlain);
  const TuneCandidate slow = timedCandidate("b", 1.5, 0.02, BitsCheck::SamePlain);
  const TuneCandidate close = timedCandidate("c", 1.01, 0.02, BitsCheck::SamePlain);
  const TuneCandidate wrong = timedCandidate("d", 0.1, 0, BitsCheck::Differ);
  EXPECT_TRUE(beats(fast, slow, false, 1));
  EXPECT_FALSE(beats(slow, fast, false, 1));
  EXPECT_FALSE(beats(fast, close, false, 1)) << "within the spread";
  EXPECT_FALSE(beats(wrong, slow, false, 1)) << "other bits never win";
  EXPECT_TRUE(beats(slow, wrong, false, 1));
}

TEST(TuneRank, CompileOnlyByTheCompilersStatistics) {
  TuneCandidate a, b;
  a.status = b.status = CandidateStatus::Compiled;
  a.stats.spillStoreBytes = 0;
  b.stats.spillStoreBytes = 64;
  EXPECT_TRUE(beats(a, b, true, 1));
  b.stats.spillStoreBytes = 0;
  a.stats.instructions = 800;  // copies for 4 markets: 200 a market
  b.stats.instructions = 300;
  b.config.markets = MarketCode::Loop;  // one body for every market: 300 a market
  EXPECT_TRUE(beats(a, b, true, 4));
  EXPECT_FALSE(beats(a, b, true, 1));
  TuneCandidate failed;
  failed.status = CandidateStatus::Failed;
  EXPECT_TRUE(beats(a, failed, true, 1));
  EXPECT_FALSE(beats(failed, a, true, 1));
}

TEST(TuneRank, OrderAndWinner) {
  TuneCandidate pruned;
  pruned.status = CandidateStatus::Pruned;
  const std::vector<TuneCandidate> cs = {pruned, timedCandidate("slow", 2, 0, BitsCheck::SamePlain),
                                         timedCandidate("wrong", 0.5, 0, BitsCheck::Differ),
                                         timedCandidate("fast", 1, 0, BitsCheck::SamePlain)};
  EXPECT_EQ(rankOrder(cs, false, 1), (std::vector<size_t>{3, 1, 2, 0}));
  std::vector<TuneCandidate> ranked;
  for (size_t i : rankOrder(cs, false, 1)) ranked.push_back(cs[i]);
  EXPECT_EQ(winnerOf(ranked, false), 0);
  EXPECT_EQ(winnerOf({cs[2], cs[0]}, false), -1) << "other bits are no winner";
  EXPECT_EQ(winnerOf({}, false), -1);
  TuneCandidate compiled;
  compiled.status = CandidateStatus::Compiled;
  EXPECT_EQ(winnerOf({compiled}, true), 0);
}

TEST(TuneStore, OnlyAGainPastTheNoise) {
  EXPECT_FALSE(storeVerdict(0.30, 0.10, false, "x")) << "a gain past the noise is stored";
  const auto inside = storeVerdict(0.05, 0.10, false, "+5.0% against the defaults");
  ASSERT_TRUE(inside);
  EXPECT_EQ(*inside, "not stored: the winner's gain is within the noise of its own run (+5.0% against the defaults)");
  EXPECT_TRUE(storeVerdict(0.005, 0, false, "x")) << "1% at least";
  EXPECT_FALSE(storeVerdict(0.05, 0.10, true, "x")) << "--store-within-noise";
}
