// The interface every engine implements, and the rules they share.
//
// An Engine compiles a Kernel for one (tape, plan, options); a Kernel runs any
// number of times with different input values (markets), path counts and
// seeds. That split is the article's method: one kernel, a ladder of calls.
//
// Reduction rule (all engines). Paths are grouped into fixed blocks whose
// boundaries depend only on the path index (block b = paths
// [b*B, (b+1)*B) for an engine-chosen B); within a block the per-path values
// are summed in a fixed order (Kahan in the kernel's precision on GPUs and
// cpu-jit; in double on the reference), and the block partials are added on
// the host, in double, in block order. So a result depends only on
// (tape, inputs, paths, seed, engine, precision): not on thread count, chunking
// or timing; and the same call twice gives the same bits.
//
// This layer is the interface alone: no backend, no registry, no environment.
// Knobs arrive as plain structs (KernelOptions::config and ::dispatch here,
// EngineSettings in engine/settings.h), filled at the edge by api/knobs.h or set directly.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/config.h"
#include "planner/plan.h"
#include "tape/tape.h"

namespace tapelab {

enum class Precision { F32, F64 };
enum class KernelKind { Plain, Register, Scratch, Tangent };
inline constexpr KernelKind kKernelKinds[] = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch,
                                              KernelKind::Tangent};
// (The scratch buffer's layout and a multi-market kernel's market order are fields of the kernel's
// configuration: KernelConfig::layout and ::marketOrder, engine/config.h.)

const char* toString(Precision p);
const char* toString(KernelKind k);

// How a run is cut into dispatches and observed: never the kernel's code (that is KernelConfig),
// never a result's bits except pathOffset, which picks the paths.
struct DispatchOptions {
  uint64_t pathOffset = 0;     // index of a run's first path (tests price paths beyond 2^32)
  uint32_t maxGroups = 0;      // most workgroups per dispatch; 0 = the engine's own limit
  uint64_t scratchBudget = 0;  // scratch bytes one launch may use; 0 = derived from the device
  // GPU engines that can (CUDA): each dispatch's kernel timed between device timestamps, so a run
  // says how much of its time the kernels took (RunResult::dispatches); timed events cost a little.
  bool timeline = false;
  // Most paths one launch (a submit, a batch of dispatches) runs; 0 = no cap. A launch cannot be cut
  // short, and Ctrl-C is checked between launches: the Python module caps them (resolveKernel, from
  // the device's kind) so that KeyboardInterrupt comes within ~50 ms. Results do not depend on it.
  uint64_t launchPaths = 0;
};

struct KernelOptions {
  Precision precision = Precision::F64;
  bool greeks = true;             // false: value only, no reverse sweep
  KernelKind kind = KernelKind::Plain;
  Plan plan;                      // must be set for Register/Scratch; ignored for Plain and Tangent
  int markets = 1;                // input sets priced per path in one dispatch (1..8)
  // Input ordinals equal in every market of a dispatch (a spot ladder: all but spot; sharedInputsOf
  // finds them): with config shared_inputs, a GPU kernel reads them once and computes what no other
  // input reaches once per path; the adjoints stay per market. A GPU run whose markets differ in one
  // of them is refused (gpu/host packInputs); engines that price markets one by one ignore it.
  // Ascending, no repeats; empty: every input per market.
  std::vector<int> sharedInputs;
  // Tangent kind: the input ordinals whose derivatives the forward sweep carries
  // (ascending, no repeats; empty: all). The other inputs' Greeks come back NaN.
  std::vector<int> wrt;
  std::string dumpDir;            // where to write generated source ("" = nowhere)
  // How the engine writes the kernel (engine/config.h). KernelConfig{} is a neutral baseline every
  // engine accepts; front ends start from the engine's defaults (defaultConfig) and the user's text.
  KernelConfig config;
  DispatchOptions dispatch;
};

