// The host half of the kernel ABI in gpu/codegen/emit.h, shared by every GPU
// runtime: scalar parameters, how a run is split into dispatches and how many
// groups one may hold, the inputs buffer, the double reduction of the groups'
// partials, and the run loop itself. A runtime supplies only its API calls
// (DispatchRunner below).
#pragma once
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <array>
#include <vector>

#include "engine/engine.h"
#include "gpu/codegen/emit.h"

namespace tapelab {

// The scalar parameters, in ABI order: the GLSL push-constant block's layout
// and the C dialects' arguments 3..9.
struct KernelParams {
  uint32_t seedLo = 0, seedHi = 0;
  uint32_t pathLo = 0, pathHi = 0;  // first path of this dispatch
  uint32_t count = 0;               // paths in this dispatch
  uint32_t zero = 0;                // always 0
  uint32_t invocations = 0;         // groups * workgroupSize
  // The seven words in ABI order, for APIs that take the arguments one by one.
  std::array<uint32_t, 7> words() const { return {seedLo, seedHi, pathLo, pathHi, count, zero, invocations}; }
};
static_assert(sizeof(KernelParams) == 28, "push-constant block is 7 uints");

struct Dispatch {
  KernelParams params;
  uint32_t groups = 0;
};

// Splits the paths [firstPath, firstPath + paths) into dispatches of at most
// maxGroups groups; each starts a whole number of blocks after firstPath, so
// the blocks (and the result) do not depend on maxGroups. Any 64-bit count.
std::vector<Dispatch> planDispatches(const EmittedKernel& kernel, uint64_t firstPath, uint64_t paths,
                                     uint64_t seed, uint32_t maxGroups);

// Groups per dispatch: the engine's own limit, lowered to `requested`
// (DispatchOptions::maxGroups; 0 = no request). Results do not depend on it.
uint32_t dispatchGroupCap(uint32_t engineLimit, uint32_t requested);

// Groups per dispatch for a scratch kernel: one dispatch's scratch buffer
// (groups * workgroupSize * scratchSlots values) must fit `budgetBytes` and be
// indexable in 32 bits; at most `engineLimit`. Kernels without scratch get
// engineLimit. Throws std::runtime_error "<engine>: one workgroup's scratch
// (N bytes) exceeds the scratch budget of M bytes<where>" when not even one fits.
uint32_t scratchGroupCap(const EmittedKernel& kernel, uint32_t engineLimit, uint64_t budgetBytes,
                         const std::string& engine, const std::string& where = "");

// The scratch budget of a runtime that reports free device memory: `requested` when
// given (DispatchOptions::scratchBudget), else 80% of what is free plus the scratch
// buffer the kernel already holds (a larger one replaces it).
inline uint64_t scratchBudgetFromFree(uint64_t requested, uint64_t freeBytes, uint64_t heldBytes) {
  return requested ? requested : freeBytes / 10 * 8 + heldBytes;
}

// The inputs buffer: market m's input k at m*numInputs + k, in the kernel's
// precision. Throws std::invalid_argument on a shape mismatch.
std::vector<unsigned char> packInputs(const EmittedKernel& kernel, const std::vector<std::vector<double>>& inputs);

// Adds group partials in double, in the order they are given (block order); or, made with a
// sink, hands them to it as doubles instead (Kernel::runBlocks). Records when each dispatch's
// partials arrived and how long adding them took, from its construction (RunResult::dispatches).
class PartialSums {
 public:
  explicit PartialSums(const EmittedKernel& kernel, BlockSink* sink = nullptr);
  // `partials` holds groups * kernel.partialsPerGroup() values of the kernel's precision.
  void add(const void* partials, uint32_t groups);
  // Whether the groups' partials themselves are wanted (a sink: Kernel::runBlocks), so a runtime
  // may not add them up on the device.
  bool wantsBlocks() const { return sink_ != nullptr; }
  // A runtime that adds the partials on the device, in the same order and in double (same bits):
  // addedOnDevice() per dispatch, in order, as each one's sums are done (the timeline), then
  // setTotals() once with the run's sums, instead of add().
  void addedOnDevice(uint32_t groups);
  void setTotals(const std::vector<double>& totals);
  // The inputs are on the device: the setup's end (RunResult::setupSeconds).
  void markSetupDone();
  double setupSeconds() const { return setupSeconds_; }
  // One entry per add() or addedOnDevice(), in order; the device fields unset (DispatchRunner::deviceTimes
  // fills them).
  const std::vector<DispatchTiming>& timeline() const { return timeline_; }
  // One MarketResult per market; Greeks are 0 for value-only kernels.
  RunResult finish(uint64_t paths, uint64_t seed) const;

  // sums[i] += column i of `groups` rows of `per` values, row after row; split by columns over
  // `threads` threads (0: several when there are kParallelValues or more, else one), the same bits
  // either way. Public for tests.
  static void addColumns(const void* partials, uint32_t groups, double* sums, size_t per, Precision precision,
                         size_t threads = 0);
  static constexpr size_t kParallelValues = size_t{1} << 19;

 private:
  void addNow(const void* partials, uint32_t groups);
  double secondsSinceStart() const;
  EmittedKernel shape_;  // source dropped
  std::vector<double> sums_;  // per market: width sums then width squares
  BlockSink* sink_;
  std::vector<double> converted_;  // a launch's partials in double, for the sink
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double setupSeconds_ = 0;
  std::vector<DispatchTiming> timeline_;
};

// What a GPU runtime does for a run; runDispatches does the rest.
class DispatchRunner {
 public:
  virtual ~DispatchRunner() = default;
  // Buffers for dispatches of up to `maxGroups` groups (the run has `dispatches`
  // of them), and the packed inputs uploaded.
  virtual void upload(const std::vector<unsigned char>& inputs, uint32_t maxGroups, size_t dispatches) = 0;
  // How many dispatches one launch() may take (Vulkan records several per submit).
  virtual size_t dispatchesPerLaunch() const { return 1; }
  // Runs `batch` in order and adds each dispatch's partials to `sums`, in order.
  virtual void launch(std::span<const Dispatch> batch, PartialSums& sums) = 0;
  // After the run's last launch: a runtime that summed on the device hands `sums` the totals.
  virtual void collect(PartialSums& sums) { (void)sums; }
  // The device's times of the dispatches since upload(), in order (kernelSeconds, gapSeconds),
  // where the runtime measured them (DispatchOptions::timeline); by default none.
  virtual void deviceTimes(std::vector<DispatchTiming>& dispatches) const { (void)dispatches; }
};

// One run: inputs packed, paths split into dispatches of at most
// dispatchGroupCap(groupLimit, dispatch.maxGroups) groups from dispatch.pathOffset,
// launched through `runner`, partials summed in block order; seconds timed.
// Throws std::invalid_argument for zero paths or inputs of the wrong shape.
RunResult runDispatches(const EmittedKernel& kernel, const DispatchOptions& dispatch, uint32_t groupLimit,
                        const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed,
                        DispatchRunner& runner);
// Part of a run (Kernel::runBlocks): paths [first, first + paths) after dispatch.pathOffset, `first`
// a multiple of the kernel's pathsPerGroup(); the groups' partials go to `sink` in block order.
// Returns the seconds it took.
double runDispatchBlocks(const EmittedKernel& kernel, const DispatchOptions& dispatch, uint32_t groupLimit,
                         const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths,
                         uint64_t seed, DispatchRunner& runner, BlockSink& sink);

}  // namespace tapelab
