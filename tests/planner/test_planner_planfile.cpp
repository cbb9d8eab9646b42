// Plan files: written plans read back as the same plan; every malformed file
// is refused with one line naming the file and the field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/nested.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "tape/products/products.h"

namespace tapelab {
namespace {

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
  return s;
}

TEST(PlannerPlanFile, WrittenPlansReadBackTheSame) {
  const Tape t = products::asianCall(40);
  PlanOptions o;
  o.segments = 5;
  o.innerSegments = 3;
  std::vector<Plan> plans{makeStrategyPlan("window", t, o), makeStrategyPlan("optimal", t, o), planTwoLevel(t, o)};
  for (int s : {2, 3, 6}) {
    o.segments = s;
    plans.push_back(planRevolve(t, o));
  }
  for (const Plan& p : plans) {
    const std::string text = planFileText(t, p, 5);
    const Plan back = parsePlanFile(text, t, "p.json");
    EXPECT_EQ(back.bounds, p.bounds) << p.strategy;
    EXPECT_EQ(back.inner, p.inner) << p.strategy;
    EXPECT_EQ(back.strategy, p.strategy);
    EXPECT_EQ(back.persistent, p.persistent);
    EXPECT_EQ(planFileText(t, back, 5), text);  // the derived fields too
  }
}

TEST(PlannerPlanFile, StructureHashIgnoresValuesNotShape) {
  Tape a = products::asianCall(10), b = products::asianCall(10);
  b.inputDefaults[0] = 123;  // another spot: the same plan applies
  b.name = "renamed";
  EXPECT_EQ(structureHash(a), structureHash(b));
  EXPECT_EQ(structureHash(a).size(), 32u);
  EXPECT_NE(structureHash(a), structureHash(products::asianCall(11)));
  Tape c = a;
  std::swap(c.a[20], c.b[20]);  // another argument order is another structure
  EXPECT_NE(structureHash(a), structureHash(c));
}

TEST(PlannerPlanFile, MalformedFilesNameTheFileAndField) {
  const Tape t = products::asianCall(8);  // 57 nodes
  const std::string n = std::to_string(t.size()), h = structureHash(t);
  const std::string good = R"({"format": "tapelab-plan 1", "tape": {"name": "asian-8", "nodes": N, "structure": "H"},
 "cuts": [10, 20], "inner": [null, {"cuts": [15]}, null]})";
  auto text = [&](std::string s) { return replaceAll(replaceAll(s, "\"H\"", "\"" + h + "\""), "N,", n + ","); };
  ASSERT_NO_THROW(parsePlanFile(text(good), t, "p.json"));
  const Plan ok = parsePlanFile(text(good), t, "p.json");
  EXPECT_EQ(ok.bounds, (std::vector<int32_t>{0, 10, 20, t.size()}));
  EXPECT_TRUE(ok.nested());
  EXPECT_EQ(ok.strategy, "file");

  struct Case {
    std::string what, text, expect;
  };
  const std::vector<Case> cases = {
      {"empty file", "", "p.json: (file): not JSON"},
      {"truncated", text(good).substr(0, 40), "p.json: (file): not JSON: line 1"},
      {"not an object", "[1, 2]", "p.json: (file): expected a JSON object"},
      {"no format", replaceAll(text(good), "\"format\": \"tapelab-plan 1\",", ""), "p.json: format: missing"},
      {"wrong version", replaceAll(text(good), "tapelab-plan 1", "tapelab-plan 2"),
       "p.json: format: 'tapelab-plan 2' is not 'tapelab-plan 1'"},
      {"format not a string", replaceAll(text(good), "\"tapelab-plan 1\"", "1"), "p.json: format: expected a string"},
      {"unknown key", replaceAll(text(good), "\"cuts\": [10", "\"cut\": 3, \"cuts\": [10"), "p.json: cut: unknown key"},
      {"no tape", replaceAll(text(good), "\"tape\"", "\"strategy\""), "p.json: tape: missing"},
      {"tape of another size", replaceAll(text(good), "\"nodes\": " + n, "\"nodes\": 99"),
       "p.json: tape.nodes: the plan is for a tape of 99 nodes"},
      {"another tape's structure", replaceAll(text(good), h, std::string(32, '0')),
       "p.json: tape.structure: the plan was made for another tape"},
      {"unknown tape key", replaceAll(text(good), "\"name\"", "\"size\""), "p.json: tape.size: unknown key"},
      {"no cuts", replaceAll(text(good), "\"cuts\": [10, 20],", ""), "p.json: cuts: missing"},
      {"cuts not an array", replaceAll(text(good), "[10, 20]", "10"), "p.json: cuts: expected an array"},
      {"fractional cut", replaceAll(text(good), "[10, 20]", "[10.5, 20]"), "p.json: cuts[0]: expected an integer"},
      {"cut at 0", replaceAll(text(good), "[10, 20]", "[0, 20]"), "p.json: cuts[0]: 0 is outside (0, " + n + ")"},
      {"cut past the end", replaceAll(text(good), "[10, 20]", "[10, " + n + "]"), "p.json: cuts[1]: " + n + " is outside"},
      {"cuts not increasing", replaceAll(text(good), "[10, 20]", "[20, 10]"), "p.json: cuts[1]: 10 does not increase on 20"},
      {"inner of the wrong length", replaceAll(text(good), "[null, {\"cuts\": [15]}, null]", "[null, null]"),
       "p.json: inner: 2 entries for 3 segments"},
      {"inner entry a number", replaceAll(text(good), "{\"cuts\": [15]}", "7"),
       "p.json: inner[1]: expected null or an object"},
      {"inner cut outside its segment", replaceAll(text(good), "[15]", "[25]"),
       "p.json: inner[1].cuts[0]: 25 is outside (10, 20)"},
      {"chain not a boolean", replaceAll(text(good), "[15]}", "[15], \"chain\": 1}"),
       "p.json: inner[1].chain: expected true or false"},
      {"unknown inner key", replaceAll(text(good), "{\"cuts\": [15]}", "{\"cutz\": [15]}"),
       "p.json: inner[1].cutz: unknown key"},
      {"inner without cuts", replaceAll(text(good), "{\"cuts\": [15]}", "{\"chain\": true}"),
       "p.json: inner[1].cuts: missing"},
      {"a chain cut again", replaceAll(text(good), "{\"cuts\": [15]}",
                                       "{\"cuts\": [15], \"chain\": true, \"inner\": [{\"cuts\": [12]}, null]}"),
       "p.json: inner[1].inner[0]: the sub-segments of a chain cannot be cut again"},
      {"nested inner of the wrong length", replaceAll(text(good), "{\"cuts\": [15]}", "{\"cuts\": [15], \"inner\": [null]}"),
       "p.json: inner[1].inner: 1 entries for 2 segments"},
      {"one segment cut again", replaceAll(replaceAll(text(good), "[10, 20]", "[]"), "[null, {\"cuts\": [15]}, null]",
                                                                              "[{\"cuts\": [15]}]"),
       "p.json: cuts: inner: a plan of one segment is the plain kernel"},
      {"strategy not a string", replaceAll(text(good), "\"cuts\": [10", "\"strategy\": 5, \"cuts\": [10"),
       "p.json: strategy: expected a string"},
  };
  EXPECT_GE(cases.size(), 15u);
  for (const Case& c : cases) {
    try {
      parsePlanFile(c.text, t, "p.json");
      ADD_FAILURE() << c.what << ": accepted";
    } catch (const PlanFileError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(c.expect, 0), 0u) << c.what << ": got '" << msg << "'";
      EXPECT_EQ(msg.find('\n'), std::string::npos) << c.what << ": not one line";
    }
  }
  EXPECT_THROW(readPlanFile("/nonexistent/p.json", t), PlanFileError);
}

}  // namespace
}  // namespace tapelab