// What the compiler / driver says about a kernel; -1 = not reported.
struct KernelStats {
  int registers = -1;
  int64_t spillBytes = -1;    // local memory / scratch / spill bytes per thread (a stack frame counts)
  int64_t spillStoreBytes = -1;  // of which register spills, where the compiler says (ptxas: spill stores)
  int64_t scratchBytes = -1;  // scratch-buffer bytes the kernel allocates (scratch kind)
  int64_t scratchBytesPerPath = -1;  // scratch kind: of those, the bytes one path in flight holds (its slots)
  int64_t sourceBytes = -1;   // the generated source the compiler read (every part), -1 where not reported
  int64_t instructions = -1;  // static instruction count of the kernel's code (cuda: PTX of tapelab_kernel), -1 where
                              // the compiler does not say; a loop's body counts once
  double compileSeconds = 0;
  bool cacheHit = false;      // compiled code came from an on-disk cache
  std::string notes;          // free text: driver statistics by name
  // The config's fields that apply to the engine but not to this kernel ("markets=loop: one market"),
  // or that it could not honour ("sums=local: 53 KiB of sums exceed 48 KiB, kept in registers").
  std::vector<std::string> configUnused;
  std::string sourcePath;     // dumped source, when dumped
};

// One market's result. greeks[i] is d value / d input i.
struct MarketResult {
  double value = 0, valueStderr = 0;
  std::vector<double> greeks, greeksStderr;
};

// One dispatch of a GPU run (gpu/host/dispatch.h): where its share of run()'s time went.
struct DispatchTiming {
  uint32_t groups = 0;
  double readySeconds = 0;     // its partials on the host, or summed on the device, since its run() began
  double sumSeconds = 0;       // the host adding them
  double kernelSeconds = -1;   // the kernel alone, between device timestamps (DispatchOptions::timeline); -1: not timed
  double gapSeconds = -1;      // device time from the previous kernel's end to this one's start; -1: not timed, or
                               // the first of a launch (dispatchesPerLaunch)
};

struct RunResult {
  std::vector<MarketResult> markets;  // one per input set, in the order given
  uint64_t paths = 0;
  uint64_t seed = 0;
  double seconds = 0;                 // wall time of run(), compile excluded
  double setupSeconds = 0;            // GPU engines: packing and uploading the inputs, before the first dispatch
  std::vector<DispatchTiming> dispatches;  // GPU engines, in order; empty elsewhere
};

// The one "same bits" test: whether two runs' every value, Greek and their stderrs are equal bit for
// bit (memcmp, so -0.0 differs from 0.0 and a NaN equals its own bits), market by market. The tuner,
// compare, the drivers and sharedInputsOf decide with these (the tests' expectations, tests/common/
// test_util.h sameBits, also let any NaN equal any NaN: IEEE leaves a made NaN's payload open).
bool bitsEqual(double x, double y);
bool bitsEqual(const MarketResult& a, const MarketResult& b);
bool bitsEqual(const RunResult& a, const RunResult& b);

// Takes a run's per-block partial sums, unreduced, in block order: `blocks` consecutive
// blocks of `blockSize` = markets * 2 * width doubles each (value, then each input's adjoint
// when the kernel computes Greeks: width of them; then their squares), as finishBlocks'
// `partial` below.
class BlockSink {
 public:
  virtual ~BlockSink() = default;
  virtual void add(const double* partials, uint64_t blocks, size_t blockSize) = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // inputs.size() == options.markets; each inner vector has tape.numInputs() values.
  virtual RunResult run(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) = 0;
  virtual KernelStats stats() const { return {}; }
  // Paths per reduction block; 0: this kernel cannot run part of a run (runBlocks throws).
  virtual uint64_t blockPaths() const { return 0; }
  // Part of a run, for splitting one over processes (api/ranks.h): paths [first, first + paths)
  // counted from dispatch.pathOffset, `first` a multiple of blockPaths(). Hands the blocks' partial
  // sums to `sink` in block order: the run over all paths adds exactly these, so partials
  // concatenated over contiguous parts and reduced in order (BlockReduction) give run()'s bits.
  // Returns the seconds it took.
  virtual double runBlocks(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths,
                           uint64_t seed, BlockSink& sink);
};

