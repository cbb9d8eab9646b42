// The loads-ahead pass: a rolled loop over markets reads the next market's element of an array it does not
// write while this market's work runs.
//
// A register kernel's reverse market loop (config markets=loop) starts each market by reading that market's
// bookmark from a per-lane array (`w109 = tl_bm[row + m]`): local memory written in the forward sweep long
// before, so a load from L2 or DRAM that the market's first instructions wait for, once per market and trip
// (on the H100 the 7-market Asian's register kernel waited on L1TEX in 44.6% of its cycles between issues,
// 2026-12-06d call 1). The pass rotates such a read through a variable: loaded for market 0 before the loop,
// as early before the loop as what the load reads allows (past the trip's recompute of its draws), and, right
// after each market's read, the next market's element loaded into it (the last market reloads its own: every
// address stays in bounds). The same elements are read: the same bits.
//
// Arrays the loop writes, at its own elements only (config loads_ahead=rows): a market loop's per-market adjoint rows (`ds3[m] += t`,
// `tl_dbm[later row + m] += ...`) are read and written at `k + m` with k a provable multiple of the markets (a
// literal multiple, a product with one, sums of them; the build's rows by the trip's parity are). Trip m then
// touches only elements congruent to m, so no earlier trip and no statement of this one writes the next
// market's element of any such index: its first read in a trip, while the trip has not yet written the array
// (a declaration reading it, or its first addition, `A[i] += t` becoming `A[i] = ahead + (t)`), is loaded a
// market ahead too. On the 7-market Asian's register kernel Nsight put 47% of the warps' L1TEX waits on the
// reverse market loop's reads of ds3, ds4 and the later trip's row (2026-12-06e, call 3).
//
// The C dialects only (config loads_ahead applies to OpenCL, CUDA and HIP): on lavapipe the rotated reads of a
// 3-market register kernel's reverse segment returned other bits than the reads in place (the GLSL is the same
// program; Regressions.BitKeepingRewritesKeepTheBits found it), so Vulkan kernels keep them in place.
//
// Where (config loads_ahead=on): a rolled loop `for (int m = 0; m < N; ++m)` (a market loop) without a barrier;
// with config
// loads_ahead=loops also `for (unsigned t = 0; t < N; ++t)` (the rolled segments' trips: the stored draws and
// the bookmarks a reverse trip reads, one trip ahead); a declaration its body runs once a trip (at the top
// level of the body or of a block in it) whose value reads `A[i]` with A an array the loop does not write (no
// assignment to an element of A, A not declared in it), or writes at its own elements only (above), and i
// built from the loop's variable, the constants the body declares first from it (a trip's `tl_sg = trips - 1 -
// tl_sr`) and names the loop neither declares nor assigns.
//
// Into the cache (config loads_ahead=prefetch, where the dialect spells a prefetch): a rolled segments' loop
// (`for (unsigned t = 0; t < N; ++t)`) that does not write the global buffer `scratch` but reads it at indices
// built as above (a reverse trip's stored draws) starts each trip by prefetching the elements the next trip
// reads into L2 (the last trip its own: every address stays in bounds). Nothing is held in a register and no
// value changes: the next trip's loads then wait on L2, not on DRAM (each reverse trip of the 7-market Asian's
// register kernel starts with 16 loads of stored draws that its first instructions need). Where the elements
// are K consecutive slots of the SoA scratch (K <= 32: a trip's stored draws), one prefetch a lane names them
// all: lane l the slot c0 + l % K at its warp's first path, whose 128-byte line holds the warp's 32 paths.
#pragma once
#include <string>

#include "gpu/codegen/ir.h"

namespace tapelab {

struct LoadsAhead {
  int loops = 0;  // loops with at least one read loaded ahead
  int reads = 0;  // reads loaded ahead
  int ownReads = 0;  // of which reads of arrays the loop writes at its own elements (loads_ahead=rows)
};

// everyLoop: the rolled segments' and time loops too (config loads_ahead=loops), not only the market loops;
// ownElements: the arrays a loop writes only at its own elements too (config loads_ahead=rows).
LoadsAhead loadAhead(ir::KernelIR& kernel, bool everyLoop, bool ownElements = false);
std::string toText(const LoadsAhead& ahead);

struct Prefetches {
  int loops = 0;   // rolled segments' loops that prefetch
  int reads = 0;   // elements prefetched a trip
  int spread = 0;  // loops whose elements are consecutive slots of the SoA scratch: one prefetch, a slot a lane
};
// The pass's prefetches of `buffer`'s elements (config loads_ahead=prefetch); the IR's Stmt::Kind::Prefetch.
Prefetches prefetchAhead(ir::KernelIR& kernel, const std::string& buffer);
std::string toText(const Prefetches& prefetches);

}  // namespace tapelab
