// The host half of the kernel ABI in emit.h, shared by every GPU runtime:
// scalar parameters, how a run is split into dispatches, the inputs buffer,
// the double reduction of the groups' partials, and dumping the source.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "api/engine.h"
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

// TAPELAB_PATH_OFFSET: the index of a run's first path (default 0), honoured
// by every GPU engine so tests can price paths beyond 2^32. Throws
// std::invalid_argument naming the variable for a malformed value.
uint64_t pathOffsetFromEnvironment();

// TAPELAB_MAX_GROUPS: at most this many groups per dispatch (default: the
// engine's own limit, `engineLimit`); planDispatches applies it, so every GPU
// engine honours it. Results do not depend on it (the chunking property and
// dispatch-size experiments set it). Throws std::invalid_argument naming the
// variable for a value that is not a positive 32-bit integer.
uint32_t maxGroupsFromEnvironment(uint32_t engineLimit);

// TAPELAB_SCRATCH_BUDGET: bytes of scratch buffer one launch may use (0 when unset:
// the engine derives it from the device), so a test can force a launch to be chunked.
uint64_t scratchBudgetFromEnvironment();

// The emitter's knobs for runtimes: defaults, except TAPELAB_OPAQUE=0 (an
// experiment: drop the opaque identity to see the compiler merge the
// recomputation) and TAPELAB_UNROLL_DRAWS=0|1 (keep Philox's rounds rolled).
// Throws std::invalid_argument for a malformed value.
EmitOptions emitOptionsFromEnvironment();

// The inputs buffer: market m's input k at m*numInputs + k, in the kernel's
// precision. Throws std::invalid_argument on a shape mismatch.
std::vector<unsigned char> packInputs(const EmittedKernel& kernel, const std::vector<std::vector<double>>& inputs);

// Adds group partials in double, in the order they are given (block order).
class PartialSums {
 public:
  explicit PartialSums(const EmittedKernel& kernel);
  // `partials` holds groups * kernel.partialsPerGroup() values of the kernel's precision.
  void add(const void* partials, uint32_t groups);
  // One MarketResult per market; Greeks are 0 for value-only kernels.
  RunResult finish(uint64_t paths, uint64_t seed) const;

 private:
  EmittedKernel shape_;  // source dropped
  std::vector<double> sums_;  // per market: width sums then width squares
};

// 128-bit FNV-1a-based content hash as 32 hex digits, for cache keys and dump names.
std::string contentHash(const std::string& text);

// Where to dump sources: options.dumpDir, else TAPELAB_DUMP, else "".
std::string dumpDirFor(const KernelOptions& options);

// Writes `source` to DIR/tapelab-<stem>-<hash>.<ext> (creating DIR) and
// returns the path; "" when dir is "". Throws std::runtime_error when it
// cannot write.
std::string dumpSource(const std::string& dir, const std::string& stem, const std::string& ext,
                       const std::string& source);

// A file holding `source` for an error message: `dumped` (the TAPELAB_DUMP copy) when
// there is one, else a copy written now to $TMPDIR/tapelab-failed/, else a hint to
// set TAPELAB_DUMP. Never throws: it runs while another error is being reported.
std::string sourceForError(const std::string& dumped, const std::string& stem, const std::string& ext,
                           const std::string& source) noexcept;

// TAPELAB_CACHE_DIR, else $XDG_CACHE_HOME/tapelab, else $HOME/.cache/tapelab;
// "" when none can be determined or TAPELAB_CACHE_DIR=off.
std::string gpuCacheDir();

}  // namespace tapelab
