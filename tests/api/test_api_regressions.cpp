// Every tape under tests/data/regressions once made a checkpointed (or a
// value-only) kernel return other bits than the plain kernel of its engine.
// Each must now agree on every usable engine, for every checkpointed kind the
// engine has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "api/registry.h"
#include "planner/strategies.h"
#include "tape/textformat.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

// The checkout; TAPELAB_SOURCE_DIR in the environment overrides the configured one
// (a packed binary run from another copy of the tree, as on the lent GPU machine).
std::filesystem::path regressionDir() {
  const char* env = std::getenv("TAPELAB_SOURCE_DIR");
  return std::filesystem::path(env && *env ? env : TAPELAB_SOURCE_DIR) / "tests" / "data" / "regressions";
}
constexpr uint64_t kSeed = 8546498413324420625ull;  // the seed the first of them failed with
constexpr uint64_t kPaths = 61;

std::vector<std::filesystem::path> regressionTapes() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(regressionDir()))
    if (e.path().extension() == ".tape") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Paths and seed of the failing case, from a "# replay: paths=N seed=S" line
// (inputs are the tape's own values); else 61 paths and kSeed.
std::pair<uint64_t, uint64_t> replayOf(const std::filesystem::path& file) {
  std::ifstream f(file);
  std::string line;
  uint64_t paths = kPaths, seed = kSeed;
  while (std::getline(f, line)) {
    unsigned long long p = 0, s = 0;
    if (std::sscanf(line.c_str(), "# replay: paths=%llu seed=%llu", &p, &s) == 2) {
      paths = p;
      seed = s;
    }
  }
  return {paths, seed};
}

class Regressions : public ::testing::TestWithParam<std::string> {};

TEST_P(Regressions, CheckpointedEqualsPlain) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable || caps.compileOnly) GTEST_SKIP() << entry.name << " cannot run here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Precision prec = caps.defaultPrecision;
  int compared = 0;
  for (const auto& file : regressionTapes()) {
    const Tape tape = readTapeFile(file.string());
    SCOPED_TRACE(file.filename().string());
    const auto [paths, seed] = replayOf(file);
    const std::vector<std::vector<double>> in{tape.inputDefaults};
    KernelOptions plain;
    plain.precision = prec;
    const MarketResult p = engine->compile(tape, plain)->run(in, paths, seed).markets.at(0);
    KernelOptions valueOnly = plain;
    valueOnly.greeks = false;
    const MarketResult v = engine->compile(tape, valueOnly)->run(in, paths, seed).markets.at(0);
    MarketResult pv = p, vv = v;  // the value-only kernel has no Greeks: compare value and stderr
    pv.greeks.clear(), pv.greeksStderr.clear(), vv.greeks.clear(), vv.greeksStderr.clear();
    testutil::expectSameMarket(pv, vv, "Greeks kernel then value-only kernel");
    for (KernelKind kind : caps.kinds) {
      if (kind == KernelKind::Plain || kind == KernelKind::Tangent) continue;  // tangent: test_api_tangent.cpp (value bits only)
      for (const char* strategy : {"uniform", "window"}) {
        for (int segments : {2, 16}) {
          if (segments >= static_cast<int>(tape.size())) continue;
          PlanOptions po;
          po.segments = segments;
          KernelOptions o = plain;
          o.kind = kind;
          o.plan = makeStrategyPlan(strategy, tape, po);
          const std::string what = std::string(toString(kind)) + " " + strategy + "/" + std::to_string(segments);
          testutil::expectSameMarket(p, engine->compile(tape, o)->run(in, paths, seed).markets.at(0), what);
          ++compared;
        }
      }
    }
  }
  ASSERT_FALSE(regressionTapes().empty()) << "no .tape under " << regressionDir();
  std::cout << entry.name << ": " << compared << " checkpointed kernels compared with plain" << std::endl;
  EXPECT_GT(compared, 0);
}

std::vector<std::string> enginesButMp() {  // every engine but reference-mp (the multiprecision interpreter)
  std::vector<std::string> out = engineNames();
  std::erase(out, "reference-mp");
  return out;
}

INSTANTIATE_TEST_SUITE_P(Engines, Regressions, ::testing::ValuesIn(enginesButMp()), testutil::engineParamName);

}  // namespace
