// Strategies as processes (planner/external.h) through the binary: --strategy-cmd's plan runs like any
// other; a process that crashes, hangs, writes garbage or a plan for another tape is one line naming the
// command and a non-zero exit, and the exact strategy names what to install when it cannot run.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/cli/cli_process.h"

using namespace tapelab::clitest;

namespace {

// A strategy process in sh: `body` runs with $OUT the plan file it is to write.
std::string script(const std::string& stem, const std::string& body) {
  const std::string path = tempPath(stem + ".sh");
  std::ofstream f(path);
  f << "#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in --out) OUT=$2;; --summary) SUMMARY=$2;; esac; shift; done\n"
    << body << "\n";
  return "sh " + path;
}

const std::string kTape = " --product asian --param steps=24 --checkpoint 4";

}  // namespace

TEST(CliStrategyProcess, APlanFromAProcessRunsAndEqualsPlain) {
  // A per-value plan written by the process: keep nothing, two blocks.
  const std::string cmd = script("ok", "python3 -c \"import json,sys; s=json.load(open('$SUMMARY')); "
                                       "json.dump({'format':'tapelab-plan 2','tape':s['tape'],'family':'per-value',"
                                       "'cuts':[80],'keep':[]}, open('$OUT','w'))\"");
  const Proc p = sh("tapelab plan" + kTape + " --strategy-cmd \"" + cmd + "\"");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("per-value: keeps 0 values"), std::string::npos) << p.out;
  const Proc run = sh("tapelab price" + kTape + " --engine reference --paths 2000 --strategy-cmd \"" + cmd + "\" --json");
  const Proc plain = sh("tapelab price --product asian --param steps=24 --checkpoint off --engine reference --paths 2000 --json");
  ASSERT_EQ(run.code, 0) << run.err;
  auto numbers = [](const std::string& json) { return json.substr(json.find("\"value\"")); };
  EXPECT_EQ(numbers(run.out).substr(0, 200), numbers(plain.out).substr(0, 200));
}

TEST(CliStrategyProcess, ACrashIsOneLineWithItsExitAndLastLine) {
  const Proc p = sh("tapelab plan" + kTape + " --strategy-cmd \"" + script("crash", "echo 'solver blew up' >&2; exit 7") + "\"");
  EXPECT_EQ(p.code, 1);
  EXPECT_NE(p.err.find("exit 7: solver blew up"), std::string::npos) << p.err;
  EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << p.err;  // one line
}

TEST(CliStrategyProcess, AHangIsEndedAtItsTimeLimit) {
  const Proc p = sh("tapelab plan" + kTape + " --solve-seconds 0.2 --strategy-cmd \"" + script("hang", "sleep 100") + "\"");
  EXPECT_EQ(p.code, 1);
  EXPECT_NE(p.err.find("ran past its time limit"), std::string::npos) << p.err;
}

TEST(CliStrategyProcess, GarbageNoPlanAndAnotherTapesPlanAreRefused) {
  Proc p = sh("tapelab plan" + kTape + " --strategy-cmd \"" + script("garbage", "echo 'not json' > $OUT") + "\"");
  EXPECT_EQ(p.code, 1);
  EXPECT_NE(p.err.find("its plan: (file): not JSON"), std::string::npos) << p.err;
  p = sh("tapelab plan" + kTape + " --strategy-cmd \"" + script("none", "true") + "\"");
  EXPECT_EQ(p.code, 1);
  EXPECT_NE(p.err.find("wrote no plan file"), std::string::npos) << p.err;
  const std::string other = tempPath("other.json");
  ASSERT_EQ(sh("tapelab plan --product asian --param steps=30 --checkpoint 4 --out " + other).code, 0);
  p = sh("tapelab plan" + kTape + " --strategy-cmd \"" + script("other", "cp " + other + " $OUT") + "\"");
  EXPECT_EQ(p.code, 1);
  EXPECT_NE(p.err.find("its plan: tape.nodes: the plan is for a tape of 204 nodes"), std::string::npos) << p.err;
}

TEST(CliStrategyProcess, AProcessThatCannotRunHereExitsThree) {
  const Proc p = sh("tapelab plan" + kTape + " --strategy-cmd \"" + script("missing", "echo 'needs highspy' >&2; exit 3") + "\"");
  EXPECT_EQ(p.code, 3);
  EXPECT_NE(p.err.find("cannot run here: needs highspy"), std::string::npos) << p.err;
}

TEST(CliStrategyProcess, ExactIsOptimalOnASmallTapeAndSaysSo) {
  const Proc p = sh("tapelab plan" + kTape + " --strategy exact");
  if (p.code == 3) GTEST_SKIP() << "exact cannot run here: " << p.err;
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("optimal"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("gap 0,"), std::string::npos) << p.out;
}

TEST(CliStrategyProcess, ExactOnTheProcessorClockIsOptimalToo) {
  const Proc p = sh("tapelab plan" + kTape + " --strategy exact --solve-clock cpu");
  if (p.code == 3) GTEST_SKIP() << "exact cannot run here: " << p.err;
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("gap 0,"), std::string::npos) << p.out;
  const Proc bad = sh("tapelab plan" + kTape + " --strategy exact --solve-clock gpu");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--solve-clock: expected wall or cpu, got 'gpu'"), std::string::npos) << bad.err;
}

TEST(CliStrategyProcess, ExactsFrontIsTheOptimumAtEachBudget) {
  // The front at 3 budgets over the same blocks equals three single solves, and recompute falls as the
  // budget grows; a budget no kept set fits is "infeasible"; a front needs --strategy exact.
  const Proc front = sh("tapelab plan" + kTape + " --strategy exact --front 16,45,60 --json");
  if (front.code == 3) GTEST_SKIP() << "exact cannot run here: " << front.err;
  ASSERT_EQ(front.code, 0) << front.err;
  auto cost = [](const std::string& json, size_t from) {
    const size_t k = json.find("\"recompute_cost\":", from);
    return k == std::string::npos ? -1.0 : std::stod(json.substr(k + 17));
  };
  double previous = 1e300;
  for (int budget : {45, 60}) {
    const size_t at = front.out.find("\"budget\":" + std::to_string(budget));
    ASSERT_NE(at, std::string::npos) << front.out;
    const double c = cost(front.out, at);
    const Proc one = sh("tapelab plan" + kTape + " --strategy exact --budget " + std::to_string(budget) + " --json");
    ASSERT_EQ(one.code, 0) << one.err;
    EXPECT_DOUBLE_EQ(c, cost(one.out, one.out.find("\"metrics\"")));
    EXPECT_LE(c, previous);
    previous = c;
  }
  EXPECT_NE(front.out.find("{\"budget\":16,\"status\":\"infeasible\"}"), std::string::npos) << front.out;
  const Proc notExact = sh("tapelab plan" + kTape + " --strategy window --front 45,60");
  EXPECT_EQ(notExact.code, 2);
  EXPECT_NE(notExact.err.find("--front is the exact strategy's"), std::string::npos) << notExact.err;
}
