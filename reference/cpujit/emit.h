// cpu-jit's code generator: one tape (plain, or register-checkpointed after a
// Plan) as a C++ translation unit in which each xsimd lane is one path.
//
// Shape of the generated code (T = double or float, B = xsimd::batch<T>):
//   - Draws: per batch of W paths, Philox words for every draw index are made
//     W (or 2W) lanes at a time, turned into uniforms and Box-Muller pairs of
//     normals with the expressions of tape/philox.h, and kept in a draw cache
//     shared by every market and by the reverse sweep's recomputation (on a
//     CPU that memory is cheap).
//   - Nodes: every forward and adjoint rule is ops.def's text spelled through
//     tape/spell.h (sel -> xsimd::select, exp/log -> xsimd's, zero -> a zero batch).
//   - Functions: a plain tape of at most `chunkNodes` nodes is one function
//     (forward then reverse, values in locals). Longer tapes are cut into
//     chunks, one noinline function each, so the C++ compiler's time stays
//     near-linear in tape length; values that cross functions go through a
//     workspace array. A register kernel runs one function per segment forward
//     (storing the persistent values), then, last segment first, one function
//     per segment that reloads the segment's bookmarks through an opaque
//     identity (x ^ zero, zero = 0 at run time) and recomputes the segment
//     before sweeping its adjoints. Adjoints of persistent values live at
//     "function scope" (the workspace); the others are locals of their block.
//   - Plain and register kernels perform the same float operations in the
//     same order (ops.def's rules, descending node index, contribution to a
//     then b), so they return the same bits.
//   - Tangent kind: the same forward functions, each value followed by its
//     tangents (ops.def's adjoint rules with the argument's tangent as d,
//     tape/tangent.h); tangents crossing functions share the value workspace;
//     the output's tangents go to the adjoint slots the driver sums (IND[k] = k).
//   - Sums: per-lane Kahan sums (in T) of the value, each adjoint and their
//     squares over one block of paths; lanes combined in lane order in double.
//
// The fixed code around the tape (types, draws, exp/log, the exported
// functions of abi.h) is runtime/*.h, embedded at build time (runtime_text.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "planner/plan.h"
#include "tape/tangent.h"
#include "tape/tape.h"

namespace tapelab {

struct JitSpec {
  Precision precision = Precision::F64;
  bool greeks = true;
  const Plan* plan = nullptr;  // nullptr or one segment: the plain kernel
  // The tangent kind (tape/tangent.h): forward functions only, each node's tangents
  // beside its value; the output's tangent in slot s lands in adjoint slot inputs[s].
  const TangentSlots* tangents = nullptr;
  int chunkNodes = 256;        // most nodes per generated function (config jit.chunk)
  std::string configText;      // the kernel's config (engine/config.h), in the source's header
  int partNodes = 4096;        // longer tapes: extra translation units of about this many nodes
};

struct JitSource {
  std::vector<std::string> parts;  // translation units; parts[0] holds the exported functions
  int functions = 0;     // generated per-chunk / per-segment functions
  int valueSlots = 0;    // values stored in the workspace between functions
  int adjointSlots = 0;  // adjoints shared between functions
};

// Throws std::invalid_argument when the plan does not belong to the tape.
JitSource emitCpuJit(const Tape& tape, const JitSpec& spec);

// The fixed part every kernel starts with (the precision, then runtime/runtime.h:
// types, Philox, Box-Muller, exp/log), ending inside an anonymous namespace: for probes and tests.
std::string cpuJitPrelude(Precision precision);

}  // namespace tapelab
