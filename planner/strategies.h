// Cut strategies: each is a free function (const Tape&, const PlanOptions&) -> Plan,
// registered by name, so a researcher adds one by writing one function and one
// line in strategies(). Costs of a plan: planner/metrics.h. The exact ones:
// planner/optimal.h.
#pragma once
#include <string>
#include <vector>

#include "planner/plan.h"

namespace tapelab {

struct PlanOptions {
  int segments = 16;      // requested segment count (auto chooses its own; revolve: snapshots)
  int segLen = 0;         // uniform: nodes per segment; 0 = derive (see planUniform)
  int innerSegments = 0;  // two-level: sub-segments per segment; 0 = 4
  int32_t budget = 0;     // budget: the most values live at once (peak_live); 0 = the default below
  // budget with budget 0: > 0 derives it from the register file for this many markets per
  // dispatch (registerBudget, register kernels); 0 takes window's peak_live at `segments`.
  int markets = 0;
  // Strategy cmd (planner/external.h): the command line of a strategy process (--strategy-cmd).
  std::string strategyCommand{};
  // The exact strategy's time limit, and a strategy process's (which gets 10 s more to write its plan).
  double solveSeconds = 60;
  // Its clock: "wall", or "cpu" (the solver's processor time, so that a shared machine's load does not end
  // the search early; a process is then ended as hung only at kCpuClockGuard times the limit plus 10 s).
  std::string solveClock = "wall";
};

// The budget strategy's default for a register kernel fusing `markets` markets (1..8): the
// largest peak_live that the sm_90 calibration (runs/calibration-sm90-*,
// calibrate_proxy; 255 registers per thread) compiled without spilling, per market:
// peak_live x markets <= 400 for 2..8 markets, and at most 212 (window 4, the largest single-
// market peak_live calibrated, 255 registers and no spill) for one. Throws outside 1..8.
int32_t registerBudget(int markets);

// solveClock's wall-clock guard, as a multiple of the processor-time limit.
inline constexpr double kCpuClockGuard = 60;
// "wall" or "cpu", or std::invalid_argument naming `flag`.
std::string parseSolveClock(const std::string& text, const std::string& flag);

using Strategy = Plan (*)(const Tape&, const PlanOptions&);

struct StrategyEntry {
  std::string name;
  Strategy fn;
  std::string summary;
};

// The anchor's default scratch segment length: max(48, round(sqrt(n))).
int32_t defaultSegLen(int32_t n);

// Fixed segment length: with segLen set, segments of segLen nodes (the last
// shorter; the count is ceil(n/segLen)); else exactly `segments` segments
// starting at s*n/segments, lengths differing by at most one.
Plan planUniform(const Tape& tape, const PlanOptions& o);
// The article's: targets s*n/segments, best cut within max(1, n/(4*segments))
// of the target by fewest live values, ties to the nearest target. O(n).
Plan planWindow(const Tape& tape, const PlanOptions& o);
// Ours: the article's window, but a cut is scored by the values it ADDS to the
// persistent set, cost(prev, c) = non-base values computed in [prev, c) and read
// at or after c, instead of all values live across c: a value some earlier cut
// already keeps (drift, vol*sqrt(dt), an input) costs nothing again. Same
// targets, window and tie rule as planWindow. O(n).
Plan planMarginal(const Tape& tape, const PlanOptions& o);
// The tape's time loop (planner/loops.h) cut every N iterations, N = its iterations over `segments` rounded to
// whole Philox calls' worth of steps, at the offset in an iteration with the fewest live values: the middle
// segments have one shape, which a GPU register kernel writes once and runs in a loop (config loops). The
// first segment takes what comes before the loop, the last what comes after. No loop: window's cuts.
Plan planPeriodic(const Tape& tape, const PlanOptions& o);
// The segment count auto asks of the periodic strategy for a register kernel that rolls its segments at one
// market per dispatch: about kRolledSegmentNodes nodes a segment, at least `base` (auto's 16) and at most
// kRolledSegmentsMost (a rolled kernel keeps every trip's bookmarks in a per-lane array). Measured on an
// H100 (runs/h100-2026-12-06c, calls 5 and 6; the periodic strategy rounds a count to whole Philox calls): the
// 252-step Asian's one-market register kernel, asked 24 (64 nodes a segment), runs 32 segments of 8 steps:
// 1,007.7 and 993.4 Mpath/s against 883.8 at 16, 949.9 at 21 and 918.3 at 63; the 5 x 252 Heston basket's,
// asked 256, runs 126 (two steps a segment, the strategy's least): 24.2 against 13.9 at 16 and 16.8 at 63; the
// 10 x 1,260 basket's 0.629 at 252 against 0.541 at 63 (h100-2026-12-06b). At 7 markets 16 led (2,755.3;
// 2,568.5 at 13, 2,583.9 at 21, 2,000.1 at 32): each trip's bookmarks are 7 markets' copies, so the base stays.
constexpr int kRolledSegmentNodes = 64, kRolledSegmentsMost = 256;
int rolledSegmentCount(const Tape& tape, int markets, int base);
// Ours: chooses the segment count too. peak_live = persistent (grows with the
// count) + the largest segment's working set (shrinks with it), so it has a
// best count. auto scores a count by the better of window and marginal, at the
// counts 1, 2, 3, ... growing by about 25% up to min(n, 4096) (stopping 4 grid
// points past the best) and every count between the best's grid neighbours;
// runs optimal (planner/optimal.h) at the three best-scoring counts and keeps
// the lowest peak_live (fewer segments on ties). The requested count is used
// only when its score beats that plan (then optimal at the requested count),
// so auto is never worse on peak_live than window or marginal at the requested
// count. O(n log n) for the search plus three optimal runs; the search is
// memoised per tape structure, so sweeping the requested count pays it once.
Plan planAuto(const Tape& tape, const PlanOptions& o);

// Ours: the plan with the least weighted recompute (recompute_cost, planner/
// costs.h) whose peak_live stays within o.budget (0: registerBudget(o.markets)
// when o.markets > 0, else window's peak_live at o.segments, i.e. the cheapest
// schedule no worse than window there), among
// the plain plan, optimal at 2..48 segments, two-level at 2..24 x 2..6 and
// revolve with 2..32 snapshots; ties to lower peak_live, then fewer segments.
// Throws naming the least peak_live any of them reaches when none fits.
Plan planBudget(const Tape& tape, const PlanOptions& o);

const std::vector<StrategyEntry>& strategies();
// Strategies that run a process (planner/external.h): exact (a MILP solver) and cmd (--strategy-cmd).
// findStrategy and makeStrategyPlan know them; `tapelab plan --all`, the properties and the tests
// that iterate strategies() do not run them (a solve takes up to --solve-seconds).
const std::vector<StrategyEntry>& processStrategies();
// The strategy called `name`; throws std::invalid_argument
// "unknown strategy 'x' (known: uniform, window, ...)" when there is none.
const StrategyEntry& findStrategy(const std::string& name);
// Throws std::invalid_argument for an unknown name or impossible options
// (segments < 1, more segments than nodes, negative segLen).
Plan makeStrategyPlan(const std::string& name, const Tape& tape, const PlanOptions& o);

}  // namespace tapelab
