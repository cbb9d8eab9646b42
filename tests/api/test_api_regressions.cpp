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
#include "gpu/codegen/emit.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tape/recorder.h"
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

// The compiler's rewrites that promise the same bits, each off against on: config first_terms
// (gpu/codegen/first_terms.h: an adjoint declared with its first term differs only in the sign of a zero
// adjoint, which no result reads) and config loads_ahead at markets and loops (gpu/codegen/loads_ahead.h:
// reads one market or one trip ahead, the same elements) and config workgroup_rows (gpu/codegen/workgroup_rows.h:
// the same elements in workgroup memory; CUDA and HIP only, so timed on a lent GPU) and config market_unroll
// (the market loops unrolled by the kernel compiler, by two and whole: the same statements), config
// loads_ahead=prefetch (the stored draws prefetched: no value read differently) and config
// rolled_adjoints (the rolled trips' crossing adjoints in fixed rows, copied: the same values). Every regression tape and wild random tapes (NaN, Inf, signed
// zeros) at one market and two (the market loop), plain and register kernels, and the Asian at three markets
// with its segments rolled around the market loop: the same bits, +0 and -0 told apart; and each rewrite
// changes the Asian's kernel.
TEST_P(Regressions, BitKeepingRewritesKeepTheBits) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  const ConfigField* field = findConfigField("first_terms");
  ASSERT_NE(field, nullptr);
  if (!fieldAppliesTo(*field, entry.name)) GTEST_SKIP() << entry.name << " writes no GPU kernels: the rewrites do not apply";
  if (!caps.usable || caps.compileOnly) GTEST_SKIP() << entry.name << " cannot run here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Dialect& dialect = dialectByName(entry.name == "vulkan" ? "glsl" : entry.name);
  std::vector<std::pair<std::string, Tape>> tapes;
  for (const auto& file : regressionTapes()) tapes.emplace_back(file.filename().string(), readTapeFile(file.string()));
  {  // a first term of -0: d/dx of x * -0 is 1 * -0, which 0 + t would have made +0
    Recorder rec;
    const Var x = rec.input("x", 1.5), y = rec.input("y", 0.5);
    rec.output(x * -0.0 + y * rec.randn(0));
    tapes.emplace_back("x * -0 + y z", rec.finish());
  }
  for (uint64_t seed : {11u, 12u, 13u, 14u}) {
    RandomTapeOptions ro;
    ro.nodes = 160;
    ro.wellConditioned = false;
    tapes.emplace_back("wild random tape " + std::to_string(seed), randomTape(seed, ro));
  }
  struct Rewrite {
    const char *name, *off, *on;
  };
  const Rewrite rewrites[] = {{"first_terms", "add", "set"},
                              {"loads_ahead", "off", "on"},
                              {"loads_ahead", "off", "loops"},
                              {"loads_ahead", "on", "rows"},
                              {"loads_ahead", "on", "prefetch"},
                              {"workgroup_rows", "0", "64"},
                              {"market_unroll", "1", "2"},
                              {"market_unroll", "1", "whole"},
                              {"rolled_adjoints", "parity", "copy"}};
  int compared = 0;
  for (const Rewrite& rewrite : rewrites) {
    const char *name = rewrite.name, *offValue = rewrite.off, *onValue = rewrite.on;  // clang: no lambda capture of a binding
    const ConfigField& f = *findConfigField(name);
    if (!fieldAppliesTo(f, entry.name)) continue;  // loads_ahead: not Vulkan; workgroup_rows: CUDA, HIP (engine/config.cpp)
    // The tape's kernel of options o at `markets` with the rewrite off and on: the same bits. The sources.
    auto compare = [&](const Tape& tape, KernelOptions o, int markets, const std::string& what) {
      std::vector<std::vector<double>> in(static_cast<size_t>(markets), tape.inputDefaults);
      for (int m = 1; m < markets; ++m) in[m][0] *= 1.0 + 0.05 * m;
      o.markets = markets;
      o.config = defaultConfig(entry.name, false, markets);
      f.set(o.config, offValue, name);
      KernelOptions on = o;
      f.set(on.config, onValue, name);
      testutil::expectSameBits(engine->compile(tape, o)->run(in, 61, kSeed), engine->compile(tape, on)->run(in, 61, kSeed),
                               what + ": " + name + " " + offValue + " then " + onValue);
      ++compared;
      return std::make_pair(emitKernel(tape, o, dialect).source, emitKernel(tape, on, dialect).source);
    };
    for (const auto& [tapeName, tape] : tapes) {
      KernelOptions plain;
      plain.precision = caps.defaultPrecision;
      compare(tape, plain, 1, tapeName + " plain");
      if (tape.size() < 3) continue;
      PlanOptions po;
      po.segments = 2;
      KernelOptions reg = plain;
      reg.kind = KernelKind::Register;
      reg.plan = makeStrategyPlan("window", tape, po);
      for (int markets : {1, 2}) compare(tape, reg, markets, tapeName + " register window/2 x" + std::to_string(markets));
    }
    const Tape asian = products::asianCall(24);
    KernelOptions reg;
    reg.precision = caps.defaultPrecision;
    reg.kind = KernelKind::Register;
    PlanOptions po;
    po.segments = 6;
    reg.plan = makeStrategyPlan("periodic", asian, po);
    for (int k = 1; k < asian.numInputs(); ++k) reg.sharedInputs.push_back(k);
    const auto [off, on] = compare(asian, reg, 3, "asian-24 register periodic/6, 3 markets");
    EXPECT_NE(off, on) << name << "=" << onValue << ": the rewrite left the Asian's 3-market register kernel as it was";
  }
  if (fieldAppliesTo(*findConfigField("loads_ahead"), entry.name)) {  // loops rotates more than the market loops
    const Tape asian = products::asianCall(24);
    KernelOptions reg;
    reg.kind = KernelKind::Register;
    reg.markets = 3;
    PlanOptions po;
    po.segments = 6;
    reg.plan = makeStrategyPlan("periodic", asian, po);
    reg.config = defaultConfig(entry.name, false, 3);
    reg.config.loadsAhead = AheadLoads::Markets;
    KernelOptions loops = reg;
    loops.config.loadsAhead = AheadLoads::Loops;
    EXPECT_NE(emitKernel(asian, reg, dialect).source, emitKernel(asian, loops, dialect).source)
        << "loads_ahead=loops rotated nothing the market loops had not";
  }
  std::cout << entry.name << ": " << compared << " kernel pairs compared, each rewrite off and on" << std::endl;
}

std::vector<std::string> enginesButMp() {  // every engine but reference-mp (the multiprecision interpreter)
  std::vector<std::string> out = engineNames();
  std::erase(out, "reference-mp");
  return out;
}

INSTANTIATE_TEST_SUITE_P(Engines, Regressions, ::testing::ValuesIn(enginesButMp()), testutil::engineParamName);

}  // namespace
