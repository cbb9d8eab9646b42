// tapelab plan --front: the exact strategy's Pareto front (cli/cmd_plan_front.cpp).
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

}  // namespace tapelab::cli
