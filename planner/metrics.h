// What a plan costs, counted on the kernel it describes.
//
// The kernel (register checkpointing, the article's Parts 3-5) runs, per path:
//   1. the forward sweep, node 0 to n-1;
//   2. for each segment s, last first: its recompute (the segment's forward
//      lines again) and then its reverse (adjoint rules, descending).
// A one-segment plan is the plain kernel: forward sweep, then reverse, no recompute.
//
// Counted values (one "value" = one scalar a register or local would hold):
//   persistent    |plan.persistent|: inputs, output and every value crossing a
//                 cut; held for the whole kernel.
//   scratch_slots values a scratch kernel writes per path (plan.scratchSlots).
//   recompute_ops forward operations executed again: per segment, its nodes
//                 that are not persistent and that its reverse needs (an adjoint
//                 rule reads the value, or a recomputed node reads it), consts
//                 excluded (literals), randn included (a redraw). Plain: 0.
//   peak_live     the largest number of values live at once at any point of the
//                 program above (between two consecutive node executions):
//                   persistent
//                 + local (non-persistent) values computed and still to be read:
//                   forward sweep: j is live from j until its last reader executes;
//                     in the plain kernel a value some adjoint rule reads stays
//                     live into the reverse sweep;
//                   recompute of segment [p, c): a recomputed j is live from j
//                     until its last recomputed reader, or, if an adjoint rule
//                     reads it, into the reverse, until firstReverseRead[j] is reversed;
//                   reverse: j is live while firstReverseRead[j] is still to come;
//                 + adjoints live (adjointsLive in planner/liveness.h): during a
//                   segment's reverse those of the current point; during its
//                   recompute those held when it starts, adjointsLive[c].
//                 It is the register-pressure proxy: the kernel spills when it
//                 exceeds the registers a lane has.
//   recompute_cost recompute_ops weighted by what each op costs (planner/costs.h).
//
// Nested plans (planner/schedule.h) are counted on their lowered schedule, in
// the same terms: a block's recompute works like a segment's, the bookmarks an
// enclosing block holds count as live while a later sub-segment still reads
// them, and a value held by an enclosing block is not recomputed.
// Per-value plans (planner/plan.h) likewise: a block's recompute is its closure (which may begin
// before the block), the kept values count as persistent, and nothing else changes; a segment plan
// and the per-value plan keeping its persistent set have the same metrics.
// Costs O(n) per plan (O(n * depth) nested; O(n * blocks) per-value).
#pragma once
#include <cstdint>

#include "planner/costs.h"
#include "planner/plan.h"

namespace tapelab {

struct PlanMetrics {
  int segments = 1;
  int32_t persistent = 0;
  int32_t peakLive = 0;
  int32_t scratchSlots = 0;
  int64_t recomputeOps = 0;
  double recomputeCost = 0;  // weighted recompute_ops
  int depth = 0;             // levels of cuts: 0 plain, 1 flat, 2 two-level, ...
  // Where peak_live is first reached: -1 in the forward sweep, else the segment
  // whose recompute/reverse (plain: the reverse) holds it.
  int peakSegment = -1;
};

PlanMetrics planMetrics(const Tape& tape, const Plan& plan, const CostModel& costs = CostModel::measured());

}  // namespace tapelab
