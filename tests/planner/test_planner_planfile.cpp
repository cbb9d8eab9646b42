// Plan files: written plans read back as the same plan; every malformed file
// is refused with one line naming the file and the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

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
      {"not an object", "[1, 2]", "p.json: (file): expected a plan: a JSON object with format, tape and cuts; found an array"},
      {"no format", replaceAll(text(good), "\"format\": \"tapelab-plan 1\",", ""), "p.json: (file): the required key 'format' is missing"},
      {"wrong version", replaceAll(text(good), "tapelab-plan 1", "tapelab-plan 3"),
       "p.json: format: 'tapelab-plan 3' is not 'tapelab-plan 1' or 'tapelab-plan 2'"},
      {"a version 2 key in version 1", replaceAll(text(good), "\"cuts\": [10", "\"keep\": [], \"cuts\": [10"),
       "p.json: keep: unknown key"},
      {"format not a string", replaceAll(text(good), "\"tapelab-plan 1\"", "1"), "p.json: format: expected a string"},
      {"unknown key", replaceAll(text(good), "\"cuts\": [10", "\"cut\": 3, \"cuts\": [10"), "p.json: cut: unknown key"},
      {"no tape", replaceAll(text(good), "\"tape\"", "\"strategy\""), "p.json: (file): the required key 'tape' is missing"},
      {"tape of another size", replaceAll(text(good), "\"nodes\": " + n, "\"nodes\": 99"),
       "p.json: tape.nodes: the plan is for a tape of 99 nodes"},
      {"another tape's structure", replaceAll(text(good), h, std::string(32, '0')),
       "p.json: tape.structure: the plan was made for another tape"},
      {"unknown tape key", replaceAll(text(good), "\"name\"", "\"size\""), "p.json: tape.size: unknown key"},
      {"no cuts", replaceAll(text(good), "\"cuts\": [10, 20],", ""), "p.json: (file): the required key 'cuts' is missing"},
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
       "p.json: inner[1]: the required key 'cuts' is missing"},
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
      {"strategy not a label", replaceAll(text(good), "\"cuts\": [10", "\"strategy\": \"\\u001b[31mred\", \"cuts\": [10"),
       "p.json: strategy: '\\x1b[31mred' is not a label"},
      {"strategy too long", replaceAll(text(good), "\"cuts\": [10", "\"strategy\": \"" + std::string(65, 'w') + "\", \"cuts\": [10"),
       "p.json: strategy: '" + std::string(65, 'w') + "' is not a label"},
      {"a key twice", replaceAll(text(good), "\"cuts\": [10, 20],", "\"cuts\": [10, 20], \"cuts\": [30],"),
       "p.json: (file): line 2, column "},
      {"a key twice in the tape", replaceAll(text(good), "\"name\": \"asian-8\",", "\"name\": \"asian-8\", \"name\": \"x\","),
       "p.json: (file): line 1, column "},
      {"a derived field of the wrong type", replaceAll(text(good), "\"cuts\": [10", "\"metrics\": 3, \"cuts\": [10"),
       "p.json: (file): line 2, column "},
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

std::string planError(const std::function<void()>& f) {
  try {
    f();
    return "(accepted)";
  } catch (const PlanFileError& e) {
    return e.what();
  }
}

// Hostile nesting (README, "Faults"): a plan whose inner cuts nest thousands deep, and JSON nested
// a million deep, are one line each, not a stack overflow; a plan nesting at the limit reads.
TEST(PlannerPlanFile, NestingIsBoundedInOneLine) {
  const Tape t = products::asianCall(400);  // 2,405 nodes: room for deep cuts
  const std::string head = "{\"format\": \"tapelab-plan 1\", \"tape\": {\"nodes\": " + std::to_string(t.size()) +
                           ", \"structure\": \"" + structureHash(t) + "\"}, \"cuts\": [1000], \"inner\": ";
  // inner nested `levels` deep: each level cuts the first sub-segment once more.
  auto nested = [&](int levels) {
    std::string open, close;
    int32_t end = 1000;
    for (int l = 0; l < levels; ++l) {
      end -= 2;
      open += "[{\"cuts\": [" + std::to_string(end) + "], \"inner\": ";
      close = "}, null]" + close;
    }
    return head + open + "[null, null]" + close + "}";
  };
  // Within the limit it reads, and its depth is what it says.
  const Plan deep = parsePlanFile(nested(kMaxPlanDepth - 1), t, "deep.json");
  EXPECT_EQ(deep.depth(), kMaxPlanDepth);
  const std::string tooDeep = planError([&] { parsePlanFile(nested(kMaxPlanDepth), t, "p.json"); });
  EXPECT_EQ(tooDeep.rfind("p.json: inner[0].inner[0]", 0), 0u) << tooDeep;
  EXPECT_NE(tooDeep.find("nested deeper than " + std::to_string(kMaxPlanDepth) + " levels of cuts"), std::string::npos) << tooDeep;
  const std::string thousands = planError([&] { parsePlanFile(nested(5000), t, "p.json"); });
  EXPECT_NE(thousands.find("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"), std::string::npos) << thousands;
  const std::string brackets = planError([&] { parsePlanFile(std::string(1'000'000, '['), t, "p.json"); });
  EXPECT_EQ(brackets.rfind("p.json: (file): line 1, column " + std::to_string(kMaxJsonDepth + 1) + ": nested deeper", 0), 0u) << brackets;
  for (const std::string& e : {tooDeep, thousands, brackets}) EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// The plan reader's resources and messages: a BOM reads as the tape reader reads it, a file that
// cannot be opened says why, a file over the limit is refused before it is read.
TEST(PlannerPlanFile, FilesThatCannotBeReadSayWhy) {
  const Tape t = products::asianCall(8);
  const std::string text = planFileText(t, makePlan(t, {0, 10, t.size()}, "window"));
  EXPECT_EQ(parsePlanFile("\xEF\xBB\xBF" + text, t, "bom.json").bounds, (std::vector<int32_t>{0, 10, t.size()}));
  const std::filesystem::path d = std::filesystem::temp_directory_path() / ("tapelab-planfile-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  std::filesystem::create_symlink(d / "nowhere.json", d / "dangling.json");
  EXPECT_EQ(planError([&] { readPlanFile((d / "missing.json").string(), t); }), (d / "missing.json").string() + ": (file): no such file");
  EXPECT_EQ(planError([&] { readPlanFile((d / "dangling.json").string(), t); }),
            (d / "dangling.json").string() + ": (file): a symbolic link to '" + (d / "nowhere.json").string() + "', which does not exist");
  EXPECT_EQ(planError([&] { readPlanFile(d.string(), t); }), d.string() + ": (file): a directory, not a file");
  {
    std::ofstream(d / "big.json") << " ";
    std::filesystem::resize_file(d / "big.json", kMaxPlanBytes + 1);  // sparse: nothing is written
  }
  EXPECT_EQ(planError([&] { readPlanFile((d / "big.json").string(), t); }),
            (d / "big.json").string() + ": (file): larger than the limit of 256 MiB (" + std::to_string(kMaxPlanBytes + 1) + " bytes)");
  EXPECT_EQ(planError([&] { readPlanFile("/dev/zero", t); }).rfind("/dev/zero: (file): not JSON: line 1, column 1", 0), 0u);
  {
    std::ofstream(d / "p.json") << text;
  }
  EXPECT_EQ(readPlanFile((d / "p.json").string(), t).bounds, (std::vector<int32_t>{0, 10, t.size()}));
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace tapelab
