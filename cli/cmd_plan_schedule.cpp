// tapelab plan --from-schedule FILE / --to-schedule FILE: checkpoint_schedules schedules as plans and plans
// as schedules (planner/schedules.h).
#include <string>
#include <vector>

#include "cli/plan_parts.h"
#include "planner/schedules.h"
#include "util/files.h"

namespace tapelab::cli {

Plan planFromScheduleFlag(const Flags& f, const Tape& t) {
  if (f.onCommandLine("strategy") || f.given("strategy-cmd"))
    throw UsageError("--from-schedule is the plan: not with --strategy or --strategy-cmd");
  return readScheduleFile(*f.text("from-schedule"), t);
}

std::vector<std::string> inputsOf(const Flags& f) {
  std::vector<std::string> inputs = f.all("file");
  if (auto in = f.text("from-schedule")) inputs.push_back(*in);
  return inputs;
}

void writeSchedule(const Flags& f, const Tape& t, const Plan& plan, const std::string& out) {
  std::string text;
  try {
    text = scheduleOfPlan(t, plan);
  } catch (const std::invalid_argument& e) {
    throw UsageError(f.label("to-schedule") + ": " + e.what());
  }
  writeOutputFile(out, text, inputsOf(f), "--to-schedule");
}

}  // namespace tapelab::cli
