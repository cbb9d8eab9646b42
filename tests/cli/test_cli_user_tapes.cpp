// A user's own tape through the commands: compare ladders over any input, run takes a list of
// strategies (a row each, the same bits), and a cut asked for that auto checkpointing leaves out is
// said on stderr and in --json, never silent.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/cli/cli_process.h"

using namespace tapelab::clitest;

namespace {

// A tape a user wrote: no input named spot (a rate model), 3 inputs, 2 draws.
const char* kTape = R"(tapelab-tape 1
input r0 0.03
input sigma 0.01
input notional 100
randn 0
mul 1 3
add 0 4
randn 1
mul 1 6
add 5 7
neg 8
exp 9
mul 2 10
output 11
)";

class CliUserTapes : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"TAPELAB_CONFIG", "TAPELAB_ENGINE", "TAPELAB_CKPT", "TAPELAB_STRATEGY", "TAPELAB_PATHS"})
      unsetenv(v);
    path_ = std::filesystem::temp_directory_path() / ("user-" + std::to_string(getpid()) + ".tape");
    std::ofstream(path_) << kTape;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

}  // namespace

TEST_F(CliUserTapes, CompareLaddersOverAnyInput) {
  const std::string compare = "compare " + path_ + " --engines reference --paths 500 --ladders 1 --markets 2";
  Proc p = runTapelab(compare);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("7-point r0 ladder"), std::string::npos) << "no spot: the first input\n" << p.out;
  EXPECT_NE(p.out.find("d/d r0"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("d/d sigma"), std::string::npos) << "no vol: the next input's Greek\n" << p.out;
  EXPECT_EQ(p.out.find(" NO "), std::string::npos) << p.out;
  p = runTapelab(compare + " --ladder sigma=0.01,0.02,0.03 --json");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("\"ladder_input\":\"sigma\",\"ladder_values\":[0.01,0.02,0.029999999999999999]"),
            std::string::npos)
      << p.out;
  p = runTapelab(compare + " --ladder notional");
  EXPECT_EQ(p.code, 0) << p.err;
  p = runTapelab(compare + " --ladder spot");
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(p.err, "tapelab: --ladder: no input named 'spot' (inputs: r0, sigma, notional)\n");
  p = runTapelab(compare + " --ladder sigma=0.01,0.02 --points 5");
  EXPECT_EQ(p.code, 2);
  EXPECT_NE(p.err.find("--points"), std::string::npos) << p.err;
}

TEST_F(CliUserTapes, RunTakesAListOfStrategiesWithTheSameBits) {
  const Proc p = runTapelab("run " + path_ + " --engine reference --paths 800 --checkpoint 3 --strategy window,optimal,uniform");
  ASSERT_EQ(p.code, 0) << p.err;
  for (const char* s : {"window ", "optimal ", "uniform "}) EXPECT_NE(p.out.find(s), std::string::npos) << s << p.out;
  EXPECT_EQ(p.out.find("NO"), std::string::npos) << p.out;
  int yes = 0;
  for (size_t at = 0; (at = p.out.find(" yes", at)) != std::string::npos; ++at) ++yes;
  EXPECT_EQ(yes, 2) << "the second and third rows against the first\n" << p.out;
  const Proc bad = runTapelab("run " + path_ + " --engine reference --strategy window,nosuch --checkpoint 3");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown strategy 'nosuch'"), std::string::npos) << bad.err;
}

TEST_F(CliUserTapes, AStrategyAutoLeavesOutIsSaid) {
  const Proc p = runTapelab("run " + path_ + " --engine reference --paths 200 --strategy optimal --json");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.err, "tapelab: --strategy optimal: not used: the plain kernel runs, the tape's 12 nodes are under "
                   "--ckpt-nodes 768 (auto); --checkpoint N cuts it\n");
  EXPECT_NE(p.out.find("\"not_used\":[\"--strategy optimal: not used:"), std::string::npos) << p.out;
  const Proc forced = runTapelab("run " + path_ + " --engine reference --paths 200 --strategy optimal --checkpoint 3 --json");
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(forced.err, "");
  EXPECT_NE(forced.out.find("\"not_used\":[]"), std::string::npos) << forced.out;
  EXPECT_NE(forced.out.find("\"strategy\":\"optimal\""), std::string::npos) << forced.out;
}
