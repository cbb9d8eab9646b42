// Helpers shared by tests/test_cpujit_*.cpp.
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

#include "api/engine.h"
#include "api/registry.h"

namespace cpujit_test {

using namespace tapelab;

inline std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

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
    const EngineCaps caps_ = engineCaps(findEngine("cpu-jit"));                \
    if (!caps_.usable) GTEST_SKIP() << "cpu-jit not usable: " << caps_.reason; \
  } while (0)

inline std::unique_ptr<Engine> jit() { return findEngine("cpu-jit").make(); }

struct Job {
  const Tape* tape;
  KernelOptions options;
};

// Compiles every job, as many at a time as there are cores (compiles are
// seconds each; the tests' time is mostly this).
inline std::vector<std::unique_ptr<Kernel>> compileAll(const std::string& engine, const std::vector<Job>& jobs) {
  std::vector<std::unique_ptr<Kernel>> out(jobs.size());
  const size_t width = std::max(1u, std::thread::hardware_concurrency());
  for (size_t lo = 0; lo < jobs.size(); lo += width) {
    std::vector<std::future<std::unique_ptr<Kernel>>> wave;
    for (size_t i = lo; i < std::min(jobs.size(), lo + width); ++i)
      wave.push_back(std::async(std::launch::async, [&engine, &jobs, i] {
        return findEngine(engine).make()->compile(*jobs[i].tape, jobs[i].options);
      }));
    for (size_t i = 0; i < wave.size(); ++i) out[lo + i] = wave[i].get();
  }
  return out;
}

// The same bits (so +0 and -0 differ), except that any NaN equals any NaN:
// IEEE leaves open which operand's NaN an operation propagates, and a
// compiler may swap the operands of a commutative one.
inline bool sameBits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// Value, every Greek and every standard error.
inline void expectSameBits(const RunResult& x, const RunResult& y, const std::string& what) {
  ASSERT_EQ(x.markets.size(), y.markets.size()) << what;
  for (size_t m = 0; m < x.markets.size(); ++m) {
    const MarketResult &a = x.markets[m], &b = y.markets[m];
    EXPECT_PRED2(sameBits, a.value, b.value) << what << " market " << m << ": " << g17(a.value) << " vs " << g17(b.value);
    EXPECT_PRED2(sameBits, a.valueStderr, b.valueStderr) << what << " market " << m << " stderr";
    ASSERT_EQ(a.greeks.size(), b.greeks.size()) << what;
    for (size_t k = 0; k < a.greeks.size(); ++k) {
      EXPECT_PRED2(sameBits, a.greeks[k], b.greeks[k])
          << what << " market " << m << " greek " << k << ": " << g17(a.greeks[k]) << " vs " << g17(b.greeks[k]);
      EXPECT_PRED2(sameBits, a.greeksStderr[k], b.greeksStderr[k]) << what << " market " << m << " greek stderr " << k;
    }
  }
}

}  // namespace cpujit_test
