// Plan metrics against a brute-force recount: the persistent set from its
// definition, and peak_live / recompute_ops from an event-by-event simulation
// of the register-checkpointed kernel (planner/metrics.h), written
// independently of the O(n) counters it checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "planner/liveness.h"
#include "planner/metrics.h"
#include "planner/strategies.h"
#include "tests/planner/planner_test_tapes.h"

using namespace tapelab;
using namespace tapelab::plannertest;

namespace {

std::vector<int32_t> argsOf(const Tape& t, int32_t i) {
  std::vector<int32_t> r;
  if (arity(t.op[i]) >= 1) r.push_back(t.a[i]);
  if (arity(t.op[i]) >= 2) r.push_back(t.b[i]);
  if (arity(t.op[i]) >= 3) r.push_back(t.c[i]);
  return r;
}

// Readers of each node, and the brute-force last use (output read at n).
std::vector<int32_t> bruteLastUse(const Tape& t) {
  std::vector<int32_t> last(t.size());
  for (int32_t j = 0; j < t.size(); ++j) {
    last[j] = j;
    for (int32_t i = j + 1; i < t.size(); ++i)
      for (int32_t x : argsOf(t, i))
        if (x == j) last[j] = i;
    if (j == t.output) last[j] = t.size();
  }
  return last;
}

// The forward values node i's adjoint rule reads.
std::vector<int32_t> reverseReads(const Tape& t, int32_t i) {
  std::vector<int32_t> r;
  if (arity(t.op[i]) == 0) return r;
  const AdjointReads rd = adjointReads(t.op[i]);
  if (rd.a) r.push_back(t.a[i]);
  if (rd.b && arity(t.op[i]) >= 2) r.push_back(t.b[i]);
  if (rd.c && arity(t.op[i]) >= 3) r.push_back(t.c[i]);
  if (rd.r) r.push_back(i);
  return r;
}

struct Simulated {
  int32_t peak = 0;
  int64_t recompute = 0;
};

// The kernel as a list of events; every value instance and adjoint lives from
// its definition to its last use; count at each point between events.
Simulated simulate(const Tape& t, const Plan& p) {
  const int32_t n = t.size();
  const bool plain = p.segments() == 1;
  const int32_t P = static_cast<int32_t>(p.persistent.size());
  enum Kind { Fwd, Seed, Rec, Rev, End };
  struct Event {
    Kind kind;
    int32_t node;
  };
  std::vector<Event> ev;
  for (int32_t i = 0; i < n; ++i) ev.push_back({Fwd, i});
  ev.push_back({Seed, t.output});
  Simulated out;
  std::vector<std::vector<uint8_t>> recomputed(p.segments(), std::vector<uint8_t>(n, 0));
  for (int s = p.segments() - 1; s >= 0; --s) {
    if (!plain) {
      // Needed: non-persistent values of the segment the reverse reads, closed over forward reads.
      auto& need = recomputed[s];
      for (int32_t i = p.begin(s); i < p.end(s); ++i)
        for (int32_t x : reverseReads(t, i))
          if (x >= p.begin(s) && !p.isPersistent[x]) need[x] = 1;
      for (int32_t i = p.end(s) - 1; i >= p.begin(s); --i)
        if (need[i])
          for (int32_t x : argsOf(t, i))
            if (x >= p.begin(s) && !p.isPersistent[x]) need[x] = 1;
      for (int32_t i = p.begin(s); i < p.end(s); ++i)
        if (need[i]) {
          ev.push_back({Rec, i});
          out.recompute += t.op[i] != Op::Const;
        }
    }
    for (int32_t i = p.end(s) - 1; i >= p.begin(s); --i) ev.push_back({Rev, i});
  }
  ev.push_back({End, -1});
  const int32_t E = static_cast<int32_t>(ev.size());

  // Live intervals [def, lastUse) in event indices: point k is "after event k".
  std::vector<std::pair<int32_t, int32_t>> intervals;
  // Value instances: the forward one of every non-persistent node; the recomputed ones.
  std::vector<int32_t> fwdDef(n, -1), recDef(n, -1), fwdUse(n, -1), recUse(n, -1);
  std::vector<int32_t> segOf(n);
  for (int s = 0; s < p.segments(); ++s)
    for (int32_t i = p.begin(s); i < p.end(s); ++i) segOf[i] = s;
  // Adjoints: defined at the first contribution (or the seed), used at every
  // contribution, at the node's own reversal, and at the end for inputs.
  std::vector<int32_t> adjDef(n, -1), adjUse(n, -1);
  for (int32_t k = 0; k < E; ++k) {
    const Event& e = ev[k];
    if (e.kind == Fwd) {
      fwdDef[e.node] = k;
      for (int32_t x : argsOf(t, e.node)) fwdUse[x] = k;
    } else if (e.kind == Rec) {
      recDef[e.node] = k;
      for (int32_t x : argsOf(t, e.node))
        if (!p.isPersistent[x]) recUse[x] = k;
    } else if (e.kind == Seed) {
      adjDef[e.node] = k;
      adjUse[e.node] = k;
    } else if (e.kind == Rev) {
      for (int32_t x : reverseReads(t, e.node)) {
        if (p.isPersistent[x]) continue;
        if (plain) fwdUse[x] = k;
        else recUse[x] = k;
      }
      if (adjDef[e.node] >= 0) adjUse[e.node] = k;  // reads its own adjoint
      for (int32_t x : argsOf(t, e.node)) {
        if (adjDef[x] < 0) adjDef[x] = k;
        adjUse[x] = k;
      }
    } else {  // End: the Greeks are read
      for (int32_t x : t.inputNodes)
        if (adjDef[x] >= 0) adjUse[x] = k;
    }
  }
  for (int32_t j = 0; j < n; ++j) {
    if (!p.isPersistent[j]) {
      if (fwdUse[j] > fwdDef[j]) intervals.push_back({fwdDef[j], fwdUse[j]});
      if (recDef[j] >= 0 && recUse[j] > recDef[j]) intervals.push_back({recDef[j], recUse[j]});
    }
    // Adjoints of const and randn nodes are never read: dead stores, not held.
    const bool leafAdjoint = t.op[j] == Op::Const || t.op[j] == Op::Randn;
    if (!leafAdjoint && adjDef[j] >= 0 && adjUse[j] > adjDef[j]) intervals.push_back({adjDef[j], adjUse[j]});
  }
  std::vector<int32_t> diff(E + 1, 0);
  for (auto [a, b] : intervals) {
    ++diff[a];
    --diff[b];
  }
  out.peak = P;
  for (int32_t k = 0, run = 0; k < E; ++k) out.peak = std::max(out.peak, P + (run += diff[k]));
  return out;
}

std::vector<Plan> plansFor(const Tape& t) {
  std::vector<Plan> plans{plainPlan(t)};
  const int32_t n = t.size();
  for (const StrategyEntry& s : strategies())
    for (int segs : {2, 3, 8, 16})
      if (segs <= n) {
        PlanOptions o;
        o.segments = segs;
        Plan p = makeStrategyPlan(s.name, t, o);
        // The simulation below is of segment plans; per-value ones: test_planner_pervalue.cpp.
        if (!p.perValue) plans.push_back(std::move(p));
      }
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3 && n >= 4; ++trial) {
    std::set<int32_t> cuts;
    const int k = 1 + static_cast<int>(rng() % std::min<uint32_t>(6, static_cast<uint32_t>(n - 1)));
    while (static_cast<int>(cuts.size()) < k) cuts.insert(1 + static_cast<int32_t>(rng() % (n - 1)));
    std::vector<int32_t> b{0};
    b.insert(b.end(), cuts.begin(), cuts.end());
    b.push_back(n);
    plans.push_back(makePlan(t, b, "random-cuts"));
  }
  if (n >= 2) {
    std::vector<int32_t> every;
    for (int32_t i = 0; i <= n; ++i) every.push_back(i);
    plans.push_back(makePlan(t, every, "every-node"));
  }
  return plans;
}

