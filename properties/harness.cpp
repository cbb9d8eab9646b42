#include "properties/harness.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "engine/tangent_chunks.h"
#include "properties/gen.h"
#include "tape/textformat.h"

namespace tapelab {
void showValue(KernelKind k, std::ostream& os) { os << toString(k); }
void showValue(Precision p, std::ostream& os) { os << toString(p); }
}  // namespace tapelab

namespace tapelab::props {

namespace {

constexpr uint64_t kDefaultSeed = 20240917;

std::optional<Tape> gCurrentTape, gFailingTape;
Counters gCounters;

// Shrinking a failure on a slow engine could take hours: once
// TAPELAB_PROPERTY_SHRINK_SECONDS (default 120) have passed since the first
// failure, the listener stops rapidcheck (ShrinkStopped) and the smallest
// failing case so far is reported from what the harness recorded of it.
struct ShrinkState {
  bool failed = false;
  std::chrono::steady_clock::time_point since;
  double limit = 120;
  int64_t tries = 0;
  int64_t accepted = 0;
  int passed = 0;  // cases that passed before the first failure
  std::string description;  // the smallest failing case: rapidcheck's message
  std::string log;          // and its caseLog() lines
} gShrink;
std::ostringstream gCaseLog;
struct ShrinkStopped {};

class ShrinkListener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    ++gShrink.tries;
    gShrink.accepted += accepted;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - gShrink.since).count() > gShrink.limit)
      throw ShrinkStopped{};
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

constexpr uint64_t kFnvOffset = 1469598103934665603ull;
uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 1099511628211ull; }
uint64_t hashBytes(uint64_t h, const void* p, size_t n) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = mix(h, c[i]);
  return h;
}
uint64_t hashString(uint64_t h, const std::string& s) { return hashBytes(h, s.data(), s.size()); }

// A property knob (api/knobs.h's envUnsigned); a bad value ends the run with exit 2.
uint64_t envU64(const char* name, uint64_t fallback) {
  try {
    return envUnsigned(name, fallback);
  } catch (const std::invalid_argument& e) {
    std::cerr << "properties: " << e.what() << "\n";
    std::exit(2);
  }
}

// Under mpirun (or any launcher that numbers its processes) rank r checks other cases than rank 0:
// its seed is the base seed + r * 2^32; its GPU is its rank on the host (api/knobs.cpp's deviceSlot).
uint64_t launcherRank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (std::getenv(name)) return envU64(name, 0);
  return 0;
}

uint64_t baseSeed() {
  const char* rc = std::getenv("RC_PARAMS");
  if (rc && std::strstr(rc, "seed")) return rc::detail::configuration().testParams.seed;
  return envU64("TAPELAB_PROPERTY_SEED", kDefaultSeed) + (launcherRank() << 32);
}

std::string currentTestName() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  return info ? std::string(info->test_suite_name()) + "." + info->name() : "property";
}

std::filesystem::path failureDir() {
  std::filesystem::path dir = std::filesystem::path(TAPELAB_BINARY_DIR) / "properties" / "failures";
  if (const char* d = std::getenv("TAPELAB_PROPERTY_FAILURES"); d && *d) dir = d;
  return launcherRank() ? dir / ("rank" + std::to_string(launcherRank())) : dir;  // ranks write apart
}

std::string fileNameOf(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return s;
}

}  // namespace

EngineClass engineClass(const std::string& e) {
  if (e == "reference" || e == "reference-f32") return EngineClass::Interpreted;
  if (e == "reference-mp") return EngineClass::Multiprecision;
  return EngineClass::Compiled;
}

bool isCpuEngine(const std::string& e) { return e.rfind("reference", 0) == 0 || e == "cpu-jit"; }

int propertyRuns() {
  const uint64_t r = envU64("TAPELAB_PROPERTY_RUNS", 1);
  return static_cast<int>(std::clamp<uint64_t>(r, 1, 1000000));
}

