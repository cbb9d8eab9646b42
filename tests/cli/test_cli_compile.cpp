// --compile-timeout through the binary (engine/compile_watch.h): a compile past it is one line and
// exit 1, soon after the limit, on cpu-jit (its compiler process ended) and on the in-process
// compilers here (PoCL's build, lavapipe's pipeline: left on their thread, the process leaving
// through _Exit, no signal death); the variable works as the flag, and a bad value is exit 2.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>

#include "tests/cli/cli_process.h"

using namespace tapelab::clitest;

namespace {

// A fresh cache each time: the compile is real, never a hit.
std::string coldCache() { return "TAPELAB_CACHE_DIR='" + tempPath("cache") + "'"; }

}  // namespace

TEST(CliCompile, ACompilePastTheLimitIsOneLineAndExit1OnEveryCompilingEngine) {
  for (const std::string engine : {"cpu-jit", "opencl", "vulkan"}) {
    SCOPED_TRACE(engine);
    const auto t0 = std::chrono::steady_clock::now();
    const Proc p = runTapelab("price --product hestonbasket --assets 3 --steps 12 --paths 64 --engine " + engine +
                                  " --compile-timeout 0.05",
                              coldCache());
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (p.code == 3) {
      std::cout << engine << ": not usable here, skipped: " << p.err;
      continue;
    }
    EXPECT_EQ(p.code, 1) << p.err;
    EXPECT_EQ(p.err.rfind("tapelab: " + engine + ": compiling the ", 0), 0u) << p.err;
    EXPECT_NE(p.err.find(" kernel of hestonbasket-3x12 ("), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("took longer than --compile-timeout 0.05 s (TAPELAB_COMPILE_TIMEOUT; 0 = no limit)\n"),
              std::string::npos) << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
    EXPECT_LT(took, 30) << engine;
  }
}

TEST(CliCompile, TheVariableIsTheFlagsAndABadValueIsExit2) {
  const Proc v = runTapelab("price --product asian --steps 8 --paths 64 --engine cpu-jit",
                            coldCache() + " TAPELAB_COMPILE_TIMEOUT=0.01");
  EXPECT_EQ(v.code, 1) << v.err;
  EXPECT_NE(v.err.find("--compile-timeout 0.01 s"), std::string::npos) << v.err;
  // The flag beats the variable: no limit, a normal run.
  const Proc f = runTapelab("price --product asian --steps 8 --paths 64 --engine cpu-jit --compile-timeout 0",
                            coldCache() + " TAPELAB_COMPILE_TIMEOUT=0.01");
  EXPECT_EQ(f.code, 0) << f.err;
  const Proc bad = runTapelab("price --product asian --compile-timeout soon");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "tapelab: --compile-timeout: expected seconds, a decimal from 0 (no limit) to 1e9, got 'soon'\n");
}
