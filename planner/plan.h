// A Plan: where one tape's checkpointed kernel cuts its tape, and what
// crosses the cuts. Strategies (planner/strategies.h) choose the bounds;
// makePlan derives everything else from them, so every strategy's plan is
// interpreted and emitted the same way.
//
// A plan may cut a segment again (nested checkpointing): Plan::inner[s] cuts
// segment s, and its sub-segments may be cut again, to any depth. What a nested
// plan means for a kernel (which values each block recomputes, holds and reads)
// is spelled once, in planner/schedule.h.
//
// Two families of plans (docs/strategies.md):
//   segment    the checkpointing of the article and of Revolve: every value crossing a cut is kept
//              (a bookmark), and each segment's reverse recomputes the segment from its bookmarks.
//   per-value  Enzyme's and Checkmate's: an arbitrary set of values is kept (`keep`); the bounds only
//              group the reverse sweep into blocks, and each block recomputes, from the kept values,
//              what its adjoint rules read that is not kept (and what that needs), however far back
//              it lies. A value crossing a cut need not be kept. A segment plan is the per-value plan
//              whose kept set is its persistent set: both lower to the same schedule.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tape/tape.h"

namespace tapelab {

// How one segment [begin, end) is cut again. `cuts` lie strictly inside it,
// increasing; they split it into cuts.size() + 1 sub-segments.
//   chain = false: the recompute of the segment keeps a bookmark at each cut
//     (the values crossing it), and each sub-segment is reversed from its own
//     bookmark, last first (two-level checkpointing, or one level of Revolve).
//   chain = true:  no bookmarks: each sub-segment is reversed after recomputing
//     the segment from its start up to the sub-segment (Revolve with no free
//     snapshot: time for memory).
// inner is empty (every sub-segment is a leaf) or has one entry per sub-segment;
// an entry with no cuts is a leaf. A chain's sub-segments are leaves.
struct CutTree {
  std::vector<int32_t> cuts;
  bool chain = false;
  std::vector<CutTree> inner;

  bool leaf() const { return cuts.empty(); }
  bool operator==(const CutTree&) const = default;
};

struct Plan {
  std::string strategy;  // which strategy chose the bounds ("plain" for one segment)
  // Segment s covers nodes [bounds[s], bounds[s+1]); bounds.front() == 0, bounds.back() == n.
  std::vector<int32_t> bounds;
  // Empty (a flat plan), or one CutTree per segment: nested checkpointing.
  std::vector<CutTree> inner;
  // Values some node at or after a cut reads although they were computed before
  // it (plus the output when a cut follows it), sorted: the bookmarks.
  std::vector<int32_t> crossing;
  // crossing + inputs + output, sorted: held for the whole kernel.
  std::vector<int32_t> persistent;
  std::vector<uint8_t> isPersistent;  // per node
  // Scratch kernels: slot[j] is the scratch slot of crossing non-input value j
  // (-1 otherwise). Each value is stored once, at the first cut it crosses;
  // slots are numbered in that order. storedAt[s] lists the values stored at
  // the end of segment s (s < segments-1).
  std::vector<int32_t> slot;
  std::vector<std::vector<int32_t>> storedAt;
  int32_t scratchSlots = 0;
  // Per-value plans (makePerValuePlan): the kept values beyond inputs and output, sorted; `crossing`
  // is then the kept values that are not inputs (what the forward sweep must keep), `persistent`
  // keep + inputs + output. Empty and false for a segment plan.
  bool perValue = false;
  std::vector<int32_t> keep;
  // Where the plan came from, when a solver made it (the exact strategy): said by `tapelab plan`
  // and kept in plan files. status "" when no solver ran.
  struct Solver {
    std::string status;          // "optimal", "feasible" (time limit: bound and gap below), ...
    double objective = -1;       // weighted recompute of the plan, as the model counts it
    double bound = -1;           // the best lower bound the solver proved
    double gap = -1;             // (objective - bound) / objective, 0 when proved optimal
    double seconds = -1;         // solve time
    std::string solverName;      // "HiGHS 1.x", ...
  } solver;

  int segments() const { return static_cast<int>(bounds.size()) - 1; }
  int32_t begin(int s) const { return bounds[s]; }
  int32_t end(int s) const { return bounds[s + 1]; }
  // True when some segment is cut again.
  bool nested() const;
  // Deepest level of cuts: 1 for a flat plan with cuts, 0 for the plain plan.
  int depth() const;
};

// Builds the plan whose segments start at `bounds` (must start with 0, end
// with tape.size(), strictly increasing), with optional nested cuts (`inner`:
// empty or one CutTree per segment, each checked by checkCutTree; a plan of one
// segment is the plain kernel and takes none). Throws std::invalid_argument
// naming what is wrong otherwise.
Plan makePlan(const Tape& tape, std::vector<int32_t> bounds, std::string strategy,
              std::vector<CutTree> inner = {});

// "" when `tree` is a valid cut of [begin, end), else the first problem, naming
// the path to it ("inner[2].cuts: ...").
std::string checkCutTree(const CutTree& tree, int32_t begin, int32_t end, const std::string& path);

// The per-value plan that keeps `keep` (any nodes; inputs and the output are kept anyway; sorted
// and made distinct here) and whose reverse sweep runs in the blocks `bounds` (as makePlan's,
// one segment allowed: one block). Throws std::invalid_argument naming what is wrong.
Plan makePerValuePlan(const Tape& tape, std::vector<int32_t> bounds, std::vector<int32_t> keep, std::string strategy);

// The uncut plan: one segment, the plain kernel.
Plan plainPlan(const Tape& tape);

// Values computed before segment s that its nodes read (its bookmarks and
// inputs), sorted and distinct: what a recompute of segment s loads.
std::vector<int32_t> segmentImports(const Tape& tape, const Plan& plan, int s);

}  // namespace tapelab