std::vector<Tape> allTapes() {
  std::vector<Tape> tapes = productTapes();
  for (Tape& t : randomTapes(24, 40)) tapes.push_back(std::move(t));
  for (Tape& t : randomTapes(4, 400, 100)) tapes.push_back(std::move(t));
  return tapes;
}

TEST(PlannerMetrics, AsianWindowSixteenKeepsThirtyEightOnStepBoundaries) {
  const Tape t = products::asianCall(252);
  ASSERT_EQ(t.size(), 1536);
  PlanOptions o;
  o.segments = 16;
  const Plan p = makeStrategyPlan("window", t, o);
  const PlanMetrics m = planMetrics(t, p);
  EXPECT_EQ(m.persistent, 38);
  EXPECT_EQ(m.segments, 16);
  // Step s is nodes 15+6s .. 15+6s+5 (draw, *vol*sqrt(dt), +drift, exp, *spot, +sum).
  // Between two steps' arithmetic only the carried state crosses: strike, rate,
  // maturity, drift, vol*sqrt(dt), the running spot and the running sum. That
  // holds before a step's draw (15+6s) and before its running-sum add
  // (15+6s+5, the article's own cut at 1442); window takes the one nearer its target.
  const std::vector<int32_t> last = lastUse(t);
  for (int s = 1; s < p.segments(); ++s) {
    const int32_t c = p.bounds[s];
    const int32_t offset = (c - 15) % 6;
    EXPECT_TRUE(c >= 15 + 6 && c < 15 + 6 * 252 && (offset == 0 || offset == 5)) << "cut " << c;
    std::vector<int32_t> crossing;
    for (int32_t j = 0; j < c; ++j)
      if (last[j] >= c) crossing.push_back(j);
    const int32_t spot = offset == 0 ? c - 2 : c - 1, sum = offset == 0 ? c - 1 : c - 6;
    EXPECT_EQ(crossing, (std::vector<int32_t>{1, 3, 4, 11, 13, std::min(spot, sum), std::max(spot, sum)}))
        << "cut " << c;
  }
  EXPECT_EQ(p.bounds.back(), 1536);
  EXPECT_EQ(p.bounds[15], 1442);
}

