// Compiles that stay bounded (engine/compile_watch.h, issue 48): the watch's progress lines and its
// limit on its own, then every engine's compile under a limit too short for it, in a fresh cache:
// CompileTimeout, soon after the limit (a compiler process is ended, an in-process compiler left on
// its thread), and the engine compiles again afterwards. The reference interpreters compile nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "api/registry.h"
#include "engine/compile_watch.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Progress lines land here for the scope of a test.
struct CapturedProgress {
  std::mutex mu;
  std::vector<std::string> lines;
  CapturedProgress() {
    setCompileProgressSink([this](const std::string& l) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(l);
    });
  }
  ~CapturedProgress() { setCompileProgressSink(nullptr); }
};

}  // namespace

TEST(CompileWatch, SaysWhenACompileIsSlowAndWhenItEnds) {
  CapturedProgress progress;
  {
    CompileWatch w("cpu-jit", "the plain kernel of x", 3 << 20, 0, 0.05, 0.1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_GE(progress.lines.size(), 2u);
  EXPECT_EQ(progress.lines.front(), "cpu-jit: compiling the plain kernel of x (3.0 MB of source): 0.05 s so far");
  EXPECT_EQ(progress.lines.back().rfind("cpu-jit: the plain kernel of x: compile ended after 0.2", 0), 0u)
      << progress.lines.back();
  progress.lines.clear();
  { CompileWatch quick("cpu-jit", "y", 10, 0, 0.5, 1); }  // a fast compile says nothing
  EXPECT_TRUE(progress.lines.empty());
}

TEST(CompileWatch, RunsInlineOrOnAThreadAndStopsWaitingAtTheLimit) {
  CapturedProgress quiet;
  CompileWatch none("cuda", "k", 100, 0);
  EXPECT_EQ(none.run([] { return 7; }), 7);
  CompileWatch limited("cuda", "k", 100, 30);
  EXPECT_EQ(limited.run([] { return std::string("ptx"); }), "ptx");
  EXPECT_THROW(limited.run([]() -> int { throw std::runtime_error("nvrtc: error"); }), std::runtime_error);
  CompileWatch tight("cuda", "the register kernel of lmm-80", 2048, 0.1);
  const auto t0 = Clock::now();
  try {
    tight.run([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
      return 1;
    });
    FAIL() << "no CompileTimeout";
  } catch (const CompileTimeout& e) {
    EXPECT_STREQ(e.what(), "cuda: compiling the register kernel of lmm-80 (2 KB of source) took longer than "
                           "--compile-timeout 0.1 s (TAPELAB_COMPILE_TIMEOUT; 0 = no limit)");
  }
  EXPECT_LT(since(t0), 0.5);
  EXPECT_TRUE(compileAbandonedInProcess());
  EXPECT_TRUE(waitForAbandonedCompiles(10));
}

class CompileLimit : public ::testing::TestWithParam<std::string> {};

TEST_P(CompileLimit, EveryEngineStopsAtTheLimitAndCompilesAgainAfterwards) {
  const EngineEntry& entry = findEngine(GetParam());
  EngineSettings settings = engineSettingsFromEnvironment();
  const EngineCaps caps = engineCaps(entry, settings);
  if (!caps.usable && !caps.compileOnly) GTEST_SKIP() << entry.name << " is not usable here: " << caps.reason;
  const testutil::ScopedTempDir cache("tapelab-compile-limit-" + entry.name);
  settings.cacheDir = cache.path().string();  // every compile cold
  settings.compileTimeout = 0.02;
  CapturedProgress quiet;
  const Tape tape = products::byName("hestonbasket", products::ProductParams{{"assets", 3}, {"steps", 12}});
  KernelOptions o;
  o.precision = caps.defaultPrecision;
  const auto t0 = Clock::now();
  bool stopped = false;
  try {
    entry.make(settings)->compile(tape, o);
  } catch (const CompileTimeout& e) {
    stopped = true;
    EXPECT_NE(std::string(e.what()).find("the plain kernel of hestonbasket-3x12"), std::string::npos) << e.what();
  }
  const double took = since(t0);
  const bool compiles = entry.name.rfind("reference", 0) != 0;
  EXPECT_EQ(stopped, compiles) << entry.name;
  if (compiles) {
    // A compiler process is ended within its poll (0.1 s) and 2 s of SIGTERM grace; an in-process one
    // is waited for no longer than the limit (setting up a device or a context comes first).
    EXPECT_LT(took, 20.0) << entry.name;
    std::cout << entry.name << ": CompileTimeout after " << took << " s" << std::endl;
  }
  EXPECT_TRUE(waitForAbandonedCompiles(300));
  // No temporary file left in the cache: a compiler's output is registered and removed.
  for (const auto& f : std::filesystem::recursive_directory_iterator(cache.path()))
    EXPECT_EQ(f.path().string().find(".tmp"), std::string::npos) << f.path();
  // The same engine compiles again, without a limit (a lost device or context is replaced).
  settings.compileTimeout = 0;
  EXPECT_NO_THROW(entry.make(settings)->compile(products::byName("asian", products::ProductParams{{"steps", 4}}), o));
}

INSTANTIATE_TEST_SUITE_P(Engines, CompileLimit, ::testing::ValuesIn(engineNames()), testutil::engineParamName);
