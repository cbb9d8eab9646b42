// The readers' time and memory (tape/textformat.h, planner/planfile.h; README "Faults"): the
// .tape reader over tapes of 1,024 to 1,048,576 nodes and of as many inputs (input names are
// checked against tape/textformat.cpp's NameSet, an open-addressing table of name indices with
// linear probing: linear in the inputs, where a scan made 100k inputs take 16-28 s), and the plan
// reader over plans of as many cuts. Each benchmark reports seconds per node (or cut; printed as n, u: nano, micro) and the peak
// heap the read holds per node, counted by this binary's operator new, and fits the complexity
// (benchmark::oN): a reader that turned quadratic shows it here, not in a timed test.
//
//   ./bench/bench_readers                          # every size; ~1 minute
//   ./bench/bench_readers --benchmark_filter=Inputs
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <string>

#include "planner/plan.h"
#include "planner/planfile.h"
#include "tape/tape.h"
#include "tape/textformat.h"
#include "util/files.h"

// ------------------------------------------------------------ heap accounting

namespace {
std::atomic<int64_t> liveBytes{0}, peakBytes{0};

void* counted(size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  const int64_t now = liveBytes.fetch_add(static_cast<int64_t>(malloc_usable_size(p))) +
                      static_cast<int64_t>(malloc_usable_size(p));
  for (int64_t peak = peakBytes.load(); now > peak && !peakBytes.compare_exchange_weak(peak, now);) {
  }
  return p;
}
void uncounted(void* p) {
  if (!p) return;
  liveBytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}
}  // namespace

void* operator new(size_t n) { return counted(n); }
void* operator new[](size_t n) { return counted(n); }
void operator delete(void* p) noexcept { uncounted(p); }
void operator delete[](void* p) noexcept { uncounted(p); }
void operator delete(void* p, size_t) noexcept { uncounted(p); }
void operator delete[](void* p, size_t) noexcept { uncounted(p); }

namespace {

using namespace tapelab;

// The peak heap `read` holds beyond what was live before it, per item, and its result kept.
template <class F>
double peakPerItem(F read, int64_t items) {
  const int64_t before = liveBytes.load();
  peakBytes.store(before);
  auto kept = read();
  benchmark::DoNotOptimize(kept);
  return static_cast<double>(peakBytes.load() - before) / static_cast<double>(items);
}

std::string scratchFile(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tapelab-bench-" + std::to_string(::getpid()) + "-" + name)).string();
}

// A tape of n nodes: 4 inputs, then draws, constants and arithmetic, each reading earlier nodes.
Tape mixedTape(int64_t n) {
  Tape t;
  for (const char* name : {"spot", "vol", "rate", "strike"}) t.addInput(name, 1.5);
  for (int32_t i = t.size(); i < n; ++i) {
    switch (i % 4) {
      case 0: t.push(Op::Randn, -1, -1, static_cast<double>(i / 4)); break;
      case 1: t.push(Op::Const, -1, -1, 0.1 + i * 1e-7); break;
      case 2: t.push(Op::Mul, i - 1, i - 2); break;
      default: t.push(Op::Add, i - 1, static_cast<int32_t>((int64_t{i} * 7919) % i)); break;
    }
  }
  t.output = t.size() - 1;
  return t;
}

// A tape of n inputs summed: every node but the sums an input with its own name.
Tape inputsTape(int64_t n) {
  Tape t;
  for (int64_t i = 0; i < n; ++i) t.addInput("in" + std::to_string(i), 0.5);
  t.push(Op::Add, 0, static_cast<int32_t>(n > 1 ? 1 : 0));
  t.output = t.size() - 1;
  return t;
}

void readTape(benchmark::State& state, Tape (*make)(int64_t)) {
  const int64_t n = state.range(0);
  const Tape tape = make(n);
  const std::string text = writeTape(tape), file = scratchFile("t.tape");
  writeOutputFile(file, text);
  for (auto _ : state) benchmark::DoNotOptimize(readTapeFile(file));
  state.SetComplexityN(n);
  state.SetItemsProcessed(state.iterations() * tape.size());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  state.counters["s_per_node"] = benchmark::Counter(static_cast<double>(tape.size()),
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
  state.counters["heap_B_per_node"] = peakPerItem([&] { return readTapeFile(file); }, tape.size());
  state.counters["file_B_per_node"] = static_cast<double>(text.size()) / static_cast<double>(tape.size());
  std::filesystem::remove(file);
}

void BM_ReadTape(benchmark::State& state) { readTape(state, mixedTape); }
void BM_ReadTapeOfInputs(benchmark::State& state) { readTape(state, inputsTape); }

// A plan file of n cuts (every other node of a 2n + 2 node tape), as tapelab plan --out writes it.
void BM_ReadPlan(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tape tape = mixedTape(2 * n + 2);
  std::vector<int32_t> bounds{0};
  for (int64_t c = 1; c <= n; ++c) bounds.push_back(static_cast<int32_t>(2 * c));
  bounds.push_back(tape.size());
  const std::string text = planFileText(tape, makePlan(tape, bounds, "bench")), file = scratchFile("p.json");
  writeOutputFile(file, text);
  for (auto _ : state) benchmark::DoNotOptimize(readPlanFile(file, tape));
  state.SetComplexityN(n);
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  state.counters["s_per_cut"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                                                benchmark::Counter::kInvert);
  state.counters["heap_B_per_cut"] = peakPerItem([&] { return readPlanFile(file, tape); }, n);
  state.counters["file_B_per_cut"] = static_cast<double>(text.size()) / static_cast<double>(n);
  std::filesystem::remove(file);
}

}  // namespace

BENCHMARK(BM_ReadTape)->RangeMultiplier(4)->Range(1 << 10, 1 << 20)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadTapeOfInputs)->RangeMultiplier(4)->Range(1 << 10, 1 << 20)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadPlan)->RangeMultiplier(4)->Range(1 << 10, 1 << 20)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
