// Cut strategies: exactness of the dynamic programmes against brute force,
// optimal never worse than the heuristics on its objective, every strategy's
// plan well formed, and invalid knobs rejected (library, RunConfig, variables).
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "api/montecarlo.h"
#include "planner/costs.h"
#include "planner/metrics.h"
#include "planner/nested.h"
#include "planner/optimal.h"
#include "planner/strategies.h"
#include "tests/planner/planner_test_tapes.h"

using namespace tapelab;
using namespace tapelab::plannertest;

namespace {

PlanOptions segments(int s) {
  PlanOptions o;
  o.segments = s;
  return o;
}

// Every plan with exactly `segs` segments.
void forEachPlan(const Tape& t, int segs, const std::function<void(const Plan&)>& fn) {
  const int32_t n = t.size();
  std::vector<int32_t> b(segs + 1);
  b[0] = 0;
  b[segs] = n;
  std::function<void(int, int32_t)> rec = [&](int s, int32_t from) {
    if (s == segs) {
      fn(makePlan(t, b, "brute"));
      return;
    }
    for (int32_t c = from; c <= n - (segs - s); ++c) {
      b[s] = c;
      rec(s + 1, c + 1);
    }
  };
  rec(1, 1);
}

TEST(PlannerStrategies, OptimalDynamicProgrammesMatchBruteForce) {
  RandomTapeOptions o;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    o.nodes = 6 + static_cast<int32_t>(seed % 11);
    o.inputs = 1 + static_cast<int>(seed % 3);
    o.draws = static_cast<int>(seed % 4);
    o.reach = 1.0 + static_cast<double>(seed % 5);
    o.farProbability = 0.1 * static_cast<double>(seed % 4);
    o.scatterInputs = seed % 3 == 0;
    const Tape t = randomTape(seed, o);
    const int32_t n = t.size();
    for (int segs = 2; segs <= std::min<int32_t>(4, n); ++segs) {
      SCOPED_TRACE(t.name + ", " + std::to_string(segs) + " segments");
      int32_t bestPersistent = std::numeric_limits<int32_t>::max(), bestPeak = bestPersistent;
      forEachPlan(t, segs, [&](const Plan& p) {
        const PlanMetrics m = planMetrics(t, p);
        bestPersistent = std::min(bestPersistent, m.persistent);
        bestPeak = std::min(bestPeak, m.peakLive);
      });
      EXPECT_EQ(planMetrics(t, planOptimalPersistent(t, segments(segs))).persistent, bestPersistent);
      std::vector<std::vector<int32_t>> everywhere(segs - 1);
      for (auto& k : everywhere)
        for (int32_t c = 1; c < n; ++c) k.push_back(c);
      EXPECT_EQ(planMetrics(t, optimalOverCandidates(t, segs, everywhere, CutObjective::PeakLive, "x")).peakLive,
                bestPeak);
      EXPECT_EQ(planMetrics(t, optimalOverCandidates(t, segs, everywhere, CutObjective::Persistent, "x")).persistent,
                bestPersistent);
      // The bound is peak_live minus the base: the best plan's own value is
      // admissible, one below it leaves no plan, which is an error, not a crash.
      int32_t base = 0;
      for (int32_t j = 0; j < n; ++j) base += t.op[j] == Op::Input || j == t.output;
      EXPECT_EQ(planMetrics(t, optimalOverCandidates(t, segs, everywhere, CutObjective::PeakLive, "x", bestPeak - base))
                    .peakLive,
                bestPeak);
      if (bestPeak - base >= 1) {
        EXPECT_THROW(optimalOverCandidates(t, segs, everywhere, CutObjective::PeakLive, "x", bestPeak - base - 1),
                     std::invalid_argument);
      }
    }
  }
}

