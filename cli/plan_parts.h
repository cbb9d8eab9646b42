// Pieces of tapelab plan beside cli/cmd_plan.cpp: the exact strategy's Pareto front (cmd_plan_front.cpp) and
// checkpoint_schedules schedules in and out (cmd_plan_schedule.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cli/options.h"
#include "planner/strategies.h"

namespace tapelab::cli {

// "60,80,100" as budgets, or UsageError naming `flag`.
std::vector<int32_t> parseBudgets(const std::string& text, const std::string& flag);
// Prints the front (a table, or --json) for `o` (its --budget, --solve-seconds, --solve-clock) at `segments` blocks.
int planFront(const Flags& f, const Tape& t, PlanOptions o, int segments);

// --from-schedule FILE's plan (PlanFileError: FILE: actions[K]: why, exit 2); UsageError with --strategy.
Plan planFromScheduleFlag(const Flags& f, const Tape& t);
// The files this run reads (the tape, --from-schedule): an output never replaces one.
std::vector<std::string> inputsOf(const Flags& f);
// --to-schedule FILE: `plan` as a schedule file, through the careful writer (UsageError when it has none).
void writeSchedule(const Flags& f, const Tape& t, const Plan& plan, const std::string& out);

}  // namespace tapelab::cli
