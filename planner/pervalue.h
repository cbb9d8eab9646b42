// Per-value strategies (planner/plan.h, the per-value family): which values the reverse sweep keeps,
// every other value it needs being recomputed, from kept ones, in the block that needs it.
//
// The blocks are window's segments at o.segments (the reverse sweep's grouping; a block's locals die
// with it). In each block [b, e), the values its adjoint rules read (required) must be kept or
// recomputed; a recomputed value needs its arguments kept or recomputed; a value computed before b
// (an import) cannot be recomputed in the block, only kept. As a graph (each value split in an in
// and an out vertex, arguments' out before readers' in, the imports fed by the source, the required
// drained by the sink), a choice is a cut: the values whose in side lies with the source and whose
// out side lies with the sink are kept.
//
// mincut           Enzyme's (DifferentialUseAnalysis::minCut): the fewest kept values per block (a
//                  kept value costs 1, a recompute 0; inputs and the output are kept anyway and cost
//                  0); of the minimum cuts, the one nearest the required values (Enzyme caches "the
//                  last value in a computation chain"), so that the least is recomputed.
// mincut-weighted  the same cut with a recompute priced at its instructions (planner/costs.h) and a
//                  kept value at lambda instructions: the least lambda * kept + weighted recompute,
//                  per block. Lambda is the cheapest of 0.25, 0.5, 1, ..., 4096 (and the unit cut)
//                  whose plan keeps peak_live within o.budget (0: window's peak_live at o.segments,
//                  as the budget strategy's default); least weighted recompute among those that fit.
//                  When none fits, the one of least peak_live.
// Each cut is a maximum flow (Dinic), O(V^2 E) worst case per block, milliseconds on the zoo.
#pragma once
#include "planner/strategies.h"

namespace tapelab {

Plan planMinCut(const Tape& tape, const PlanOptions& o);
Plan planMinCutWeighted(const Tape& tape, const PlanOptions& o);

// The per-value plan over `bounds` whose kept set is, per block, the minimum cut above with a
// kept value priced at `lambda` and a recompute at its weight times `recomputeWeight`
// (mincut: lambda 1, recomputeWeight 0).
Plan perValueCutPlan(const Tape& tape, const std::vector<int32_t>& bounds, double lambda, double recomputeWeight,
                     const std::string& strategy);

}  // namespace tapelab