std::vector<Tape> comparisonTapes() {
  std::vector<Tape> tapes = productTapes();
  tapes.push_back(products::basketCall(10, 30));
  for (Tape& t : randomTapes(12, 300)) tapes.push_back(std::move(t));
  for (Tape& t : randomTapes(3, 3000, 50)) tapes.push_back(std::move(t));
  return tapes;
}

TEST(PlannerStrategies, OptimalIsNeverWorseOnItsObjective) {
  for (const Tape& t : comparisonTapes()) {
    for (int segs : {2, 4, 8, 16, 32}) {
      if (segs > t.size()) continue;
      SCOPED_TRACE(t.name + ", " + std::to_string(segs) + " segments");
      const PlanOptions o = segments(segs);
      const PlanMetrics opt = planMetrics(t, makeStrategyPlan("optimal", t, o));
      const PlanMetrics optP = planMetrics(t, makeStrategyPlan("optimal-persistent", t, o));
      EXPECT_EQ(opt.segments, segs);
      EXPECT_EQ(optP.segments, segs);
      for (const char* other : {"window", "uniform", "marginal"}) {
        const PlanMetrics m = planMetrics(t, makeStrategyPlan(other, t, o));
        ASSERT_EQ(m.segments, segs) << other;
        EXPECT_LE(opt.peakLive, m.peakLive) << other;
        EXPECT_LE(optP.persistent, m.persistent) << other;
      }
      EXPECT_LE(optP.persistent, opt.persistent);
      // auto chooses its count but is never worse than window at the requested one.
      const PlanMetrics autoM = planMetrics(t, makeStrategyPlan("auto", t, o));
      EXPECT_LE(autoM.peakLive, planMetrics(t, makeStrategyPlan("window", t, o)).peakLive);
    }
  }
}

TEST(PlannerStrategies, EveryStrategyGivesAWellFormedPlan) {
  std::vector<Tape> tapes = productTapes();
  for (Tape& t : randomTapes(10, 60)) tapes.push_back(std::move(t));
  for (const Tape& t : tapes) {
    const int32_t n = t.size();
    for (const StrategyEntry& s : strategies())
      for (int segs : {1, 2, 5, 16, n}) {
        if (segs > n) continue;
        SCOPED_TRACE(t.name + " " + s.name + " " + std::to_string(segs));
        const Plan p = makeStrategyPlan(s.name, t, segments(segs));
        EXPECT_EQ(p.strategy, s.name);
        ASSERT_GE(p.bounds.size(), 2u);
        EXPECT_EQ(p.bounds.front(), 0);
        EXPECT_EQ(p.bounds.back(), n);
        for (size_t k = 1; k < p.bounds.size(); ++k) EXPECT_LT(p.bounds[k - 1], p.bounds[k]);
        if (s.name != "auto" && s.name != "revolve" && s.name != "budget" &&
            s.name != "periodic") {  // these choose their own count (periodic: whole Philox calls a segment)
          EXPECT_EQ(p.segments(), segs);
        }
      }
  }
}

TEST(PlannerStrategies, UniformSegmentLengths) {
  const Tape t = products::asianCall(252);
  PlanOptions o = segments(16);
  const Plan even = makeStrategyPlan("uniform", t, o);
  ASSERT_EQ(even.segments(), 16);
  for (int s = 0; s < 16; ++s) EXPECT_EQ(even.end(s) - even.begin(s), 96);
  o.segLen = 48;
  const Plan fixed = makeStrategyPlan("uniform", t, o);
  EXPECT_EQ(fixed.segments(), 32);
  EXPECT_EQ(defaultSegLen(t.size()), 48);
}

