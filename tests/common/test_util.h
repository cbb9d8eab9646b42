// Helpers shared by the tests (tests/*/test_*.cpp) and the properties.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "engine/engine.h"
#include "engine/settings.h"
#include "planner/plan.h"
#include "planner/strategies.h"

namespace tapelab::testutil {

// Sets an environment variable for the scope (nullptr: unsets it) and restores
// the old value after. Engine knobs (TAPELAB_THREADS, TAPELAB_MAX_GROUPS, ...)
// are read at compile or run time, so tests and properties turn them this way.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value) ::setenv(name_.c_str(), value, 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(std::string name, const std::string& value) : ScopedEnv(std::move(name), value.c_str()) {}
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A fresh, empty folder under the system's temporary directory for the scope (removed after, with
// whatever it holds): `name` plus this process's id, so concurrent test processes do not share one.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A test parameter name for an engine ("reference-f32" -> "reference_f32"): for
// suites instantiated over the engine registry.
inline std::string engineParamName(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// The caps of the engine `make` makes, or unusable with its exception as the
// reason: engineCaps' rule (api/registry.cpp), for tests of one backend that
// make it by its factory rather than through the registry.
template <class Factory>
EngineCaps capsOf(Factory make, const EngineSettings& settings) {
  try {
    return make(settings)->caps();
  } catch (const std::exception& ex) {
    EngineCaps c;
    c.usable = false;
    c.reason = ex.what();
    return c;
  }
}

// 17 significant digits: enough to tell any two doubles apart in a failure message.
inline std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// 17 digits and the bit pattern: for messages about bits.
inline std::string describe(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g (0x%016llx)", v, static_cast<unsigned long long>(std::bit_cast<uint64_t>(v)));
  return buf;
}

// The project's exactness: the same bits (+0 and -0 differ), except that any NaN
// equals any NaN. IEEE leaves open the sign and payload of a NaN an operation
// makes, and a compiler may swap the operands of a commutative one.
inline bool identicalBits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }
inline bool sameBits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return identicalBits(a, b);
}

// Value, every Greek and every standard error of one market.
inline void expectSameMarket(const MarketResult& a, const MarketResult& b, const std::string& what) {
  EXPECT_PRED2(sameBits, a.value, b.value) << what << ": value " << describe(a.value) << " vs " << describe(b.value);
  EXPECT_PRED2(sameBits, a.valueStderr, b.valueStderr)
      << what << ": value stderr " << describe(a.valueStderr) << " vs " << describe(b.valueStderr);
  ASSERT_EQ(a.greeks.size(), b.greeks.size()) << what;
  ASSERT_EQ(a.greeksStderr.size(), b.greeksStderr.size()) << what;
  for (size_t k = 0; k < a.greeks.size(); ++k) {
    EXPECT_PRED2(sameBits, a.greeks[k], b.greeks[k])
        << what << ": greek " << k << " " << describe(a.greeks[k]) << " vs " << describe(b.greeks[k]);
    EXPECT_PRED2(sameBits, a.greeksStderr[k], b.greeksStderr[k])
        << what << ": greek stderr " << k << " " << describe(a.greeksStderr[k]) << " vs " << describe(b.greeksStderr[k]);
  }
}

// Every market of two runs.
// Compiles `o` on `engine` with its source dumped under the test's temporary directory (folder
// `name`) and returns that source; empty, with a failure, when the engine wrote none.
inline std::string dumpedSource(Engine& engine, const Tape& tape, KernelOptions o, const std::string& name) {
  o.dumpDir = ::testing::TempDir() + name;
  const std::string path = engine.compile(tape, o)->stats().sourcePath;
  EXPECT_FALSE(path.empty()) << name << ": the engine dumped no source";
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline void expectSameBits(const RunResult& x, const RunResult& y, const std::string& what) {
  ASSERT_EQ(x.markets.size(), y.markets.size()) << what;
  for (size_t m = 0; m < x.markets.size(); ++m)
    expectSameMarket(x.markets[m], y.markets[m], what + ", market " + std::to_string(m));
}

// Kernel options of one kind for a tape: plain; register with `registerSegments`
// segments, window strategy; scratch with uniform segments of `segLen` nodes.
inline KernelOptions kindOptions(const Tape& tape, KernelKind kind, int registerSegments, int segLen = 0,
                                 ScratchLayout layout = ScratchLayout::SoA, int markets = 1,
                                 Precision precision = Precision::F32) {
  KernelOptions o;
  o.precision = precision;
  o.kind = kind;
  o.config.layout = layout;
  o.markets = markets;
  PlanOptions po;
  if (kind == KernelKind::Plain) {
    o.plan = plainPlan(tape);
  } else if (kind == KernelKind::Register) {
    po.segments = registerSegments;
    o.plan = makeStrategyPlan("window", tape, po);
  } else {
    po.segLen = segLen;
    o.plan = makeStrategyPlan("uniform", tape, po);
  }
  return o;
}

}  // namespace tapelab::testutil
