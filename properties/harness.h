// Running rapidcheck properties inside GoogleTest, per engine, on a budget.
//
// Every engine property is a value-parameterised test over the engine
// registry (api/registry.h): an engine that is not built or not runnable here
// prints "SKIP <engine>: <reason>" and is reported as skipped, so a new engine
// is covered as soon as it is registered.
//
// Seeds and counts: each (property, engine) pair runs a fixed number of cases
// (its budget, below) from a fixed seed derived from the property's name and
// TAPELAB_PROPERTY_SEED (default 20240917; RC_PARAMS="seed=..." also works).
// TAPELAB_PROPERTY_RUNS multiplies every case count (long runs). At the end of
// each test one line "COUNT <test> engine=<e> tapes=<n> kernels=<k> ..." says
// what it saw. A failure prints the seed, rapidcheck's shrunk counterexample
// (tapes in the .tape format), and writes the shrunk tape to
// $TAPELAB_PROPERTY_FAILURES (default <build>/properties/failures/<test>.tape).
#pragma once
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <functional>
#include <sstream>
#include <ostream>
#include <string>
#include <vector>

#include "api/registry.h"
#include "engine/engine.h"
#include "tests/common/test_util.h"
#include "tape/tape.h"

namespace tapelab {
void showValue(KernelKind k, std::ostream& os);
void showValue(Precision p, std::ostream& os);
}  // namespace tapelab

namespace tapelab::props {

// Cost classes: how many cases and how large, per engine.
enum class EngineClass { Interpreted, Multiprecision, Compiled };
EngineClass engineClass(const std::string& engine);
// CPU engines: their results must not depend on EngineSettings::threads.
bool isCpuEngine(const std::string& engine);

struct Budget {
  int cases;          // rapidcheck cases for this property on this engine
  int maxNodes;       // tape steps at the largest size
  uint64_t maxPaths;  // paths per run
};
// `baseCases` is the count for an interpreted engine; multiprecision runs a
// quarter, compiled engines (cpu-jit, GPUs: compile time dominates) a quarter
// (at least 3); all times TAPELAB_PROPERTY_RUNS.
Budget budget(const std::string& engine, int baseCases);
int propertyRuns();

// What the current engine property may use; empty name = skipped.
struct EngineUnderTest {
  std::string name;
  EngineCaps caps;
  std::vector<Precision> precisions;  // those caps says it supports
};
// Any kernel the engine offers: plain, or checkpointed with a random plan.
KernelOptions anyKernel(const Tape& tape, const EngineUnderTest& e, Precision p);

// Usable-and-runnable check: prints "SKIP <engine>: <reason>" and returns false otherwise.
bool runnable(const std::string& engine, EngineUnderTest& out);

// Counters the COUNT line reports; reset by checkProperty.
struct Counters {
  int64_t tapes = 0;      // property cases that passed
  int64_t kernels = 0;    // kernels compiled
  int64_t nested = 0;     // of those, kernels of a nested (multi-level) plan
  int64_t runs = 0;       // kernel runs
  int64_t compared = 0;   // numbers compared (bits or tolerance)
  int64_t unchecked = 0;  // numbers whose tolerance was unbounded (weak cases)
  int64_t nanBits = 0;    // NaN == NaN accepted with different sign or payload bits
};
Counters& counters();

// Runs `body` as a rapidcheck property with `cases` cases from this test's
// seed; on failure, fails the current GoogleTest test with the counterexample.
void checkProperty(const std::string& engine, int cases, const std::function<void()>& body);
// The tape the current case tests: written to a file when the case fails.
void noteTape(const Tape& tape);
// The run the current case makes, logged for the failure report ("paths N, seed S,
// inputs {...}; <kernel>"); the failing tape is written with markets[0] as its
// input values and a "# replay: paths=N seed=S" line (what tests/data/regressions
// reads), so `tapelab run FILE --paths N --seed S` replays it.
void noteRun(uint64_t paths, uint64_t seed, const std::vector<std::vector<double>>& markets,
             const std::string& kernel = "");
// RC_LOG plus a copy the harness keeps for a failure whose shrinking it stops.
void caseLog(const std::string& line);
template <class... A>
void logCase(const A&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  caseLog(os.str());
}

// Compiles through `engine` made with `settings` (counted); a fresh Engine
// object each call. While a failure is being shrunk, a kernel compiled for the
// same (tape, options) earlier is reused unless `fresh`.
std::shared_ptr<Kernel> compileOn(const std::string& engine, const Tape& tape, const KernelOptions& o,
                                  bool fresh = false, const EngineSettings& settings = engineSettingsFromEnvironment());
RunResult runKernel(Kernel& k, const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed);

// Bit-for-bit comparison. On a difference, fails the rapidcheck case with
// both numbers (17 digits and hex bits) and `what`, which says which run is
// first ("plain then register ..."). NaN matches NaN whatever its sign and
// payload (counted as nanbits), because compilers may legally rewrite
// x + (-y) as x - y, which flips a NaN's sign; TAPELAB_PROPERTY_NAN_BITS=1
// compares NaN bit patterns too.
using testutil::describe;       // 17 digits and the bit pattern
using testutil::identicalBits;  // strictly the same bits, NaN payloads too
bool bitsMatch(double x, double y);  // the exactness rule above (counts compared and nanbits)
void assertSameBits(const RunResult& x, const RunResult& y, const std::string& what);
void assertSameBits(const MarketResult& x, const MarketResult& y, const std::string& what);

}  // namespace tapelab::props

// Value-parameterised over the engine registry.
#define TAPELAB_ENGINE_SUITE(Suite)                                                                       \
  INSTANTIATE_TEST_SUITE_P(Engines, Suite, ::testing::ValuesIn(::tapelab::engineNames()), \
                           ::tapelab::testutil::engineParamName)
