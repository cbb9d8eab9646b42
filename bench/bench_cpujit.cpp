// cpu-jit on this machine, Google Benchmark:
//   - the 252-step Asian (1,536 nodes), paths/s for price only and for value
//     + 5 Greeks, fp64 and fp32, plain and register-checkpointed (16
//     segments), and the reference interpreters on the same work;
//   - compile time of the Asian and of a 20,000-node random tape: first
//     (precompiled xsimd header already built), first with the precompiled
//     header built too, and cached (a fresh Engine loading the object).
// Medians of repetitions (set per benchmark). paths/s is wall time with every
// core (TAPELAB_THREADS); cpu_us/path is the CPU time of all threads per path.
// Kernels go to TAPELAB_CACHE_DIR/cpujit, default <build>/bench-cpujit-cache/cpujit.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>

#include "api/registry.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"

using namespace tapelab;
namespace fs = std::filesystem;

namespace {

const bool kCacheDir = [] {
  if (!std::getenv("TAPELAB_CACHE_DIR")) setenv("TAPELAB_CACHE_DIR", TAPELAB_BINARY_DIR "/bench-cpujit-cache", 1);
  return true;
}();

double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

bool usable(benchmark::State& st, const std::string& engine) {
  const EngineCaps c = engineCaps(findEngine(engine));
  if (!c.usable) st.SkipWithError((engine + " not usable: " + c.reason).c_str());
  return c.usable;
}

const Tape& asian252() {
  static const Tape t = products::asianCall(252);
  return t;
}

const Tape& random20k() {
  static const Tape t = [] {
    RandomTapeOptions o;
    o.nodes = 20000;
    o.inputs = 5;
    o.draws = 2000;
    return randomTape(1, o);
  }();
  return t;
}

void BM_Asian252(benchmark::State& st, const std::string& engine, Precision p, bool greeks, bool checkpointed,
                 uint64_t paths) {
  if (!usable(st, engine)) return;
  const Tape& t = asian252();
  KernelOptions o;
  o.precision = p;
  o.greeks = greeks;
  if (checkpointed) {
    o.kind = KernelKind::Register;
    o.plan = makeStrategyPlan("window", t, {16, 0});
  }
  const auto k = makeEngine(engine)->compile(t, o);
  k->run({t.inputDefaults}, paths / 10, 1);  // warm: pages, threads, caches
  double cpu = 0;
  for (auto _ : st) {
    const double c0 = processCpuSeconds();
    const RunResult r = k->run({t.inputDefaults}, paths, 42);
    cpu += processCpuSeconds() - c0;
    benchmark::DoNotOptimize(r.markets[0].value);
  }
  const double done = double(paths) * double(st.iterations());
  st.counters["paths/s"] = benchmark::Counter(done, benchmark::Counter::kIsRate);
  // CPU time of all threads per path: what a loaded machine does not distort.
  st.counters["cpu_us/path"] = 1e6 * cpu / done;
}

// The kernel's files in the cache, from its stats (source, and object=... in the notes).
void forget(const KernelStats& s) {
  std::error_code ec;
  fs::remove(s.sourcePath, ec);
  const size_t at = s.notes.find("object=");
  if (at != std::string::npos) fs::remove(s.notes.substr(at + 7), ec);
}

void forgetPrecompiledHeaders() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(engineSettingsFromEnvironment().cacheDir) / "cpujit", ec))
    if (e.path().filename().string().rfind("pch-", 0) == 0) fs::remove_all(e.path(), ec);
}

enum class Compile { Cached, First, FirstWithPch };

void BM_Compile(benchmark::State& st, const Tape& (*tape)(), Compile mode) {
  if (!usable(st, "cpu-jit")) return;
  const Tape& t = tape();
  const auto engine = [] { return makeEngine("cpu-jit"); };
  if (mode == Compile::Cached) engine()->compile(t, KernelOptions{});  // make sure it is there
  // First: a hit means an earlier iteration or run left the object; it is dropped and compiled again.
  for (auto _ : st) {
    if (mode == Compile::FirstWithPch) forgetPrecompiledHeaders();
    auto k = engine()->compile(t, KernelOptions{});
    if (mode != Compile::Cached && k->stats().cacheHit) {
      forget(k->stats());
      k = engine()->compile(t, KernelOptions{});
    }
    const KernelStats s = k->stats();
    st.SetIterationTime(s.compileSeconds);
    if (s.cacheHit != (mode == Compile::Cached)) st.SkipWithError("unexpected cache state");
  }
  st.counters["nodes"] = t.size();
}

constexpr auto F64 = Precision::F64;
constexpr auto F32 = Precision::F32;

}  // namespace

#define TAPELAB_PATHS_BENCH(name, ...)                                                        \
  BENCHMARK_CAPTURE(BM_Asian252, name, __VA_ARGS__)                                           \
      ->UseRealTime()                                                                         \
      ->Unit(benchmark::kMillisecond)                                                         \
      ->Iterations(3)                                                                         \
      ->Repetitions(3)                                                                        \
      ->ReportAggregatesOnly(true)

TAPELAB_PATHS_BENCH(cpujit_fp64_price, "cpu-jit", F64, false, false, 300000);
TAPELAB_PATHS_BENCH(cpujit_fp64_greeks, "cpu-jit", F64, true, false, 300000);
TAPELAB_PATHS_BENCH(cpujit_fp64_greeks_register16, "cpu-jit", F64, true, true, 300000);
TAPELAB_PATHS_BENCH(cpujit_fp32_price, "cpu-jit", F32, false, false, 300000);
TAPELAB_PATHS_BENCH(cpujit_fp32_greeks, "cpu-jit", F32, true, false, 300000);
TAPELAB_PATHS_BENCH(cpujit_fp32_greeks_register16, "cpu-jit", F32, true, true, 300000);
TAPELAB_PATHS_BENCH(reference_fp64_price, "reference", F64, false, false, 10000);
TAPELAB_PATHS_BENCH(reference_fp64_greeks, "reference", F64, true, false, 10000);
TAPELAB_PATHS_BENCH(reference_fp32_price, "reference-f32", F32, false, false, 10000);
TAPELAB_PATHS_BENCH(reference_fp32_greeks, "reference-f32", F32, true, false, 10000);

#define TAPELAB_COMPILE_BENCH(name, tape, mode, reps)                                         \
  BENCHMARK_CAPTURE(BM_Compile, name, tape, mode)                                            \
      ->UseManualTime()                                                                       \
      ->Unit(benchmark::kMillisecond)                                                         \
      ->Iterations(1)                                                                         \
      ->Repetitions(reps)                                                                     \
      ->ReportAggregatesOnly(true)

TAPELAB_COMPILE_BENCH(asian252_first_with_pch, asian252, Compile::FirstWithPch, 3);
TAPELAB_COMPILE_BENCH(asian252_first, asian252, Compile::First, 3);
TAPELAB_COMPILE_BENCH(asian252_cached, asian252, Compile::Cached, 5);
TAPELAB_COMPILE_BENCH(random20k_first, random20k, Compile::First, 1);
TAPELAB_COMPILE_BENCH(random20k_cached, random20k, Compile::Cached, 5);

BENCHMARK_MAIN();
