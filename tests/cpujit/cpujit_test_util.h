// Helpers shared by tests/cpujit/test_cpujit_*.cpp.
#pragma once
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/knobs.h"
#include "engine/engine.h"
#include "reference/cpujit/cpujit.h"
#include "tests/common/test_util.h"

namespace cpujit_test {

using namespace tapelab;
using testutil::expectSameBits;
using testutil::g17;
using testutil::sameBits;

using testutil::ScopedEnv;

// Kernels compiled by the tests go to the build tree's cache (kept between
// runs, so a second `ctest` compiles nothing), unless the caller chose one.
inline void useBuildCache() {
  static const bool once = [] {
    if (!std::getenv("TAPELAB_CACHE_DIR")) setenv("TAPELAB_CACHE_DIR", TAPELAB_BINARY_DIR "/cpujit-cache", 1);
    return true;
  }();
  (void)once;
}

// Skips the test when cpu-jit cannot run here (no compiler), with the reason.
#define CPUJIT_REQUIRE()                                                       \
  do {                                                                         \
    cpujit_test::useBuildCache();                                              \
    const EngineCaps caps_ =                                                   \
        testutil::capsOf(makeCpuJitEngine, engineSettingsFromEnvironment());   \
    if (!caps_.usable) GTEST_SKIP() << "cpu-jit not usable: " << caps_.reason; \
  } while (0)

// The engine with the environment's settings (the build cache above), or with `settings`.
inline std::unique_ptr<Engine> jit() { return makeCpuJitEngine(engineSettingsFromEnvironment()); }
inline std::unique_ptr<Engine> jit(const EngineSettings& settings) { return makeCpuJitEngine(settings); }

struct Job {
  const Tape* tape;
  KernelOptions options;
};

// Compiles every job on cpu-jit, as many at a time as there are cores
// (compiles are seconds each; the tests' time is mostly this).
inline std::vector<std::unique_ptr<Kernel>> compileAll(const std::vector<Job>& jobs,
                                                       const EngineSettings& settings = engineSettingsFromEnvironment()) {
  std::vector<std::unique_ptr<Kernel>> out(jobs.size());
  const size_t width = std::max(1u, std::thread::hardware_concurrency());
  for (size_t lo = 0; lo < jobs.size(); lo += width) {
    std::vector<std::future<std::unique_ptr<Kernel>>> wave;
    for (size_t i = lo; i < std::min(jobs.size(), lo + width); ++i)
      wave.push_back(std::async(std::launch::async, [&jobs, &settings, i] {
        return makeCpuJitEngine(settings)->compile(*jobs[i].tape, jobs[i].options);
      }));
    for (size_t i = 0; i < wave.size(); ++i) out[lo + i] = wave[i].get();
  }
  return out;
}

}  // namespace cpujit_test
