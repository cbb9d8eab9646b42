// Forward (tangent) against reverse (adjoint) mode, predicted from a tape's structure (issue 48):
// the work per path of each kernel kind in the measured op weights (planner/costs.h), so a driver
// can say beforehand from how many differentiated inputs the adjoint is the cheaper kind.
//   forward  sum over nodes of weight(op): every kind's forward sweep
//   adjoint  forward + kTermCost per adjoint term (an argument whose rule sends something: one a node)
//   tangent  forward + kTermCost per tangent term (an argument's rule times each tangent slot the
//            argument carries, tape/tangent.h: the inputs it depends on among those differentiated)
// A term is a multiply and an add (kTermCost 2); a rule's partial derivative is shared by its terms
// and counted in neither, as are the forward values the reverse sweep reads. Not modelled: memory
// (the plain adjoint keeps what the reverse sweep reads, a checkpointed one recomputes instead: add
// its plan's recompute_cost, planner/metrics.h), registers and spills, the draws' share of forward.
#pragma once
#include <cstdint>
#include <vector>

#include "planner/costs.h"
#include "tape/tape.h"

namespace tapelab {

inline constexpr double kTermCost = 2;

struct KindCosts {
  double forward = 0, adjoint = 0, tangent = 0;  // weighted instructions per path
  int64_t adjointTerms = 0, tangentTerms = 0;
  double tangentOverAdjoint() const { return tangent / adjoint; }  // > 1: the adjoint is predicted faster
};

// `wrt`: the input ordinals the tangent kernel differentiates by (ascending; empty: every input).
KindCosts kindCosts(const Tape& tape, const std::vector<int>& wrt, const CostModel& model = CostModel::measured());

}  // namespace tapelab
