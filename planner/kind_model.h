// Which kernel gets a job's Greeks in less time: the tangent kernel (forward mode: each value carries its
// derivatives in the inputs that reach it) or the checkpointed adjoint (forward sweep, then each segment
// recomputed and reversed). Predicted from the tape alone, before anything compiles: what `--kernel auto`
// (the default where the user names no kernel, checkpoint, strategy or plan) runs.
//
// Instructions a path, weighted by planner/costs.h (sm_90 instructions per op):
//   forward   every node once per copy (a value the markets share once, one an input the markets differ
//             in reaches once per market);
//   tangent   forward (once a chunk of tangent_chunk inputs) + per node, per tangent slot it carries (less
//             the closed forms), its tangent rule:
//             the adjoint rules of the arguments that carry the slot with d := their tangent, and the
//             additions between them (a product term fused into the sum with tangent_fma); a rule
//             d * (partial) costs a slot one multiplication, its partial once a node (the same expression
//             in every slot: the compiler computes it once);
//   adjoint   forward + what the plan recomputes (a stored draw a load) + per node with an adjoint, per
//             market, its adjoint rules and the additions into the arguments' adjoints.
// Time is instructions over the kernel's issue efficiency, measured on the GPU and kept here with its
// source: a kernel whose time loop rolls (gpu/codegen/rolling.h) issues like hand-written code, a
// straight-line kernel of thousands of instructions stalls on instruction fetch. CPU engines: efficiency 1.
#pragma once
#include <string>
#include <vector>

#include "planner/costs.h"
#include "planner/plan.h"

namespace tapelab {

struct KindJob {
  int markets = 1;
  std::vector<int> sharedInputs;  // input ordinals every market of a dispatch shares
  std::vector<int> wrt;           // the tangent kernel's inputs (empty: all)
  Plan adjointPlan;               // the plan the adjoint would run (one segment: the plain kernel)
  bool gpu = true;                // a GPU engine (issue efficiencies apply)
  bool tangentRolls = false;      // the tangent kernel's time loop rolls (config loops=rolled and a loop found)
  bool adjointRolls = false;      // the register kernel's segments roll (config loops=rolled, the periodic plan)
  bool closedForms = false;       // config closed_forms: homogeneous values carry no tangent (planner/closed_forms.h)
  bool tangentFma = false;        // config tangent_fma: a product-and-sum tangent is one fused multiply-add
  int tangentChunk = 0;           // config tangent_chunk: the most inputs a tangent kernel carries (0: all), the
                                  // forward sweep once a chunk (engine/tangent_chunks.h)
};

struct KindPrediction {
  double tangentInstructions = 0, adjointInstructions = 0;  // a path, every market
  double tangentEfficiency = 1, adjointEfficiency = 1;      // instructions issued per cycle, relative
  double tangentTime() const { return tangentInstructions / tangentEfficiency; }
  double adjointTime() const { return adjointInstructions / adjointEfficiency; }
  bool tangentWins() const { return tangentTime() < adjointTime(); }
  // "tangent: 22,700 against 41,300 instructions a path, at 0.80 and 0.50 of the issue rate".
  std::string why() const;
};

KindPrediction predictKinds(const Tape& tape, const KindJob& job, const CostModel& costs = CostModel::measured());

// Instructions of one application of `rule` (an ops.def rule), by its operators and functions.
double ruleCost(const std::string& rule, const CostModel& costs);

}  // namespace tapelab
