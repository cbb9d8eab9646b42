// tapelab plan --strategy exact --front B1,B2,...: the exact strategy's Pareto front of peak_live against
// weighted recompute over one set of blocks (planner/external.h planExactFront): the solver's optimum at each
// budget of the list, with its status, bound, gap and solve time; --json also gives each point's plan file
// (what `--out` would write), --out-dir DIR writes them (exact-B.json for budget B).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/plan_parts.h"
#include "planner/external.h"
#include "planner/metrics.h"
#include "planner/planfile.h"
#include "util/files.h"

namespace tapelab::cli {

std::vector<int32_t> parseBudgets(const std::string& text, const std::string& flag) {
  std::vector<int32_t> out;
  size_t p = 0;
  while (p <= text.size()) {
    const size_t q = std::min(text.find(',', p), text.size());
    const std::string item = text.substr(p, q - p);
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos || std::stol(item) < 1)
      throw UsageError(flag + ": expected positive budgets B1,B2,..., got '" + item + "'");
    out.push_back(static_cast<int32_t>(std::stol(item)));
    p = q + 1;
  }
  if (out.size() > 64) throw UsageError(flag + ": at most 64 budgets, got " + std::to_string(out.size()));
  return out;
}

int planFront(const Flags& f, const Tape& t, PlanOptions o, int segments) {
  if (f.textOrDefault("strategy").value_or("") != "exact" || f.given("strategy-cmd"))
    throw UsageError("--front is the exact strategy's: give --strategy exact");
  if (f.given("out")) throw UsageError("--front writes a plan per budget: --out-dir DIR, not --out");
  o.segments = segments;
  const std::vector<ExactPoint> front = planExactFront(t, o, parseBudgets(*f.text("front"), f.label("front")));
  const PlanMetrics plain = planMetrics(t, plainPlan(t));
  std::vector<std::string> items;
  std::vector<std::vector<std::string>> rows;
  for (const ExactPoint& p : front) {
    if (p.hasPlan) {
      const std::string text = planFileText(t, p.plan, segments);
      if (auto dir = f.text("out-dir"))
        writeOutputFile(*dir + "/exact-" + std::to_string(p.budget) + ".json", text, f.all("file"), "--out-dir");
      const PlanMetrics m = planMetrics(t, p.plan);
      const Plan::Solver& s = p.plan.solver;
      Json j;
      j.integer("budget", p.budget).str("status", p.status).integer("peak_live", m.peakLive)
          .number("recompute_cost", m.recomputeCost).integer("recompute_ops", m.recomputeOps)
          .integer("kept", static_cast<int64_t>(p.plan.keep.size())).number("bound", s.bound).number("gap", s.gap)
          .number("seconds", s.seconds).field("plan", text);
      items.push_back(j.done());
      char cost[32], bound[32], gap[32], sec[32];
      std::snprintf(cost, sizeof cost, "%.0f", m.recomputeCost);
      std::snprintf(bound, sizeof bound, "%.0f", s.bound);
      std::snprintf(gap, sizeof gap, "%.4f", s.gap);
      std::snprintf(sec, sizeof sec, "%.2f", s.seconds);
      rows.push_back({std::to_string(p.budget), p.status, std::to_string(m.peakLive), cost, bound, gap, sec,
                      std::to_string(p.plan.keep.size())});
    } else {
      Json j;
      j.integer("budget", p.budget).str("status", p.status);
      items.push_back(j.done());
      rows.push_back({std::to_string(p.budget), p.status, "-", "-", "-", "-", "-", "-"});
    }
  }
  if (f.given("json")) {
    Json j;
    j.str("tape", t.name).integer("nodes", t.size()).integer("blocks", segments)
        .integer("plain_peak_live", plain.peakLive).field("front", jsonArray(items));
    std::printf("%s\n", j.done().c_str());
    return kExitOk;
  }
  std::printf("%s: %d nodes; exact over %d blocks (optimal's cuts), each budget within %g s (%s clock)\n\n%s", t.name.c_str(),
              t.size(), segments, o.solveSeconds, o.solveClock.c_str(),
              table({"budget", "status", "peak_live", "recompute_cost", "bound", "gap", "solve_s", "kept"}, rows).c_str());
  return kExitOk;
}

}  // namespace tapelab::cli