Budget budget(const std::string& engine, int baseCases) {
  const int runs = propertyRuns();
  switch (engineClass(engine)) {
    case EngineClass::Interpreted: return {baseCases * runs, 3000, 300};
    case EngineClass::Multiprecision: return {std::max(2, baseCases / 4) * runs, 300, 40};
    case EngineClass::Compiled: {
      // Long GPU runs may ask for larger tapes (compile time grows with them).
      const int maxNodes = static_cast<int>(std::clamp<uint64_t>(envU64("TAPELAB_PROPERTY_MAX_NODES", 150), 2, 20000));
      return {std::max(3, baseCases / 4) * runs, maxNodes, 300};
    }
  }
  return {baseCases * runs, 100, 100};
}

bool runnable(const std::string& engine, EngineUnderTest& out) {
  const EngineCaps caps = engineCaps(findEngine(engine));
  std::string why;
  if (!caps.usable) why = caps.reason.empty() ? "not usable here" : caps.reason;
  else if (caps.compileOnly) why = "compile-only here (" + caps.reason + ")";
  if (!why.empty()) {
    std::cout << "SKIP " << engine << ": " << why << std::endl;
    return false;
  }
  out.name = engine;
  out.caps = caps;
  out.precisions.clear();
  if (caps.fp64) out.precisions.push_back(Precision::F64);
  if (caps.fp32) out.precisions.push_back(Precision::F32);
  return true;
}

Counters& counters() { return gCounters; }

namespace {
std::shared_ptr<Kernel> compileFresh(const std::string& engine, const Tape& tape, const KernelOptions& o,
                                     const EngineSettings& settings) {
  std::unique_ptr<Engine> eng = makeEngine(engine, settings);
  ++gCounters.kernels;
  if (o.plan.nested()) ++gCounters.nested;
  return compileKernel(*eng, tape, o);
}
}  // namespace

void noteTape(const Tape& t) { gCurrentTape = t; }

namespace {
struct Replay {
  uint64_t paths = 0, seed = 0;
  std::vector<double> inputs;
};
std::optional<Replay> gCurrentRun, gFailingRun;
}  // namespace

void noteRun(uint64_t paths, uint64_t seed, const std::vector<std::vector<double>>& markets,
             const std::string& kernel) {
  logCase("paths ", paths, ", seed ", seed, ", inputs ", describeMarkets(markets), kernel.empty() ? "" : "; ",
          kernel);
  gCurrentRun = Replay{paths, seed, markets.empty() ? std::vector<double>{} : markets[0]};
}

KernelOptions anyKernel(const Tape& tape, const EngineUnderTest& e, Precision p) {
  KernelOptions o;
  o.precision = p;
  if (!checkpointedKinds(e.caps.kinds).empty() && *rc::gen::arbitrary<bool>())
    o = checkpointedOptions(tape, p, *genCkptSpec(e.caps.kinds), e.caps.perValuePlans);
  // Any configuration, at the engine's own math contract (the accuracy properties' tolerances assume it).
  o.config = *genConfig(e.name, p);
  o.config.math = defaultConfig(e.name, e.caps.cpuDevice).math;
  return o;
}

namespace {
// The failing tape as text: the case's inputs as input values, and how to replay it.
std::string failingTapeText() {
  Tape t = *gFailingTape;
  std::string replay;
  if (gFailingRun) {
    if (gFailingRun->inputs.size() == t.inputDefaults.size()) t.inputDefaults = gFailingRun->inputs;
    replay = "# replay: paths=" + std::to_string(gFailingRun->paths) + " seed=" + std::to_string(gFailingRun->seed) +
             " (inputs: the failing case's)\n";
  }
  std::string text = writeTape(t);
  const size_t eol = text.find('\n');
  return eol == std::string::npos ? text : text.insert(eol + 1, replay);
}
}  // namespace

void caseLog(const std::string& line) {
  gCaseLog << line << "\n";
  RC_LOG() << line << "\n";
}

