// tapelab plan --all through the binary: a list of strategies (--strategy A,B or --strategies A,B),
// progress on stderr (a line per strategy with the elapsed time), and a summary that is the Pareto
// front of peak_live against weighted recompute_cost, checked here against every row it summarises.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "tests/cli/cli_process.h"

using namespace tapelab::clitest;

namespace {

const std::string kPlan = kTapelab + " plan --product asian --steps 20 --all";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// (strategy, requested) of the --all table's rows, in order (the plain kernel's row left out).
std::vector<std::pair<std::string, int>> tableRows(const std::string& out) {
  std::vector<std::pair<std::string, int>> rows;
  for (const std::string& l : lines(out)) {
    if (l.rfind("Pareto front", 0) == 0) break;
    const auto w = words(l);
    if (w.size() == 12 && w[0] == "register") rows.emplace_back(w[1], std::stoi(w[2]));
    if (w.size() == 12 && w[0] == "plain" && w[1] != "plain") rows.emplace_back(w[1], std::stoi(w[2]));
  }
  return rows;
}

struct Point {
  std::string strategy;
  int requested = 0, segments = 0, peakLive = 0;
  double cost = 0;
};

double numberAfter(const std::string& s, const std::string& key, size_t from) {
  const size_t at = s.find("\"" + key + "\":", from);
  if (at == std::string::npos) throw std::runtime_error("no " + key);
  return std::strtod(s.c_str() + at + key.size() + 3, nullptr);
}

// The objects that start with {"strategy":"...", between `from` and `to`, read by key.
std::vector<Point> points(const std::string& js, size_t from, size_t to, bool nestedMetrics) {
  std::vector<Point> out;
  const std::string open = "{\"strategy\":\"";
  for (size_t at = js.find(open, from); at != std::string::npos && at < to; at = js.find(open, at + 1)) {
    Point p;
    const size_t name = at + open.size();
    p.strategy = js.substr(name, js.find('"', name) - name);
    p.requested = static_cast<int>(numberAfter(js, "requested_segments", at));
    const size_t m = nestedMetrics ? js.find("\"metrics\":{", at) : at;
    p.segments = static_cast<int>(numberAfter(js, "segments", m));
    p.peakLive = static_cast<int>(numberAfter(js, "peak_live", m));
    p.cost = numberAfter(js, "recompute_cost", m);
    out.push_back(p);
  }
  return out;
}

bool dominates(const Point& a, const Point& b) {
  return a.peakLive <= b.peakLive && a.cost <= b.cost && (a.peakLive < b.peakLive || a.cost < b.cost);
}

bool samePoint(const Point& a, const Point& b) {
  return a.strategy == b.strategy && a.segments == b.segments && a.peakLive == b.peakLive && a.cost == b.cost;
}

class CliPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"TAPELAB_STRATEGY", "TAPELAB_CKPT", "TAPELAB_BUDGET", "TAPELAB_INNER", "TAPELAB_SEGLEN"})
      unsetenv(v);
  }
};

}  // namespace

TEST_F(CliPlan, AllTakesAListOfStrategiesInEitherSpellingInTheOrderGiven) {
  const Proc a = sh(kPlan + " --max-segments 4 --strategy revolve,window");
  ASSERT_EQ(a.code, 0) << a.err;
  const std::vector<std::pair<std::string, int>> want{{"revolve", 2}, {"revolve", 3}, {"revolve", 4},
                                                      {"window", 2},  {"window", 3},  {"window", 4}};
  EXPECT_EQ(tableRows(a.out), want) << a.out;
  const Proc b = sh(kPlan + " --max-segments 4 --strategies revolve,window,revolve");  // a name once
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(tableRows(b.out), want) << b.out;
  // --all ignores TAPELAB_STRATEGY (the strategy of a run): every strategy.
  const Proc c = sh("TAPELAB_STRATEGY=revolve " + kPlan + " --max-segments 2");
  ASSERT_EQ(c.code, 0) << c.err;
  std::set<std::string> names;
  for (const auto& r : tableRows(c.out)) names.insert(r.first);
  EXPECT_EQ(names.size(), 11u) << c.out;
}

TEST_F(CliPlan, BadStrategyListsExitTwoWithOneLineNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {kPlan + " --strategy window,,revolve", "--strategy: expected NAME,..."},
      {kPlan + " --strategies window,nope", "--strategies: unknown strategy 'nope'"},
      {kPlan + " --strategy window --strategies revolve", "--strategy and --strategies"},
      {kTapelab + " plan --product asian --steps 20 --strategy window,revolve", "--strategy: one strategy without --all"},
      {kTapelab + " plan --product asian --steps 20 --strategies window", "--strategies lists the strategies of --all"},
      {"TAPELAB_STRATEGY=window,revolve " + kTapelab + " plan --product asian --steps 20",
       "TAPELAB_STRATEGY: one strategy without --all"},
  };
  for (const auto& [line, words] : cases) {
    const Proc p = sh(line);
    EXPECT_EQ(p.code, 2) << line << "\n" << p.err;
    EXPECT_EQ(lines(p.err).size(), 1u) << line << "\n" << p.err;
    EXPECT_NE(p.err.find("tapelab: " + words), std::string::npos) << line << "\n" << p.err;
  }
}

