// The GPU kernel compiler, dialects as data.
//
// emitKernel takes a Tape (and, for checkpointed kinds, its Plan) to one compute kernel through named
// passes (emit.cpp lists them in order: storage, schedule, recompute, loops, draw keys, build, draws) that
// decide everything and build the kernel as data (ir.h), then a printer (print.h) that spells it. GLSL,
// OpenCL C, CUDA C and HIP differ only in a Dialect (dialect.h): a table of spellings (types, literal
// suffixes, bit casts, mul-hi, math names, the kernel's frame with its parameters, thread and group index,
// workgroup-local memory and barrier, `precise`). No language is produced by rewriting another.
//
// ---------------------------------------------------------------- kernel ABI
// T is float (fp32) or double (fp64); U is a 32-bit unsigned integer.
//
// Scalar parameters (GLSL: push-constant block `pc`, 7 x uint, std430 offsets
// 0..24, in this order; C dialects: kernel arguments 3..9 after the buffers):
//   seedLo, seedHi   the 64-bit seed
//   pathLo, pathHi   the 64-bit index of this dispatch's first path
//   count            paths in this dispatch (lanes past it add nothing)
//   zero             always 0, set by the host: the opaque identity's key
//   invocations      groups * workgroupSize of this dispatch (scratch SoA stride)
// Buffers (GLSL: set 0, bindings 0, 1, 2, std430; C dialects: arguments 0, 1, 2):
//   inputs   T[markets * numInputs]: market m's input k at m*numInputs + k
//   partials T[groups * markets * 2 * width], written, never read: for group g,
//            market m, at (g*markets + m)*2*width: `width` sums (value, then
//            d value/d input k in input order when greeks), then the same
//            `width` sums of squares. width = 1 + numInputs with greeks, else 1.
//   scratch  T[scratchSlots * invocations] (scratch kind or stored draws; any
//            1-element buffer otherwise): slot s of invocation
//            tid = g*workgroupSize + lid at aos tid*scratchSlots + s, soa
//            s*invocations + tid. The scratch kind's values first, then one slot per
//            draw index, in index order (config draws=stored, draws=prefill).
// Launch: `groups` workgroups of workgroupSize lanes (1-D). Group g of a
// dispatch prices the block of paths [g*B, (g+1)*B) of that dispatch, where
// B = workgroupSize * pathsPerLane; lane lid takes paths g*B + j*workgroupSize
// + lid, j < pathsPerLane, skipping those >= count.
// Reduction: each lane keeps Kahan sums (in T) of its paths' value, adjoints
// and their squares; the group adds the lanes' sums by a fixed binary tree in
// workgroup-local memory; the host adds the groups' partials in double in
// block order (gpu/host/dispatch.h). Blocks depend only on the path index as
// long as every dispatch starts at a multiple of B after the run's first path,
// so a result does not depend on how the host chunks its dispatches.
// Exactness: GLSL declares every value `precise`; OpenCL C starts with
// `#pragma OPENCL FP_CONTRACT OFF` and must be built without -cl-mad-enable
// or -cl-fast-relaxed-math; CUDA must be compiled with --fmad=false (and no
// --use_fast_math); HIP with -ffp-contract=off.
// ----------------------------------------------------------------------------
//
// Kernel kinds (KernelOptions::kind):
//   plain     forward sweep, then the reverse sweep over every kept value.
//   register  the forward sweep in one `{ }` block per plan segment; the
//             reverse sweep re-runs each segment's forward lines (last segment
//             first) from its bookmarks, read through opq(x) =
//             bits(x) ^ zero, and re-keys Philox through ^ zero, so a compiler
//             cannot merge the recomputation with the first computation.
//   tangent   vector forward mode (tape/tangent.h): the plain kernel's forward
//             sweep, each value followed by its tangents in the inputs of
//             KernelOptions::wrt (all when empty); no reverse sweep. The sums
//             are the plain kernel's: an input not differentiated sums nothing.
//   scratch   like register, but the values crossing a cut are stored to the
//             scratch buffer at the cut and loaded (at an address made opaque
//             by ^ zero) in the reverse sweep; Plan::storedAt says when.
// Draws 4g .. 4g+3 are the four words of one Philox call (tape/philox.h):
// each block of straight-line code (the plain forward sweep, a forward
// segment, a recompute) computes group g's call once, at the first draw of g
// it needs, and reads the words for g's later draws; likewise a Box-Muller
// pair (draws 2p, 2p + 1) once, at the first draw of the pair it needs.
// Constants are spelled opq(literal), in every kind, so the compiler cannot
// fold a constant subexpression in one kernel that another computes at run
// time. markets = M: draws and values that depend on no input, or only on the
// inputs the markets share (KernelOptions::sharedInputs, config shared_inputs;
// read from market 0), are computed once per path; every other value, and every
// adjoint, has one copy per market.
// Market order (config market_order, register and scratch kinds, M > 1):
//   joint       every block of the reverse sweep recomputes and reverses all
//               M markets at once: its live set grows with M.
//   sequential  each leaf block of the reverse sweep computes what no market
//               owns (its draws, constants) once, then one `{ }` block per
//               market: that market's imports, recompute, adjoints and reverse
//               rules, so a leaf's live set is its draws plus one market's.
//               What still grows with M: the bookmarks (register kind: in
//               registers; scratch kind: in the buffer), the adjoints crossing
//               blocks and the inputs' adjoints, and an inner block's bookmarks
//               (nested plans; inner blocks stay joint). Each market's
//               operations and their order are the joint kernel's: same bits.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "gpu/codegen/dialect.h"
#include "tape/tape.h"

