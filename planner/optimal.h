// Exact cut placement by dynamic programming, for a given segment count S.
//
// Objectives (peak_live and persistent as defined in planner/metrics.h):
//
// optimal-persistent  minimises persistent over ALL plans with S segments, exactly;
//   ties broken by the smallest sum of |cut_s - s*n/S| (cuts nearest the even
//   targets). persistent = base + sum over cuts of cost(prev, cut), where
//   cost(p, c) = #{non-base j in [p, c) with lastUse[j] >= c}: a value crossing
//   several cuts is counted at the first (an interval (j, lastUse[j]] hit by
//   cuts c' < c is hit by the previous cut too). So
//     f_k(c) = live'[c] + min_{p < c} (f_{k-1}(p) - A(p, c)),
//     A(p, c) = #{non-base j < p with lastUse[j] >= c}.
//   Moving from c to c+1 adds +1 to every p > j for each value j last read at c,
//   a suffix add; the minimum over p of a list under appends on the right and
//   suffix adds is kept by a list of undominated candidates (a candidate with an
//   equal-or-smaller value to its left never wins again) whose removals are
//   amortised, and a union-find to find where a suffix starts. Time
//   O(S * n * alpha(n)), memory O(S * n) int32 for the back pointers.
//
// optimal  minimises peak_live = persistent + max over segments W(p, c), where
//   W(p, c) is the largest count of local values and adjoints at any point of
//   segment [p, c)'s forward sweep, recompute and reverse: W depends only on
//   (p, c), because a value in [p, c) is persistent exactly when it is an input,
//   the output, or read at or after c. The DP keeps, per (cut index, position),
//   the partial plans (PartialPlan: sigma = persistent so far, mu = max W so
//   far) that can still win: sorted by sigma, each with a smaller sigma + mu than all before it
//   (the future adds the same to sigma and can only raise mu, so a partial plan
//   with more persistent and no smaller sigma + mu never ends better). It is
//   exact over the plans whose s-th cut lies in a candidate set K_s:
//     K_s = the cuts of window, uniform, marginal and optimal-persistent for the
//           same S (so optimal is never worse than any of them on peak_live),
//         + the 16 positions nearest the target s*n/S and the 16 with the fewest
//           live values (ties nearest the target) within n/(2S) of it.
//   W(p, c) for every p in K_{s-1} is computed in one sweep from c down, with
//   three max/add segment trees (forward, recompute and reverse points), so the
//   time is O(sum_s |K_s| * L * log L) with L about 2n/S, i.e. O(m * n log n)
//   with m ~ 35 candidates per cut, plus the DP over S * m^2 pairs.
//   optimalOverCandidates runs the same DP over any candidate sets (with every
//   position as a candidate it is exact over all plans: the tests check it
//   against brute force).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "planner/strategies.h"

namespace tapelab {

enum class CutObjective { PeakLive, Persistent };

Plan planOptimal(const Tape& tape, const PlanOptions& o);
Plan planOptimalPersistent(const Tape& tape, const PlanOptions& o);

// The DP behind planOptimal. candidates[s-1] lists the positions allowed for cut
// s (s = 1..segments-1), each in [1, n-1]. Returns the best plan for `objective`
// among those whose s-th cut is in candidates[s-1]: PeakLive ties go to fewer
// persistent values, Persistent ties to lower peak_live. `bound`, when >= 0, is
// the objective value of a plan known to be admissible (partial plans worse than
// it are dropped). Throws std::invalid_argument when no admissible plan exists.
Plan optimalOverCandidates(const Tape& tape, int segments, const std::vector<std::vector<int32_t>>& candidates,
                           CutObjective objective, std::string strategyName, int64_t bound = -1);

}  // namespace tapelab