TEST(PlannerStrategies, InvalidKnobsAreRejected) {
  const Tape t = products::asianCall(10);  // 84 nodes
  for (int bad : {0, -1, -16, t.size() + 1, 1 << 30})
    for (const StrategyEntry& s : strategies())
      EXPECT_THROW(makeStrategyPlan(s.name, t, segments(bad)), std::invalid_argument) << s.name << " " << bad;
  EXPECT_THROW(makeStrategyPlan("no-such-strategy", t, segments(4)), std::invalid_argument);
  PlanOptions negativeLen = segments(4);
  negativeLen.segLen = -3;
  EXPECT_THROW(makeStrategyPlan("uniform", t, negativeLen), std::invalid_argument);
  try {
    makeStrategyPlan("nope", t, segments(4));
    ADD_FAILURE() << "strategy 'nope' accepted";
  } catch (const std::invalid_argument& e) {
    for (const StrategyEntry& s : strategies()) EXPECT_NE(std::string(e.what()).find(s.name), std::string::npos);
    EXPECT_EQ(std::string(e.what()).rfind("unknown strategy 'nope' (known: uniform, window", 0), 0u) << e.what();
  }
  EXPECT_EQ(&findStrategy("window"), &strategies()[1]);
  EXPECT_THROW(findStrategy("Window"), std::invalid_argument);

  // The same through the knobs every front end resolves (--checkpoint, --strategy).
  EngineCaps caps;
  caps.usable = true;
  caps.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch};
  for (const char* bad : {"0", "-2", "abc", "99999999999", "", "4x"})
    EXPECT_THROW(Checkpoint::parse(bad, "--checkpoint"), std::invalid_argument) << bad;
  EXPECT_EQ(Checkpoint::parse("off", "--checkpoint"), Checkpoint::off());
  EXPECT_EQ(Checkpoint::parse("auto", "--checkpoint"), Checkpoint::automatic());
  EXPECT_EQ(Checkpoint::parse("7", "--checkpoint"), Checkpoint::count(7));
  EXPECT_EQ(Checkpoint::count(7).text(), "7");
  try {
    Checkpoint::parse("x", "TAPELAB_CKPT");
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "TAPELAB_CKPT: expected off, auto or a positive segment count, got 'x'");
  }
  for (Checkpoint bad : {Checkpoint::count(85), Checkpoint::count(0)}) {
    RunConfig c;
    c.checkpoint = bad;
    EXPECT_THROW(resolveKernel(t, c, caps), std::invalid_argument) << bad.text();
  }
  RunConfig unknown;
  unknown.checkpoint = Checkpoint::count(4);
  unknown.strategy = "nope";
  EXPECT_THROW(resolveKernel(t, unknown, caps), std::invalid_argument);
  for (const StrategyEntry& s : strategies()) {
    RunConfig c;
    c.checkpoint = Checkpoint::count(4);
    c.strategy = s.name;
    const KernelOptions k = resolveKernel(t, c, caps);
    EXPECT_EQ(k.kind, KernelKind::Register);
    EXPECT_EQ(k.plan.strategy, s.name);
  }
  // Automatic checkpointing: at least 768 nodes, 16 segments, window.
  const Tape asian = products::asianCall(252);
  const KernelOptions automatic = resolveKernel(asian, RunConfig{}, caps);
  EXPECT_EQ(automatic.kind, KernelKind::Register);
  EXPECT_EQ(automatic.plan.segments(), 16);
  EXPECT_EQ(automatic.plan.strategy, "window");
  EXPECT_EQ(resolveKernel(t, RunConfig{}, caps).kind, KernelKind::Plain);

  // Environment variables are checked as strictly as flags.
  ::setenv("TAPELAB_CKPT_NODES", "0", 1);
  EXPECT_THROW(RunConfig::fromEnvironment(), std::invalid_argument);
  ::setenv("TAPELAB_CKPT_NODES", "100", 1);
  EXPECT_EQ(RunConfig::fromEnvironment().ckptNodes, 100);
  ::unsetenv("TAPELAB_CKPT_NODES");
  ::setenv("TAPELAB_SEGLEN", "-5", 1);
  EXPECT_THROW(RunConfig::fromEnvironment(), std::invalid_argument);
  ::unsetenv("TAPELAB_SEGLEN");
  ::setenv("TAPELAB_CKPT", "0", 1);
  EXPECT_THROW(resolveKernel(asian, RunConfig::fromEnvironment(), caps), std::invalid_argument);
  ::setenv("TAPELAB_CKPT", "8", 1);
  ::setenv("TAPELAB_STRATEGY", "optimal", 1);
  const KernelOptions fromEnv = resolveKernel(asian, RunConfig::fromEnvironment(), caps);
  EXPECT_EQ(fromEnv.plan.segments(), 8);
  EXPECT_EQ(fromEnv.plan.strategy, "optimal");
  ::setenv("TAPELAB_STRATEGY", "bogus", 1);
  EXPECT_THROW(resolveKernel(asian, RunConfig::fromEnvironment(), caps), std::invalid_argument);
  ::unsetenv("TAPELAB_CKPT");
  ::unsetenv("TAPELAB_STRATEGY");
}

