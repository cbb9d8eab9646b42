// Every command's no-flag form for every built-in product (issue 45): a product's structure comes from
// its own defaults (its steps, lmm's forwards, heat's points) in `compare`, `price`, `tape` + `run`,
// `plan` and `tune --compile-only`, so a default cannot vanish again. The flags given are only those
// that keep a case quick (an engine that runs here, few paths); none of them shapes the tape. The
// product list is the catalog's: a new product is covered the day it is added.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "api/knobs.h"
#include "tape/products/products.h"
#include "tests/cli/cli_process.h"

using namespace tapelab::clitest;

namespace {

std::vector<std::string> productNames() {
  std::vector<std::string> names;
  for (const tapelab::products::ProductInfo& p : tapelab::products::catalog()) names.push_back(p.name);
  return names;
}

// The exit code and, when it is not 0, what the command said.
void expectRuns(const Proc& p, const std::string& what) {
  EXPECT_EQ(p.code, 0) << what << " exited " << p.code << ": " << p.err;
}

class Defaults : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const tapelab::Knob& k : tapelab::knobTable())
      if (k.scope == tapelab::Knob::Scope::Run) unsetenv(k.variable);
  }
};

}  // namespace

TEST_P(Defaults, CompareRunsWithoutSteps) {
  const std::string cmd = "tapelab compare --product " + GetParam() + " --engines reference --paths 64 --ladders 1 --points 2";
  const Proc p = sh(cmd);
  expectRuns(p, cmd);
  // Every row after plain's own says "yes" in the same-bits column; none says "NO".
  EXPECT_EQ(p.out.find(" NO "), std::string::npos) << p.out;
  EXPECT_NE(p.out.find(" yes "), std::string::npos) << p.out;
}

TEST_P(Defaults, PriceRunsWithoutSteps) {
  const std::string cmd = "tapelab price --product " + GetParam() + " --paths 64 --json";
  const Proc p = sh(cmd);
  expectRuns(p, cmd);
  EXPECT_NE(p.out.find("\"value\":"), std::string::npos) << p.out;
}

TEST_P(Defaults, TapeThenRunWithoutSteps) {
  const std::string tape = tempPath(GetParam() + ".tape");
  expectRuns(sh("tapelab tape --product " + GetParam() + " --out '" + tape + "'"), "tape --product " + GetParam());
  const Proc p = sh("tapelab run '" + tape + "' --paths 64 --json");
  expectRuns(p, "run " + tape);
  std::remove(tape.c_str());
}

TEST_P(Defaults, PlanRunsWithoutSteps) {
  const std::string cmd = "tapelab plan --product " + GetParam();
  expectRuns(sh(cmd), cmd);
}

// tune's no-flag form ranks by the compiler where the engine only compiles; the reference engine runs
// everywhere, so the quick no-flag case is a shortlist of one candidate timed on it.
TEST_P(Defaults, TuneRunsWithoutSteps) {
  const std::string cmd = "tapelab tune --product " + GetParam() +
                          " --engine reference --paths 64 --repeats 1 --plans 1 --strategies window --segments 8 --no-store";
  expectRuns(sh(cmd), cmd);
}

INSTANTIATE_TEST_SUITE_P(EveryProduct, Defaults, ::testing::ValuesIn(productNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The README's main job exactly as scripts/main-job.sh runs it without a GPU, on the engine that always
// runs (the whole command, every engine, is .ci/run's last step).
TEST(DefaultsMainJob, CompareWithNoProductRunsTheAsian) {
  const Proc p = sh("tapelab compare --paths 300 --ladders 1 --engines reference");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("asian-252"), std::string::npos) << p.out;
}
