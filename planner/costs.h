// What recomputing one node costs, per op, for the weighted recompute cost of
// a plan (planner/metrics.h) and the budget strategy.
//
// The weights are instructions per op of tapelab's own CUDA kernels for sm_90
// (NVRTC + ptxas, the H200's compiler), counted by experiments/op_costs: the
// SASS of a kernel evaluating a chain of one op, less the same kernel without
// it, per op. A draw (Philox4x32-10 and its Box-Muller pair) costs what it
// costs; a constant is a literal (0). Results in
// runs/op-costs-sm90/; rerun the driver to recalibrate.
#pragma once
#include <array>
#include <string>

#include "tape/op.h"

namespace tapelab {

struct CostModel {
  std::array<double, kOpCount> weight{};
  std::string source;  // where the weights come from

  double of(Op op) const { return weight[static_cast<size_t>(op)]; }
  // The measured weights (see above).
  static const CostModel& measured();
  // Every op but const costs 1: recompute_cost is then recompute_ops.
  static CostModel unit();
};

}  // namespace tapelab
