// Nested (multi-level) checkpointing strategies.
//
// revolve    Griewank's binomial checkpointing (Revolve) over the tape's time
//            steps, with `segments` snapshots (one snapshot, the start alone,
//            gives the uncut plan; the chain's start counts as one,
//            as in Griewank & Walther): the schedule with the fewest step
//            evaluations in the reverse sweep among those that hold at most
//            that many snapshots at once. tapelab's kernels run the whole
//            primal sweep first (the value is needed before any adjoint), so
//            the snapshots the primal sweep takes are free and every step is
//            recomputed once more before its adjoint runs; revolveCost is the
//            optimum under exactly that rule (checked against a brute-force
//            search over every schedule in tests/planner/test_planner_revolve.cpp).
// two-level  window cuts at the top level (`segments`), then each segment cut
//            again by window into `innerSegments` (default 4) sub-segments, each
//            reversed from its own bookmark: two recomputes per node, a smaller
//            working set.
#pragma once
#include <cstdint>
#include <vector>

#include "planner/strategies.h"

namespace tapelab {

// Time steps of a tape: positions 0 = s_0 < s_1 < ... < s_l = n where step i
// covers nodes [s_i, s_{i+1}). A step starts at each run of consecutive draws
// (every product draws its step's normals first); the nodes before the second
// run belong to step 0, the payoff after the last run to the last step. A tape
// without draws is cut into min(n, kStepsWithoutDraws) equal steps.
inline constexpr int32_t kStepsWithoutDraws = 256;
std::vector<int32_t> stepStarts(const Tape& tape);

// The least number of step evaluations (recomputes plus the recompute that
// precedes each step's adjoint) in the reverse sweep of `steps` steps with
// `snapshots` snapshots (>= 2), primal sweep first (see above).
int64_t revolveCost(int steps, int snapshots);

Plan planRevolve(const Tape& tape, const PlanOptions& o);
Plan planTwoLevel(const Tape& tape, const PlanOptions& o);

}  // namespace tapelab