TEST(PlannerMetrics, PlainKernel) {
  for (const Tape& t : productTapes()) {
    const PlanMetrics m = planMetrics(t, plainPlan(t));
    EXPECT_EQ(m.segments, 1);
    EXPECT_EQ(m.persistent, t.numInputs() + 1) << t.name;
    EXPECT_EQ(m.scratchSlots, 0);
    EXPECT_EQ(m.recomputeOps, 0);
    EXPECT_GT(m.peakLive, m.persistent);
  }
}

TEST(PlannerMetrics, PersistentSetIsCrossingPlusInputsPlusOutput) {
  for (const Tape& t : allTapes()) {
    const std::vector<int32_t> last = bruteLastUse(t);
    for (const Plan& p : plansFor(t)) {
      SCOPED_TRACE(t.name + " " + p.strategy + " " + std::to_string(p.segments()) + " segments");
      std::vector<int32_t> expect, crossing;
      int32_t stored = 0;
      for (int32_t j = 0; j < t.size(); ++j) {
        bool crosses = false;
        for (int s = 1; s < p.segments(); ++s) crosses |= j < p.bounds[s] && p.bounds[s] <= last[j];
        if (crosses) crossing.push_back(j);
        if (crosses && t.op[j] != Op::Input) ++stored;
        if (crosses || t.op[j] == Op::Input || j == t.output) expect.push_back(j);
      }
      EXPECT_EQ(p.persistent, expect);
      EXPECT_EQ(p.crossing, crossing);
      const PlanMetrics m = planMetrics(t, p);
      EXPECT_EQ(m.persistent, static_cast<int32_t>(expect.size()));
      EXPECT_EQ(m.scratchSlots, stored);
      EXPECT_EQ(m.segments, p.segments());
    }
  }
}

TEST(PlannerMetrics, PeakLiveAndRecomputeMatchAnEventSimulation) {
  for (const Tape& t : allTapes()) {
    if (t.size() > 2000) continue;
    for (const Plan& p : plansFor(t)) {
      if (p.nested()) continue;  // the simulation models one level of cuts
      SCOPED_TRACE(t.name + " " + p.strategy + " " + std::to_string(p.segments()) + " segments");
      const PlanMetrics m = planMetrics(t, p);
      const Simulated s = simulate(t, p);
      EXPECT_EQ(m.peakLive, s.peak);
      EXPECT_EQ(m.recomputeOps, s.recompute);
    }
  }
}

TEST(PlannerMetrics, CheckpointingShrinksTheAsianWorkingSet) {
  const Tape t = products::asianCall(252);
  PlanOptions o;
  o.segments = 16;
  const PlanMetrics plain = planMetrics(t, plainPlan(t));
  const PlanMetrics cut = planMetrics(t, makeStrategyPlan("window", t, o));
  EXPECT_LT(cut.peakLive * 4, plain.peakLive);
  EXPECT_GT(cut.recomputeOps, 0);
  EXPECT_LE(cut.recomputeOps, t.size());
}

}  // namespace