// What an engine can do here.
struct EngineCaps {
  bool usable = false;       // can compile and run here
  bool compileOnly = false;  // can compile but not run (cuda without a driver, hip)
  std::string reason;        // why not usable / compile-only; device name when usable
  bool fp32 = true, fp64 = true;
  Precision defaultPrecision = Precision::F64;  // GPUs: F32
  bool cpuDevice = false;    // a GPU API served by a CPU (lavapipe, PoCL): usable, but not a GPU
  bool gpu = false;  // runs on a real GPU, whose clocks climb under load: timing warms up (util/warmup.h)
  std::vector<KernelKind> kinds{KernelKind::Plain, KernelKind::Register};
  int maxMarkets = 8;
  // --checkpoint auto cuts long tapes (to keep a GPU kernel's values in registers). false where the
  // plain kernel is faster however long the tape: its values fit the caches (cpu-jit).
  bool autoCheckpoint = true;
  // Fuses several markets into one kernel whose reverse sweep has a market order (the GPU
  // emitter); false: markets are priced one after another and config market_order is moot.
  bool marketOrder = false;
  // Runs per-value plans (planner/plan.h) as register kernels; false: refuses them (EngineUnavailable).
  bool perValuePlans = false;
  // The deepest plan (Plan::depth, levels of nested cuts) this engine's compiler is known to take;
  // 0: no limit. Each level nests the kernel's source one block deeper: a compiler's bracket limit
  // (clang's 256, OpenCL C and HIP) or a compile time that grows with the depth stops it long before
  // planfile.h's kMaxPlanDepth. resolveKernel refuses a deeper plan in one line, before the compile.
  int maxPlanDepth = 0;
  std::string maxPlanDepthWhy;  // the limit's reason, for that line
};

// Whether `o` asks for the market-sequential reverse sweep and it applies: a checkpointed kind,
// Greeks, several markets, config market_order=sequential. Engines with caps.marketOrder honour it.
bool sequentialMarkets(const KernelOptions& o);

// Why a register kernel's alike segments (config loops=rolled) cannot roll under `o`, before its plan is
// looked at; "" where they may: loops=unrolled, not a register kernel with Greeks, several markets without
// the market loop (config markets=loop with market_order=sequential), draws prefilled on a tape that draws.
// gpu/codegen/rolling.h decides the rest from the plan; the default cuts (api/montecarlo.cpp) ask it first.
std::string rolledSegmentsWhyNot(const Tape& tape, const KernelOptions& o);

// The inputs (ordinals, ascending) whose values are bit-for-bit equal in every set of each group of
// `perDispatch` consecutive sets (the groups a Pricer dispatches; a short last group is padded with
// its last set); every input when there is one set per group.
std::vector<int> sharedInputsOf(const std::vector<std::vector<double>>& sets, size_t perDispatch);

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;
  virtual EngineCaps caps() const = 0;
  // Throws std::runtime_error with a one-line message on failure.
  virtual std::unique_ptr<Kernel> compile(const Tape& tape, const KernelOptions& options) = 0;
};

// Thrown when an engine exists but cannot run here (the CLI exits 3).
struct EngineUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown when a device did not finish within EngineSettings::deviceTimeout (TAPELAB_DEVICE_TIMEOUT),
// and by every later wait on that device, which is then abandoned (the CLI exits 1).
struct DeviceTimeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Whether a device of this process timed out (gpu/host/watchdog.h marks it): its work may never
// finish, so a front end leaves without the drivers' exit handlers, which could wait for it.
bool deviceTimedOutInProcess();
void markDeviceTimedOutInProcess();

// "the register kernel of asian-252" (", 7 markets" when several): a kernel in messages (compile_watch.h).
std::string kernelSubject(const Tape& tape, const KernelOptions& options);

