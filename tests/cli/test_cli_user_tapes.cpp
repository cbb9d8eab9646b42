// A user's own tape through the commands: compare ladders over any input, run takes a list of
// strategies (a row each, the same bits), and a cut asked for that auto checkpointing leaves out is
// said on stderr and in --json, never silent. CliUserHeston: a committed user tape FILE
// (tests/data/user-heston.tape) through plan --all, run and compare.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

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

// A new user's Heston call as a committed FILE (tests/data/user-heston.tape: 578 nodes, 9 inputs, 48
// draws, under auto checkpointing's 768), read by path through plan --all, run with a strategy list and
// compare over an input that is not spot: no source edits, no --product, nothing left out unsaid.
namespace {

const std::string kHeston = TAPELAB_SOURCE_DIR "/tests/data/user-heston.tape";

std::vector<std::string> wordsOf(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

bool usable(const std::string& engine) {
  for (const std::string& l : linesOf(runTapelab("engines").out)) {
    const auto w = wordsOf(l);
    if (w.size() >= 2 && w[0] == engine) return w[1] == "yes";
  }
  return false;
}

class CliUserHeston : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"TAPELAB_CONFIG", "TAPELAB_ENGINE", "TAPELAB_CKPT", "TAPELAB_STRATEGY", "TAPELAB_PATHS",
                          "TAPELAB_CKPT_NODES"})
      unsetenv(v);
    ASSERT_TRUE(std::filesystem::is_regular_file(kHeston)) << kHeston;
  }
};

}  // namespace

TEST_F(CliUserHeston, PlanAllShowsProgressAndAParetoFront) {
  const Proc p = runTapelab("plan " + kHeston + " --all");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out.rfind("user-heston.tape: 578 nodes, 9 inputs, 48 draws\n", 0), 0u) << p.out.substr(0, 200);
  // Progress on stderr, a line as each strategy is done, naming it and how many of the twelve are.
  for (const char* s : {"uniform", "window", "periodic", "marginal", "optimal", "optimal-persistent", "auto", "two-level", "revolve",
                        "budget", "mincut", "mincut-weighted"}) {
    const std::string line = std::string("plan --all: ") + s + ": 31 plans, ";
    EXPECT_NE(p.err.find(line), std::string::npos) << line << "\n" << p.err;
  }
  EXPECT_NE(p.err.find("12/12 strategies)"), std::string::npos) << p.err;
  EXPECT_EQ(p.out.find("plan --all:"), std::string::npos) << "progress belongs on stderr";
  // The table's rows: (strategy, requested) -> (peak_live, recompute_cost).
  std::map<std::pair<std::string, int>, std::pair<int, double>> table;
  const size_t heading = p.out.find("Pareto front of peak_live against weighted recompute_cost");
  ASSERT_NE(heading, std::string::npos) << p.out;
  EXPECT_EQ(p.out.find("least peak_live"), std::string::npos) << "a front, not one number";
  for (const std::string& l : linesOf(p.out.substr(0, heading))) {
    const auto w = wordsOf(l);
    if (w.size() == 12 && (w[0] == "register" || w[0] == "plain") && w[2] != "requested")
      table[{w[1], std::stoi(w[2])}] = {std::stoi(w[6]), std::stod(w[9])};
  }
  EXPECT_EQ(table.size(), 12u * 31u + 1u) << "twelve strategies at 2..32 segments, and the plain kernel";
  // The front: every entry a row of the table, by peak_live up and recompute_cost strictly down (so no
  // entry dominates another; plans at the same point listed together), no row of the table dominating
  // an entry, the plain kernel last.
  std::vector<std::pair<std::string, int>> front;
  int lastLive = -1;
  double lastCost = 1e300;
  for (const std::string& l : linesOf(p.out.substr(heading))) {
    const auto w = wordsOf(l);
    if (w.size() != 6 || w[1] == "requested" || w[0][0] == '-') continue;
    front.emplace_back(w[0], std::stoi(w[1]));
    const int live = std::stoi(w[4]);
    const double cost = std::stod(w[5]);
    const auto row = table.find(front.back());
    ASSERT_NE(row, table.end()) << l;
    EXPECT_EQ(row->second.first, live) << l;
    EXPECT_EQ(row->second.second, cost) << l;
    EXPECT_GE(live, lastLive) << l;
    if (live == lastLive) {
      EXPECT_EQ(cost, lastCost) << "plans at one point are listed together\n" << l;
    } else {
      EXPECT_LT(cost, lastCost) << l;
    }
    for (const auto& [key, value] : table)
      EXPECT_FALSE(value.first <= live && value.second <= cost && (value.first < live || value.second < cost))
          << key.first << " " << key.second << " dominates front entry " << l;
    lastLive = live;
    lastCost = cost;
  }
  ASSERT_GE(front.size(), 3u) << p.out.substr(heading);
  EXPECT_EQ(front.back(), (std::pair<std::string, int>{"plain", 1}));
}