TEST_F(CliPlan, AllSaysOnStderrWhenEachStrategyIsDoneWithTheElapsedTime) {
  for (const char* format : {"", " --json"}) {
    const Proc p = sh(kPlan + " --max-segments 6 --strategies window,two-level,budget" + std::string(format));
    ASSERT_EQ(p.code, 0) << p.err;
    const std::regex line(R"(plan --all: ([a-z-]+): 5 plans, [0-9.]+ s of planning \(elapsed [0-9.]+ s, ([0-9])/3 strategies\))");
    std::set<std::string> names, counts;
    for (const std::string& l : lines(p.err)) {
      std::smatch m;
      if (std::regex_match(l, m, line)) {
        names.insert(m[1]);
        counts.insert(m[2]);
      } else {
        EXPECT_EQ(l.rfind("plan --all: ", 0), 0u) << "not a progress line: " << l;
      }
    }
    EXPECT_EQ(names, (std::set<std::string>{"window", "two-level", "budget"})) << p.err;
    EXPECT_EQ(counts, (std::set<std::string>{"1", "2", "3"})) << p.err;
    EXPECT_EQ(p.out.find("plan --all:"), std::string::npos) << "progress belongs on stderr";
  }
}

TEST_F(CliPlan, SummaryIsTheParetoFrontOfPeakLiveAgainstRecomputeCost) {
  const Proc p = sh(kPlan + " --max-segments 8 --json");
  ASSERT_EQ(p.code, 0) << p.err;
  const size_t rowsAt = p.out.find("\"rows\":["), frontAt = p.out.find("\"pareto_front\":[");
  ASSERT_NE(rowsAt, std::string::npos);
  ASSERT_NE(frontAt, std::string::npos) << p.out.substr(0, 400);
  std::vector<Point> all = points(p.out, rowsAt, frontAt, true);
  ASSERT_EQ(all.size(), 11u * 7u);
  const size_t plainAt = p.out.find("\"plain\":{");
  all.push_back({"plain", 1, 1, static_cast<int>(numberAfter(p.out, "peak_live", plainAt)),
                 numberAfter(p.out, "recompute_cost", plainAt)});
  const std::vector<Point> front = points(p.out, frontAt, std::string::npos, false);
  ASSERT_GE(front.size(), 3u) << "a front, not one number";
  ASSERT_LT(front.size(), all.size()) << "some plan of asian-20 is dominated";
  for (size_t i = 0; i < front.size(); ++i) {
    const Point& f = front[i];
    bool listed = false;
    for (const Point& r : all) {
      EXPECT_FALSE(dominates(r, f)) << r.strategy << " " << r.requested << " dominates front entry " << f.strategy;
      listed = listed || (samePoint(r, f) && r.requested == f.requested);
    }
    EXPECT_TRUE(listed) << f.strategy << " " << f.requested << " is not a row";
    if (i > 0) {
      EXPECT_LE(front[i - 1].peakLive, f.peakLive) << "by peak_live";
    }
  }
  size_t undominated = 0;
  for (const Point& r : all) {
    bool dominated = false;
    for (const Point& q : all) dominated = dominated || dominates(q, r);
    if (dominated) continue;
    ++undominated;
    bool onFront = false;
    for (const Point& f : front) onFront = onFront || samePoint(f, r);
    EXPECT_TRUE(onFront) << r.strategy << " " << r.requested << " is dominated by no plan but not on the front";
  }
  EXPECT_GE(undominated, front.size());
  EXPECT_EQ(front.back().strategy, "plain") << "the plain kernel recomputes nothing: always on the front, last";

  // The table prints the same front, in the same order, under its heading.
  const Proc text = sh(kPlan + " --max-segments 8");
  ASSERT_EQ(text.code, 0) << text.err;
  const size_t heading = text.out.find("Pareto front of peak_live against weighted recompute_cost");
  ASSERT_NE(heading, std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("least peak_live"), std::string::npos);
  std::vector<std::pair<std::string, int>> printed;
  for (const std::string& l : lines(text.out.substr(heading))) {
    const auto w = words(l);
    if (w.size() == 6 && w[1] != "requested" && w[0][0] != '-') printed.emplace_back(w[0], std::stoi(w[1]));
  }
  ASSERT_EQ(printed.size(), front.size()) << text.out.substr(heading);
  for (size_t i = 0; i < front.size(); ++i) {
    EXPECT_EQ(printed[i].first, front[i].strategy);
    EXPECT_EQ(printed[i].second, front[i].requested);
  }
}
