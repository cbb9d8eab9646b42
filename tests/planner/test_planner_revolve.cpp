// Revolve against an independent brute-force search: for small chains, no
// schedule of any shape reverses l steps with s snapshots in fewer step
// evaluations than the revolve plan's lowered schedule performs.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

#include "planner/metrics.h"
#include "planner/nested.h"
#include "planner/schedule.h"
#include "tape/products/products.h"

namespace tapelab {
namespace {

// The kernel's rules, as a game: the primal sweep has run to the end and took
// snapshots at up to s-1 step boundaries of its choice (the start, boundary 0,
// is always held). Then steps l-1, ..., 0 are reversed in that order; a step
// can be reversed only from the state at its start (cost 1: its recompute).
// Moves: restore a snapshot (free), advance one step (cost 1), take a snapshot
// of the current state if fewer than s-1 are held (free), drop one (free).
// The least total cost, by a 0-1 breadth-first search over (position,
// snapshots, steps left).
int64_t bruteForce(int l, int s) {
  struct State {
    int cur;        // position of the current state, -1 when none
    unsigned held;  // bit p: a snapshot at boundary p (1 <= p < l)
    int left;       // steps still to reverse: l-1 .. left-1 done
    auto key() const { return std::tuple(cur, held, left); }
  };
  std::map<std::tuple<int, unsigned, int>, int64_t> dist;
  std::deque<std::pair<State, int64_t>> queue;
  auto push = [&](State st, int64_t d, bool front) {
    auto [it, fresh] = dist.try_emplace(st.key(), d);
    if (!fresh && it->second <= d) return;
    it->second = d;
    if (front) queue.emplace_front(st, d);
    else queue.emplace_back(st, d);
  };
  for (unsigned held = 0; held < (1u << l); ++held)
    if (!(held & 1u) && std::popcount(held) <= s - 1) push({-1, held, l}, 0, false);
  int64_t best = -1;
  while (!queue.empty()) {
    auto [st, d] = queue.front();
    queue.pop_front();
    if (dist[st.key()] < d) continue;
    if (st.left == 0) {
      best = d;
      break;
    }
    // restore: the start or any snapshot
    for (int p = 0; p < st.left; ++p)
      if (p == 0 || (st.held >> p & 1u)) push({p, st.held, st.left}, d, true);
    if (st.cur >= 0) {
      if (st.cur + 1 < st.left) push({st.cur + 1, st.held, st.left}, d + 1, false);  // advance
      if (st.cur > 0 && !(st.held >> st.cur & 1u) && std::popcount(st.held) < s - 1)
        push({st.cur, st.held | 1u << st.cur, st.left}, d, true);  // take a snapshot
      if (st.cur == st.left - 1) push({-1, st.held, st.left - 1}, d + 1, false);  // recompute, reverse
    }
    for (int p = 1; p < l; ++p)
      if (st.held >> p & 1u) push({st.cur, st.held & ~(1u << p), st.left}, d, true);  // drop
  }
  return best;
}

// Step evaluations of a plan's reverse sweep, counted on its lowered schedule.
int64_t scheduledSteps(const std::vector<int32_t>& starts, const Schedule& s) {
  auto steps = [&](int32_t lo, int32_t hi) {
    return std::lower_bound(starts.begin(), starts.end(), hi) - std::lower_bound(starts.begin(), starts.end(), lo);
  };
  int64_t total = 0;
  forEachBlock(s.blocks, [&](const ScheduleBlock& b) {
    if (b.kind == ScheduleBlock::Kind::Leaf) total += steps(b.from, b.end);
    if (b.kind == ScheduleBlock::Kind::Inner) total += steps(b.from, b.advanceEnd);
  });
  return total;
}

TEST(PlannerRevolve, StepsAreTheDrawRuns) {
  const Tape t = products::asianCall(5);
  const std::vector<int32_t> starts = stepStarts(t);
  ASSERT_EQ(starts.size(), 6u);
  EXPECT_EQ(starts.front(), 0);
  EXPECT_EQ(starts.back(), t.size());
  for (size_t i = 1; i + 1 < starts.size(); ++i) EXPECT_EQ(t.op[starts[i]], Op::Randn) << i;
  // The basket draws all its assets' normals at the start of a step: one run per step.
  EXPECT_EQ(stepStarts(products::basketCall(3, 4)).size(), 5u);
  Tape noDraws;  // no draws: equal steps
  noDraws.addInput("s", 1);
  for (int i = 0; i < 9; ++i) noDraws.push(Op::Exp, i);
  noDraws.output = 9;
  EXPECT_EQ(stepStarts(noDraws), (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST(PlannerRevolve, BruteForceByHand) {
  EXPECT_EQ(bruteForce(1, 2), 1);  // recompute the one step
  EXPECT_EQ(bruteForce(2, 2), 2);  // a snapshot at 1: each step recomputed once
  EXPECT_EQ(bruteForce(3, 2), 4);  // one snapshot for three steps: one step advanced twice
  EXPECT_EQ(bruteForce(4, 5), 4);  // enough snapshots: every step once
}

TEST(PlannerRevolve, MatchesBruteForceOnSmallChains) {
  for (int l = 1; l <= 9; ++l)
    for (int s = 2; s <= 4; ++s) {
      const Tape t = products::asianCall(l);
      PlanOptions o;
      o.segments = s;
      const Plan p = planRevolve(t, o);
      const std::vector<int32_t> starts = stepStarts(t);
      const int64_t optimum = bruteForce(l, s);
      SCOPED_TRACE("l=" + std::to_string(l) + " s=" + std::to_string(s));
      EXPECT_EQ(revolveCost(l, s), optimum);
      if (p.segments() == 1) {
        EXPECT_EQ(l, 1);  // one step: nothing to cut
        continue;
      }
      EXPECT_EQ(scheduledSteps(starts, lowerPlan(t, p)), optimum);
    }
}

TEST(PlannerRevolve, MoreSnapshotsNeverCostMore) {
  const Tape t = products::asianCall(60);
  int64_t prev = INT64_MAX;
  for (int s = 2; s <= 12; ++s) {
    const int64_t c = revolveCost(60, s);
    EXPECT_LE(c, prev) << s;
    prev = c;
    PlanOptions o;
    o.segments = s;
    EXPECT_EQ(scheduledSteps(stepStarts(t), lowerPlan(t, planRevolve(t, o))), c) << s;
  }
  // With a snapshot per step, every step is recomputed once: the flat plan's count.
  EXPECT_EQ(revolveCost(60, 61), 60);
}

}  // namespace
}  // namespace tapelab
