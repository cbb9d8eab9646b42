// The hip engine: listed with the reason it cannot run; the HIP source is
// emitted (and dumped) either way; where hipRTC exists, every kind compiles.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/knobs.h"
#include "gpu/hip/hip.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;

TEST(HipEngine, SaysWhyItCannotRun) {
  const EngineCaps caps = testutil::capsOf(makeHipEngine, engineSettingsFromEnvironment());
  EXPECT_FALSE(caps.usable) << "no AMD GPU is available to the project";
  EXPECT_NE(caps.reason.find("no AMD GPU"), std::string::npos) << caps.reason;
  if (!caps.compileOnly) {
    EXPECT_NE(caps.reason.find("no HIP toolchain"), std::string::npos) << caps.reason;
  }
}

TEST(HipEngine, EmitsTheSourceAndCompilesWhereHipRtcExists) {
  auto engine = makeHipEngine(engineSettingsFromEnvironment());
  const bool compiles = engine->caps().compileOnly;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tapelab-hip-dump-" + std::to_string(::getpid()));
  const Tape t = products::asianCall(8);
  KernelOptions o;
  o.precision = Precision::F32;
  o.kind = KernelKind::Scratch;
  o.layout = ScratchLayout::SoA;
  PlanOptions po;
  po.segLen = 20;
  o.plan = makeStrategyPlan("uniform", t, po);
  o.dumpDir = dir.string();
  if (compiles) {
    auto k = engine->compile(t, o);
    EXPECT_THROW(k->run({t.inputDefaults}, 100, 1), EngineUnavailable);
  } else {
    try {
      engine->compile(t, o);
      FAIL() << "compiled without a HIP toolchain";
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