// Helpers shared by engines: turn per-block sums into a MarketResult.
// sums: value, then each input's adjoint; sumSquares likewise. A sum that is not finite (a path's
// value was, or the sum overflowed) gives a NaN estimate, and a NaN standard error with it, on
// every engine alike (a CPU engine's Kahan sum turns an overflow into NaN, a GPU's plain sum into
// inf); a finite sum whose squares overflowed gives its mean and a NaN standard error.
MarketResult finishMoments(const std::vector<double>& sums, const std::vector<double>& sumSquares,
                           uint64_t paths);

// The estimates of `r` that are not finite, as "value" or "d/d NAME" (prefixed "market M: " when
// there are several markets), Greeks a tangent kernel did not compute left out; "" when none.
// Front ends print it as a warning (cli, python): a result is never non-finite without a word.
std::string nonFiniteEstimates(const RunResult& r, const KernelOptions& options,
                               const std::vector<std::string>& inputNames);

// The most paths one run may have: what a double counts exactly many times over (the moments
// divide by the count) and what the path index can reach from any offset (checkPathRange).
inline constexpr uint64_t kMaxPaths = uint64_t{1} << 48;
// Throws std::invalid_argument when paths [offset + first, offset + first + paths) do not fit
// the 64-bit path index (TAPELAB_PATH_OFFSET too close to 2^64), or paths is 0 or over kMaxPaths.
void checkPathRange(uint64_t offset, uint64_t first, uint64_t paths);

// The inputs a kernel differentiates by: options.wrt for the tangent kind when given, else all
// (empty when !greeks). Throws std::invalid_argument for an ordinal out of range or a repeat.
std::vector<int> differentiatedInputs(const KernelOptions& options, int numInputs);
// Sets the Greeks (and their standard errors) of the inputs a kernel did not differentiate by
// to NaN: a tangent kernel with a --wrt subset never computed them.
void markUncomputedGreeks(RunResult& result, const KernelOptions& options, int numInputs);

// CPU engines. Worker threads for `threads` (EngineSettings::threads): itself, or
// the hardware's when 0.
unsigned workerThreads(unsigned threads);
// Runs `worker` on min(workerThreads(threads), blocks) threads (the caller's among them);
// the workers take blocks from a shared counter, so results must not depend on which runs which.
void runOnThreads(uint64_t blocks, unsigned threads, const std::function<void()>& worker);
// A CPU engine's run of paths [first, first + paths) in windows of whole blocks: `partials(first,
// paths)` returns the window's block partials (finishBlocks' layout, `blockSize` doubles a block)
// and each window goes to `sink` in block order, so memory holds one window (at most 64 MiB of
// partials, at most 16,384 blocks), never a buffer that grows with paths, and the sums are those
// of one pass. Checks the range (checkPathRange with `offset`) and, after each window, an
// interrupt (util/process.h: throws Interrupted).
void runBlockWindows(uint64_t offset, uint64_t first, uint64_t paths, uint64_t blockPaths, size_t blockSize,
                     BlockSink& sink, const std::function<std::vector<double>(uint64_t first, uint64_t paths)>& partials);

// partial[(block * markets + m) * 2 * width + k]: market m's sums (k < width: value, then each
// input's adjoint) and sums of squares (width + k) over one block of paths. Blocks are summed
// in order, so the result does not depend on the thread count.
RunResult finishBlocks(const std::vector<double>& partial, uint64_t blocks, size_t markets, size_t width,
                       uint64_t paths, uint64_t seed);

// The fixed-order reduction as a sink: adds each block's partials, in the order given, to one
// double per (market, quantity) starting from 0; finish() is finishBlocks' result for them.
class BlockReduction final : public BlockSink {
 public:
  void add(const double* partials, uint64_t blocks, size_t blockSize) override;
  std::vector<double>& sums() { return sums_; }  // empty until the first block
  // One MarketResult per market, Greeks padded with zeros to `numInputs` (value-only kernels).
  RunResult finish(size_t markets, size_t numInputs, uint64_t paths, uint64_t seed) const;

 private:
  std::vector<double> sums_;
};

}  // namespace tapelab
