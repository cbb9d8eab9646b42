// The hip engine: listed with the reason it cannot run; the HIP source is
// emitted (and dumped) either way; where hipcc exists, every kind compiles for
// every target and a kernel says why it cannot run without an AMD GPU; where
// one is present, kernels run and checkpointed ones return plain's bits.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "api/knobs.h"
#include "gpu/hip/compiler.h"
#include "gpu/hip/hip.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tests/common/reference_engines.h"
#include "tests/common/test_util.h"

using namespace tapelab;

TEST(HipEngine, SaysWhatItCanDoHere) {
  const EngineCaps caps = testutil::capsOf(makeHipEngine, engineSettingsFromEnvironment());
  if (caps.usable) GTEST_SKIP() << "an AMD GPU is here: " << caps.reason;
  if (hip::toolchain().ok) {
    EXPECT_TRUE(caps.compileOnly) << caps.reason;
    EXPECT_NE(caps.reason.find("compile-only: hipcc"), std::string::npos) << caps.reason;
    for (const std::string& target : hip::parseTargets(engineSettingsFromEnvironment().hip.arch))
      EXPECT_NE(caps.reason.find(target), std::string::npos) << caps.reason;
  } else {
    EXPECT_FALSE(caps.compileOnly);
    EXPECT_NE(caps.reason.find("hipcc not found"), std::string::npos) << caps.reason;
  }
}

TEST(HipEngine, ABadTargetListIsNamed) {
  EngineSettings s = engineSettingsFromEnvironment();
  s.hip.arch = "gfx1103,sm_90";
  auto engine = makeHipEngine(s);
  EXPECT_NE(engine->caps().reason.find("TAPELAB_HIP_ARCH"), std::string::npos) << engine->caps().reason;
  const Tape t = products::asianCall(4);
  try {
    engine->compile(t, testutil::kindOptions(t, KernelKind::Plain, 1));
    FAIL() << "compiled for sm_90";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'sm_90'"), std::string::npos) << e.what();
  }
}

TEST(HipEngine, EmitsTheSourceAndCompilesWhereHipccExists) {
  auto engine = makeHipEngine(engineSettingsFromEnvironment());
  const EngineCaps caps = engine->caps();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tapelab-hip-dump-" + std::to_string(::getpid()));
  const Tape t = products::asianCall(8);
  KernelOptions o;
  o.precision = Precision::F32;
  o.kind = KernelKind::Scratch;
  o.config.layout = ScratchLayout::SoA;
  PlanOptions po;
  po.segLen = 20;
  o.plan = makeStrategyPlan("uniform", t, po);
  o.dumpDir = dir.string();
  if (caps.compileOnly || caps.usable) {
    auto k = engine->compile(t, o);
    const KernelStats s = k->stats();
    EXPECT_GE(s.registers, 1);
    EXPECT_EQ(s.spillBytes, 0) << s.notes;
    EXPECT_NE(s.notes.find("waves/SIMD"), std::string::npos) << s.notes;
    if (!caps.usable) {
      try {
        k->run({t.inputDefaults}, 100, 1);
        FAIL() << "ran without an AMD GPU";
      } catch (const EngineUnavailable& e) {
        EXPECT_NE(std::string(e.what()).find("compile-only"), std::string::npos) << e.what();
      }
    }
  } else {
    try {
      engine->compile(t, o);
      FAIL() << "compiled without hipcc";
    } catch (const EngineUnavailable& e) {
      EXPECT_NE(std::string(e.what()).find("source written to"), std::string::npos) << e.what();
    }
  }
  bool found = false;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(f.path());
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    found |= f.path().extension() == ".hip" && text.find("__global__") != std::string::npos &&
             text.find("-ffp-contract=off") != std::string::npos;
  }
  EXPECT_TRUE(found) << "the HIP source should be dumped to " << dir;
  std::filesystem::remove_all(dir);
}

// On an AMD GPU: every kind returns plain's bits, several markets per dispatch
// equal one at a time, and the value is close to the reference's.
class HipRun : public ::testing::Test {
 protected:
  void SetUp() override {
    const EngineCaps caps = testutil::capsOf(makeHipEngine, engineSettingsFromEnvironment());
    if (!caps.usable) GTEST_SKIP() << "hip cannot run here: " << caps.reason;
    engine_ = makeHipEngine(engineSettingsFromEnvironment());
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(HipRun, Asian60AllKindsBitExactAndNearTheReference) {
  const Tape t = products::asianCall(60);
  const RunResult plain = engine_->compile(t, testutil::kindOptions(t, KernelKind::Plain, 1))->run({t.inputDefaults}, 20000, 3);
  for (KernelKind kind : {KernelKind::Register, KernelKind::Scratch}) {
    const RunResult r = engine_->compile(t, testutil::kindOptions(t, kind, 8, 20))->run({t.inputDefaults}, 20000, 3);
    testutil::expectSameBits(plain, r, toString(kind));
  }
  KernelOptions ref;
  ref.precision = Precision::F64;
  const RunResult exact = testutil::makeReference("reference")->compile(t, ref)->run({t.inputDefaults}, 20000, 3);
  EXPECT_NEAR(plain.markets[0].value, exact.markets[0].value, 1e-3 * std::abs(exact.markets[0].value));
  const Tape t2 = products::asianCall(20);
  std::vector<std::vector<double>> markets;
  for (double spot : {90.0, 100.0, 110.0}) {
    std::vector<double> in = t2.inputDefaults;
    in[t2.inputIndex("spot")] = spot;
    markets.push_back(in);
  }
  const RunResult all =
      engine_->compile(t2, testutil::kindOptions(t2, KernelKind::Register, 4, 0, ScratchLayout::SoA, 3))->run(markets, 5000, 9);
  auto one = engine_->compile(t2, testutil::kindOptions(t2, KernelKind::Register, 4));
  for (size_t m = 0; m < markets.size(); ++m) {
    RunResult part = all;
    part.markets = {all.markets[m]};
    testutil::expectSameBits(one->run({markets[m]}, 5000, 9), part, "market " + std::to_string(m));
  }
}
