// checkpoint_schedules interop (planner/schedules.h): checkpoint_schedules's own Revolve schedule imports as
// tapelab's revolve plan, every segment plan cutting at step starts survives export and import, a schedule
// that does not fit the tape is one line naming the action, and an imported plan returns plain's bits on
// the reference (==). The Python tests (python/tests/test_schedules.py) run the package's own schedules.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "planner/nested.h"
#include "planner/planfile.h"
#include "planner/schedules.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tests/common/reference_engines.h"

namespace tapelab {
namespace {

// checkpoint_schedules 1.0.4: [repr(a) for a in Revolve(10, 3)] up to EndReverse.
const std::vector<std::string> kRevolve10x3 = {
    "Forward(0, 4, True, False, StorageType.RAM)", "Forward(4, 7, True, False, StorageType.RAM)",
    "Forward(7, 9, True, False, StorageType.RAM)", "Forward(9, 10, False, True, StorageType.WORK)", "EndForward()",
    "Reverse(10, 9, True)", "Copy(7, StorageType.RAM, StorageType.WORK)", "Forward(7, 8, False, False, StorageType.WORK)",
    "Forward(8, 9, False, True, StorageType.WORK)", "Reverse(9, 8, True)", "Move(7, StorageType.RAM, StorageType.WORK)",
    "Forward(7, 8, False, True, StorageType.WORK)", "Reverse(8, 7, True)", "Copy(4, StorageType.RAM, StorageType.WORK)",
    "Forward(4, 5, False, False, StorageType.WORK)", "Forward(5, 6, True, False, StorageType.RAM)",
    "Forward(6, 7, False, True, StorageType.WORK)", "Reverse(7, 6, True)", "Move(5, StorageType.RAM, StorageType.WORK)",
    "Forward(5, 6, False, True, StorageType.WORK)", "Reverse(6, 5, True)", "Move(4, StorageType.RAM, StorageType.WORK)",
    "Forward(4, 5, False, True, StorageType.WORK)", "Reverse(5, 4, True)", "Copy(0, StorageType.RAM, StorageType.WORK)",
    "Forward(0, 1, False, False, StorageType.WORK)", "Forward(1, 2, True, False, StorageType.RAM)",
    "Forward(2, 3, True, False, StorageType.RAM)", "Forward(3, 4, False, True, StorageType.WORK)", "Reverse(4, 3, True)",
    "Move(2, StorageType.RAM, StorageType.WORK)", "Forward(2, 3, False, True, StorageType.WORK)", "Reverse(3, 2, True)",
    "Move(1, StorageType.RAM, StorageType.WORK)", "Forward(1, 2, False, True, StorageType.WORK)", "Reverse(2, 1, True)",
    "Move(0, StorageType.RAM, StorageType.WORK)", "Forward(0, 1, False, True, StorageType.WORK)", "Reverse(1, 0, True)",
    "EndReverse()"};

std::string file(int steps, const std::vector<std::string>& actions) {
  nlohmann::json j;
  j["format"] = kScheduleFormat;
  j["steps"] = steps;
  j["actions"] = actions;
  return j.dump();
}

Tape barrier(int steps) { return products::byName("barrier", {{"steps", steps}}); }

std::string errorOf(const Tape& t, const std::string& text) {
  try {
    planFromSchedule(t, text, "s.json");
  } catch (const PlanFileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PlannerSchedules, RevolveImportsAsTapelabsRevolve) {
  const Tape t = barrier(10);
  ASSERT_EQ(stepStarts(t).size(), 11u);
  const Plan imported = planFromSchedule(t, file(10, kRevolve10x3), "revolve.json");
  PlanOptions o;
  o.segments = 3;
  const Plan revolve = planRevolve(t, o);
  EXPECT_EQ(imported.bounds, revolve.bounds);
  EXPECT_EQ(imported.inner, revolve.inner);
  EXPECT_EQ(imported.strategy, "schedule");
}

TEST(PlannerSchedules, ExportThenImportGivesThePlanBack) {
  const Tape t = barrier(24);
  const std::vector<int32_t> starts = stepStarts(t);
  for (const char* name : {"revolve", "two-level", "window", "uniform", "optimal"})
    for (int segments : {2, 3, 5, 8}) {
      PlanOptions o;
      o.segments = segments;
      const Plan p = makeStrategyPlan(name, t, o);
      std::string text;
      try {
        text = scheduleOfPlan(t, p);
      } catch (const std::invalid_argument& e) {  // a cut between step starts: said, naming the node
        EXPECT_NE(std::string(e.what()).find("not the start of a time step"), std::string::npos) << e.what();
        continue;
      }
      const Plan back = planFromSchedule(t, text, "export.json", name);
      EXPECT_EQ(back.bounds, p.bounds) << name << " " << segments;
      EXPECT_EQ(planInnerJson(back), planInnerJson(p)) << name << " " << segments;
    }
  // A plan of cuts at step starts, nested three deep with a chain, exports for sure.
  const Plan nested = makePlan(t, {0, starts[8], starts[16], t.size()}, "cuts",
                               {CutTree{{starts[2], starts[5]}, false, {CutTree{}, CutTree{{starts[3]}, true, {}}, CutTree{}}},
                                CutTree{}, CutTree{{starts[20], starts[22]}, true, {}}});
  const Plan back = planFromSchedule(t, scheduleOfPlan(t, nested), "nested.json");
  EXPECT_EQ(back.bounds, nested.bounds);
  EXPECT_EQ(planInnerJson(back), planInnerJson(nested));
}

RunResult runOn(const Tape& t, const Plan& p) {
  auto engine = testutil::makeReference("reference");
  KernelOptions k;
  k.precision = Precision::F64;
  k.kind = p.segments() > 1 ? KernelKind::Register : KernelKind::Plain;
  k.plan = p;
  return engine->compile(t, k)->run({t.inputDefaults}, 1100, 77);
}

TEST(PlannerSchedules, AnImportedPlanReturnsPlainsBits) {
  const Tape t = barrier(10);
  const Plan p = planFromSchedule(t, file(10, kRevolve10x3), "revolve.json");
  ASSERT_GT(p.depth(), 1);
  const MarketResult plain = runOn(t, plainPlan(t)).markets.at(0), cut = runOn(t, p).markets.at(0);
  EXPECT_EQ(cut.value, plain.value);
  EXPECT_EQ(cut.greeks, plain.greeks);
}

TEST(PlannerSchedules, AScheduleThatDoesNotFitIsOneLineNamingIt) {
  const Tape t = barrier(10);
  auto with = [&](size_t k, const std::string& action) {
    std::vector<std::string> a = kRevolve10x3;
    a[k] = action;
    return file(10, a);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {file(12, kRevolve10x3), "steps: the schedule has 12 steps, the tape barrier-10 10"},
      {"{\"format\": \"tapelab-schedule 1\", \"steps\": 10", "s.json: (json):"},
      {"[1, 2]", "expected a JSON object"},
      {file(10, {}), "actions: expected a list"},
      {with(5, "Reverse(10, 8, True)"), "actions[5]: Reverse of step 8 whose adjoint dependencies no Forward stored"},
      {with(6, "Copy(6, StorageType.RAM, StorageType.WORK)"), "actions[6]: restores the state at step 6, which no Forward stored"},
      {with(7, "Forward(8, 9, False, False, StorageType.WORK)"), "actions[7]: Forward from step 8 but the working state is at step 7"},
      {with(0, "Jump(0, 4)"), "actions[0]: expected a checkpoint_schedules action"},
      {with(0, "Forward(0, 4, Yes, False, StorageType.RAM)"), "actions[0]: Forward: expected True or False"},
      {with(0, "Forward(0, -4, True, False, StorageType.RAM)"), "actions[0]: Forward: expected a step number"},
      {with(0, "Forward(0, 40, True, False, StorageType.RAM)"), "actions[0]: Forward to step 40 outside 0..10"},
      {with(1, "Forward(4, 7, True, False, StorageType.TAPE)"), "actions[1]: Forward: expected StorageType.RAM"},
      {with(5, "Reverse(9, 8, True)"), "actions[5]: Reverse from step 9 but the steps reversed so far start at 10"},
      {with(39, "EndForward()"), "actions[39]: EndForward twice"},
      {file(10, std::vector<std::string>(kRevolve10x3.begin(), kRevolve10x3.end() - 1)), "no EndReverse"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string e = errorOf(t, text);
    EXPECT_NE(e.find(expected), std::string::npos) << "got: " << e << "\nexpected: " << expected;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(PlannerSchedules, PerValueAndOffStepPlansHaveNoSchedule) {
  const Tape t = barrier(10);
  EXPECT_THROW(scheduleOfPlan(t, makePerValuePlan(t, {0, 60, t.size()}, {30}, "keep")), std::invalid_argument);
  const std::vector<int32_t> starts = stepStarts(t);
  EXPECT_THROW(scheduleOfPlan(t, makePlan(t, {0, starts[4] + 1, t.size()}, "cuts")), std::invalid_argument);
}

}  // namespace
}  // namespace tapelab