// The budget strategy: the least weighted recompute within the budget, and for register
// kernels a default from the register file that shrinks with the markets fused per dispatch.
TEST(PlannerStrategies, BudgetKeepsPeakLiveAndDefaultsByMarkets) {
  EXPECT_EQ(registerBudget(1), 212);
  EXPECT_EQ(registerBudget(2), 200);
  EXPECT_EQ(registerBudget(7), 57);
  EXPECT_EQ(registerBudget(8), 50);
  EXPECT_THROW(registerBudget(0), std::invalid_argument);
  EXPECT_THROW(registerBudget(9), std::invalid_argument);

  const Tape asian = products::asianCall(252);
  const CostModel& costs = CostModel::measured();
  for (int32_t budget : {57, 92, 212}) {
    PlanOptions o;
    o.budget = budget;
    const PlanMetrics m = planMetrics(asian, planBudget(asian, o), costs);
    EXPECT_LE(m.peakLive, budget);
    // No cheaper schedule among the ones it searches fits: window and two-level at 8 and 16 here.
    for (int s : {8, 16}) {
      PlanOptions w = segments(s);
      for (const Plan& p : {planWindow(asian, w), planTwoLevel(asian, w), planRevolve(asian, w)}) {
        const PlanMetrics other = planMetrics(asian, p, costs);
        if (other.peakLive <= budget) {
          EXPECT_LE(m.recomputeCost, other.recomputeCost) << p.strategy << " " << s;
        }
      }
    }
  }
  PlanOptions tooTight;
  tooTight.budget = 3;
  EXPECT_THROW(planBudget(asian, tooTight), std::invalid_argument);

  // Through the API: the 7-market register kernel gets a plan within registerBudget(7); one market a looser one.
  EngineCaps caps;
  caps.usable = true;
  caps.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch};
  RunConfig c;
  c.strategy = "budget";
  const KernelOptions seven = resolveKernel(asian, c, caps, 7);
  const KernelOptions one = resolveKernel(asian, c, caps, 1);
  EXPECT_EQ(seven.kind, KernelKind::Register);
  EXPECT_LE(planMetrics(asian, seven.plan).peakLive, 57);
  EXPECT_LE(planMetrics(asian, one.plan).peakLive, 212);
  EXPECT_GT(planMetrics(asian, one.plan).peakLive, 57);
  EXPECT_LT(planMetrics(asian, one.plan, costs).recomputeCost, planMetrics(asian, seven.plan, costs).recomputeCost);
  // More markets than a GPU dispatch fuses (the reference engines): window's peak_live, no error.
  RunConfig eight = c;
  eight.checkpoint = Checkpoint::count(8);
  KernelOptions nine;
  ASSERT_NO_THROW(nine = resolveKernel(asian, eight, caps, 9));
  EXPECT_LE(planMetrics(asian, nine.plan).peakLive, planMetrics(asian, planWindow(asian, segments(8))).peakLive);
  EXPECT_GT(planMetrics(asian, nine.plan).peakLive, 57);
}

}  // namespace