TEST_F(CliUserHeston, RunTakesAStrategyListWithTheSameBitsOnEachEngine) {
  for (const std::string engine : {"reference", "cpu-jit"}) {
    if (!usable(engine)) {
      ADD_FAILURE() << engine << " is not usable here: the test needs it";
      continue;
    }
    const Proc p = runTapelab("run " + kHeston + " --engine " + engine +
                              " --paths 1000 --strategy window,two-level --checkpoint 8");
    ASSERT_EQ(p.code, 0) << p.err;
    EXPECT_EQ(p.err, "") << "--checkpoint 8 cuts it: nothing is left out";
    std::map<std::string, std::vector<std::string>> rows;
    for (const std::string& l : linesOf(p.out)) {
      const auto w = wordsOf(l);
      if (w.size() >= 7 && (w[0] == "window" || w[0] == "two-level")) rows[w[0]] = w;
    }
    ASSERT_EQ(rows.size(), 2u) << p.out;
    for (const auto& [name, w] : rows) {
      EXPECT_EQ(w[1], "register") << engine << " " << name << ": the cut kernel ran\n" << p.out;
      EXPECT_EQ(w[2], "8") << engine << " " << name << "\n" << p.out;
    }
    // The bits are compared in full ("same bits as first"); the Greeks' table shows each strategy's estimates
    // rounded to their errors, side by side (the same, as the bits are).
    EXPECT_EQ(rows["two-level"][5], "yes") << engine << "\n" << p.out;
    const size_t at = p.out.rfind("\nvalue ");  // the table's row (the header line above it starts "value and")
    const std::string value = p.out.substr(at + 1, p.out.find('\n', at + 1) - at - 1);
    const auto v = wordsOf(value);
    ASSERT_EQ(v.size(), 7u) << value;  // value E +- S E +- S
    EXPECT_EQ(std::vector<std::string>(v.begin() + 1, v.begin() + 4), std::vector<std::string>(v.begin() + 4, v.end()))
        << value;
    EXPECT_EQ(p.out.find(" NO "), std::string::npos) << p.out;
  }
  // Without --checkpoint the 578 nodes are under auto's 768: both strategies are said to be left out,
  // on stderr and in --json, and the plain kernel runs.
  const Proc plain = runTapelab("run " + kHeston + " --engine reference --paths 200 --strategy window,two-level --json");
  ASSERT_EQ(plain.code, 0) << plain.err;
  for (const char* s : {"window", "two-level"})
    EXPECT_NE(plain.err.find(std::string("tapelab: --strategy ") + s +
                             ": not used: the plain kernel runs, the tape's 578 nodes are under --ckpt-nodes 768"),
              std::string::npos)
        << plain.err;
  EXPECT_NE(plain.out.find("\"not_used\":[\"--strategy window: not used:"), std::string::npos) << plain.out;
}

TEST_F(CliUserHeston, CompareLaddersOverV0OnTwoEngines) {
  for (const char* engine : {"reference", "cpu-jit"}) ASSERT_TRUE(usable(engine)) << engine << " is not usable here";
  const std::string compare = "compare " + kHeston + " --ladder v0 --engines reference,cpu-jit --paths 500 --ladders 1 --markets 2 --kernels register";
  const Proc p = runTapelab(compare);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("7-point v0 ladder"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("d/d v0"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("d/d spot"), std::string::npos) << p.out;
  EXPECT_EQ(p.out.find(" NO "), std::string::npos) << p.out;
  // Each engine at its default precision (fp64 on both CPUs, as run), every row naming its plan; within
  // an engine every ladder equals its plain single-market kernel's bits.
  int rows = 0, same = 0;
  for (const std::string& l : linesOf(p.out)) {
    const auto w = wordsOf(l);
    if (w.size() < 3 || (w[0] != "reference" && w[0] != "cpu-jit")) continue;
    ++rows;
    EXPECT_EQ(w[1], "fp64") << l;
    EXPECT_TRUE(l.size() > 8 && (l.substr(l.size() - 5) == "plain" || l.find("window 16") != std::string::npos)) << l;
    same += l.find("  yes  ") != std::string::npos;
  }
  EXPECT_EQ(rows, 8) << "plain and register, 1 and 2 markets, on each engine\n" << p.out;
  EXPECT_EQ(same, 6) << "every row but each engine's first\n" << p.out;
  const Proc js = runTapelab(compare + " --json");
  ASSERT_EQ(js.code, 0) << js.err;
  EXPECT_NE(js.out.find("\"ladder_input\":\"v0\""), std::string::npos) << js.out.substr(0, 400);
  const Proc bad = runTapelab("compare " + kHeston + " --ladder vol --engines reference");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "tapelab: --ladder: no input named 'vol' (inputs: spot, strike, v0, kappa, theta, xi, rho, rate, "
                     "maturity)\n");
}

// compare takes a strategy list as run does: each checkpointed kernel once per strategy, a row each,
// every row naming its plan and checked bit for bit against the engine's plain row; an unknown name is
// refused before anything runs.
TEST_F(CliUserHeston, CompareTakesAStrategyList) {
  ASSERT_TRUE(usable("cpu-jit")) << "cpu-jit is not usable here";
  const std::string compare = "compare " + kHeston + " --engines cpu-jit --paths 400 --ladders 1 --points 3 --markets 1 "
                              "--checkpoint 4 --strategy window,two-level,revolve --kernels register";
  const Proc p = runTapelab(compare);
  ASSERT_EQ(p.code, 0) << p.err;
  int rows = 0, same = 0;
  for (const char* plan : {"window 4", "two-level 4", "revolve 4"}) {
    const bool found = p.out.find(plan) != std::string::npos;
    EXPECT_TRUE(found) << plan << "\n" << p.out;
  }
  for (const std::string& l : linesOf(p.out)) {
    const auto w = wordsOf(l);
    if (w.size() < 3 || w[0] != "cpu-jit") continue;
    ++rows;
    same += l.find("  yes  ") != std::string::npos;
  }
  EXPECT_EQ(rows, 4) << "plain and one register row per strategy\n" << p.out;
  EXPECT_EQ(same, 3) << "every register row has the plain row's bits\n" << p.out;
  const Proc bad = runTapelab("compare " + kHeston + " --engines cpu-jit --strategy window,nosuch");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "tapelab: --strategy: unknown strategy 'nosuch' (known: uniform, window, periodic, marginal, optimal, "
                     "optimal-persistent, auto, two-level, revolve, budget, mincut, mincut-weighted, exact, cmd)\n");
}