void checkProperty(const std::string& engine, int cases, const std::function<void()>& body) {
  const std::string test = currentTestName();
  rc::detail::TestParams params;
  params.seed = baseSeed() ^ hashString(kFnvOffset, test);  // FNV-1a: the seed depends on the name only
  params.maxSuccess = cases;
  params.maxSize = 100;
  params.maxDiscardRatio = 10;
  gCounters = {};
  gFailingTape.reset();
  gFailingRun.reset();
  const auto t0 = std::chrono::steady_clock::now();

  gShrink = {};
  gShrink.limit = static_cast<double>(envU64("TAPELAB_PROPERTY_SHRINK_SECONDS", 120));
  // TAPELAB_PROPERTY_SECONDS: after this long, cases left pass without running and are not
  // counted (a long run fits a time budget; shrinking a failure is not cut short by it).
  const double timeLimit = static_cast<double>(envU64("TAPELAB_PROPERTY_SECONDS", 0));
  int late = 0;
  auto wrapped = [&] {
    if (timeLimit > 0 && !gShrink.failed &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeLimit) {
      ++late;
      return;
    }
    gCurrentTape.reset();
    gCurrentRun.reset();
    gCaseLog.str("");
    auto failed = [&](const std::string& description) {
      gFailingTape = gCurrentTape;
      gFailingRun = gCurrentRun;
      gShrink.description = description;
      gShrink.log = gCaseLog.str();
      if (!gShrink.failed) gShrink.since = std::chrono::steady_clock::now();
      gShrink.failed = true;
    };
    try {
      body();
      if (!gShrink.failed) ++gShrink.passed;
    } catch (const rc::detail::CaseResult& r) {
      if (r.type == rc::detail::CaseResult::Type::Failure) failed(r.description);
      throw;
    } catch (const std::exception& e) {
      failed(std::string("exception: ") + e.what());
      throw;
    } catch (...) {
      failed("unknown exception");
      throw;
    }
  };
  rc::detail::TestMetadata meta;
  meta.id = test;
  meta.description = test;
  ShrinkListener listener;
  std::optional<rc::detail::TestResult> result;
  try {
    result = rc::detail::checkProperty(rc::detail::toProperty(wrapped), meta, params, listener,
                                       rc::detail::configuration().reproduce);
  } catch (const ShrinkStopped&) {
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  int passed = gShrink.passed;
  if (result && result->is<rc::detail::SuccessResult>()) passed = result->get<rc::detail::SuccessResult>().numSuccess;
  if (result && result->is<rc::detail::FailureResult>()) passed = result->get<rc::detail::FailureResult>().numSuccess;
  if (result && result->is<rc::detail::GaveUpResult>()) passed = result->get<rc::detail::GaveUpResult>().numSuccess;
  passed -= std::min(passed, late);
  gCounters.tapes = passed;
  char line[512];
  std::snprintf(line, sizeof line,
                "COUNT %s engine=%s tapes=%d kernels=%" PRId64 " runs=%" PRId64 " compared=%" PRId64
                " unchecked=%" PRId64 " nanbits=%" PRId64 " nested=%" PRId64 " seconds=%.1f seed=%" PRIu64 "%s%s",
                test.c_str(), engine.c_str(), passed, gCounters.kernels, gCounters.runs, gCounters.compared,
                gCounters.unchecked, gCounters.nanBits, gCounters.nested, secs, params.seed,
                late ? (" time_limit_skipped=" + std::to_string(late)).c_str() : "",
                launcherRank() ? (" rank=" + std::to_string(launcherRank())).c_str() : "");
  std::cout << line << std::endl;

  if (!result || !result->is<rc::detail::SuccessResult>()) {
    std::ostringstream msg;
    msg << "property " << test << " on " << engine << " failed; seed " << params.seed
        << " (TAPELAB_PROPERTY_SEED=" << baseSeed() << ", " << cases << " cases)\n";
    if (result) {
      rc::detail::printResultMessage(*result, msg);
    } else {
      msg << "shrinking stopped after " << gShrink.limit << " s (TAPELAB_PROPERTY_SHRINK_SECONDS), " << gShrink.tries
          << " tries, " << gShrink.accepted << " shrinks; the smallest failure so far:\n"
          << gShrink.description << "\n" << gShrink.log;
      if (gFailingTape) msg << failingTapeText();
    }
    if (gFailingTape) {
      std::error_code ec;
      const std::filesystem::path dir = failureDir();
      std::filesystem::create_directories(dir, ec);
      const std::filesystem::path file = dir / (fileNameOf(test) + ".tape");
      try {
        std::ofstream f(file);
        f << failingTapeText();
        if (!f) throw std::runtime_error("cannot write " + file.string());
        bool isEngine = false;
        for (const auto& e : engineRegistry()) isEngine = isEngine || e.name == engine;
        msg << "\nshrunk tape written to " << file.string() << " (replay: tapelab run " << file.string()
            << (isEngine ? " --engine " + engine : std::string())
            << (gFailingRun ? " --paths " + std::to_string(std::max<uint64_t>(2, gFailingRun->paths)) + " --seed " +
                                  std::to_string(gFailingRun->seed)
                            : std::string())
            << "; the kernel and plan are in the log above)";
      } catch (const std::exception& ex) {
        msg << "\ncould not write the shrunk tape: " << ex.what();
      }
    }
    ADD_FAILURE() << msg.str();
  }
}

std::shared_ptr<Kernel> compileOn(const std::string& engine, const Tape& tape, const KernelOptions& o, bool fresh,
                                  const EngineSettings& settings) {
  if (!gShrink.failed) return compileFresh(engine, tape, o, settings);
  uint64_t h = hashString(2, engine);
  h = hashString(h, writeTape(tape));
  const int fields[] = {static_cast<int>(o.precision), o.greeks, static_cast<int>(o.kind), o.markets,
                        static_cast<int>(o.dispatch.maxGroups)};
  h = hashBytes(h, fields, sizeof fields);
  h = hashBytes(h, o.plan.bounds.data(), o.plan.bounds.size() * sizeof(int32_t));
  h = hashString(h, configTextAll(o.config));
  // While shrinking, candidates often share a kernel: keep the last few.
  static std::vector<std::pair<uint64_t, std::shared_ptr<Kernel>>> cache;
  if (gShrink.tries == 0) cache.clear();
  if (!fresh)
    for (const auto& [key, kernel] : cache)
      if (key == h) return kernel;
  std::shared_ptr<Kernel> k = compileFresh(engine, tape, o, settings);
  if (!fresh) {
    if (cache.size() >= 8) cache.erase(cache.begin());
    cache.emplace_back(h, k);
  }
  return k;
}

RunResult runKernel(Kernel& k, const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) {
  ++gCounters.runs;
  return k.run(inputs, paths, seed);
}

bool bitsMatch(double a, double b) {
  // Any NaN equals any NaN (counted): IEEE 754 leaves the sign and payload of a
  // NaN an operation produces to the implementation, and a compiler may commute
  // the operands of + and * or rewrite x + (-y) as x - y, so two correct kernels
  // of one engine can disagree there (seen: PoCL, nan vs -nan across market counts).
  static const bool strictNaN = envU64("TAPELAB_PROPERTY_NAN_BITS", 0) != 0;
  ++gCounters.compared;
  if (identicalBits(a, b)) return true;
  if (std::isnan(a) && std::isnan(b) && !strictNaN) {
    ++gCounters.nanBits;
    return true;
  }
  return false;
}

void assertSameBits(const MarketResult& x, const MarketResult& y, const std::string& what) {
  auto one = [&](double a, double b, const std::string& field) {
    if (!bitsMatch(a, b)) RC_FAIL(what + ": " + field + " differs: " + describe(a) + " then " + describe(b));
  };
  one(x.value, y.value, "value");
  one(x.valueStderr, y.valueStderr, "value stderr");
  RC_ASSERT(x.greeks.size() == y.greeks.size());
  RC_ASSERT(x.greeksStderr.size() == y.greeksStderr.size());
  for (size_t k = 0; k < x.greeks.size(); ++k) {
    one(x.greeks[k], y.greeks[k], "adjoint of input " + std::to_string(k));
    one(x.greeksStderr[k], y.greeksStderr[k], "stderr of adjoint " + std::to_string(k));
  }
}

void assertSameBits(const RunResult& x, const RunResult& y, const std::string& what) {
  RC_ASSERT(x.markets.size() == y.markets.size());
  for (size_t m = 0; m < x.markets.size(); ++m)
    assertSameBits(x.markets[m], y.markets[m], what + ", market " + std::to_string(m));
}

}  // namespace tapelab::props