namespace tapelab {

// Workgroup-local bytes the Kahan sums may take (the local arrays every API allows without opt-in).
inline constexpr size_t kMaxKahanLocalBytes = 48 * 1024;

struct EmittedKernel {
  std::string source;
  std::string entry;
  std::string dialect;
  Precision precision = Precision::F32;
  KernelKind kind = KernelKind::Plain;
  int workgroupSize = 64;
  int pathsPerLane = 4;
  int markets = 1;
  int numInputs = 0;
  int width = 1;         // sums per market: 1 + numInputs with greeks, else 1
  int scratchSlots = 0;  // scratch elements per invocation (scratch kind; and the stored draws)
  int segments = 1;
  std::vector<int> wrt;  // tangent kind: KernelOptions::wrt (the other inputs' Greeks come back NaN)
  // config shared_inputs in effect: the inputs read once (market 0's), which every dispatch's markets
  // must share bit for bit (packInputs refuses others), and their names.
  std::vector<int> sharedInputs;
  std::vector<std::string> sharedInputNames;
  // The config's fields that had no effect on this kernel, each with why (KernelStats::configUnused).
  std::vector<std::string> configUnused;
  bool outlinedDraws = false;  // tl_philox and tl_boxMuller out of line (config outline_draws, where it applies)
  // What each pass decided, in order, as text (emit.cpp's list; --dump writes it beside the source).
  std::vector<std::pair<std::string, std::string>> passes;

  uint32_t pathsPerGroup() const { return uint32_t(workgroupSize) * uint32_t(pathsPerLane); }
  int partialsPerGroup() const { return markets * 2 * width; }
  size_t scalarBytes() const { return precision == Precision::F32 ? 4 : 8; }
  // Bytes of `groups` groups' partial sums, and of their scratch buffer (0 without scratch slots).
  size_t partialBytes(uint64_t groups) const { return groups * size_t(partialsPerGroup()) * scalarBytes(); }
  size_t scratchBytes(uint64_t groups) const {
    return groups * size_t(workgroupSize) * size_t(scratchSlots) * scalarBytes();
  }
};

// Emits the kernel for `tape` under `options` (kind, plan, precision, greeks,
// markets, config: the layout and market order among its fields). The source's header names the config (configTextAll), so a cache keyed
// by the source is keyed by the config. Throws std::invalid_argument for a tape that fails
// validate(), a missing or mismatched plan, markets outside 1..8, or fp64 in
// a dialect without it. options.dumpDir is not used here (runtimes dump).
// Everything about how it is written, the workgroup size included, is options.config.
EmittedKernel emitKernel(const Tape& tape, const KernelOptions& options, const Dialect& dialect);

// Every pass's result, each under a "== name" line: what --dump writes beside the source.
std::string passesText(const EmittedKernel& kernel);

}  // namespace tapelab
