// Strategies that run as processes: a researcher's (`--strategy-cmd "python3 mine.py"`, strategy
// `cmd`) and the exact strategy's solver (planner/exact.py, embedded at build time).
//
// The protocol (docs/strategies.md): tapelab writes the tape (`.tape` text) and its summary (JSON,
// tapeSummaryJson below) into a fresh temporary directory and runs
//   /bin/sh -c 'COMMAND "$@"' sh --tape T.tape --summary S.json --out PLAN.json --segments N --budget L
//                                --time-limit SECONDS
// with stdin from /dev/null. The process writes a plan file (planner/planfile.h, version 1 or 2) to
// PLAN.json and exits 0. Anything else is one line naming the command: it exited non-zero (its last
// line of output), it was killed, it ran past o.solveSeconds + 10 s (ended, its process group with
// it), it wrote no plan, or a plan that does not parse or was made for another tape. Nothing is cached,
// and the temporary directory goes with the call.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "planner/strategies.h"

namespace tapelab {

// A strategy process failed (crashed, hung, wrote garbage or a plan for another tape).
struct StrategyProcessError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The process said it cannot run here (exit status 3: a solver is not installed). The CLI exits 3.
struct StrategyUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The summary a strategy process reads (format "tapelab-summary 1"): the tape's header, per node its
// op, arguments, instruction weight (planner/costs.h), the nodes its adjoint rules read, its last use,
// the adjoints live at each reverse point (planner/liveness.h), the output; and the request:
// segments, budget, the blocks to plan over, the time limit.
// `front` (the exact strategy's front mode): the budgets to solve at, one after another.
std::string tapeSummaryJson(const Tape& tape, const PlanOptions& o, const std::vector<int32_t>& blocks, int32_t budget,
                            const std::vector<int32_t>& front = {});

// Runs `command` as above and returns its plan (strategy label: the file's, else `label`).
Plan runStrategyCommand(const Tape& tape, const PlanOptions& o, const std::string& command, const std::string& label,
                        const std::vector<int32_t>& blocks, int32_t budget);

// Strategy `cmd`: runStrategyCommand with o.strategyCommand over window's blocks at o.segments.
Plan planCommand(const Tape& tape, const PlanOptions& o);

// Strategy `exact` (planner/exact.py): the least weighted recompute over every kept set for the
// blocks optimal cuts at o.segments, with peak_live within o.budget (0: as the budget strategy's
// default), solved by HiGHS within o.solveSeconds; the plan says the solver's status, bound and gap.
// StrategyUnavailable when python3 or highspy is missing.
Plan planExact(const Tape& tape, const PlanOptions& o);

// The exact strategy's Pareto front of peak_live against weighted recompute: over the same blocks, the
// optimum at each of `budgets` (sorted, distinct), the model built once and solved tightest first (each
// solution a start for the next), each solve within o.solveSeconds on o.solveClock. One process; its
// hang guard is the sum of the solves' limits plus 10 s. A point no kept set fits has status "infeasible"
// and no plan; one whose search found no plan in time says so.
struct ExactPoint {
  int32_t budget = 0;
  std::string status;  // "optimal", "feasible" (stopped at the limit), "infeasible", or why there is no plan
  bool hasPlan = false;
  Plan plan;
};
std::vector<ExactPoint> planExactFront(const Tape& tape, const PlanOptions& o, std::vector<int32_t> budgets);

}  // namespace tapelab
