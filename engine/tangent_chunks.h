// A tangent kernel in chunks of inputs (config tangent_chunk=N): the inputs it differentiates by, N at a
// time, each chunk a tangent kernel of its own (KernelOptions::wrt = the chunk) run on the same paths and
// draws, one after another, their Greeks put together. The vector forward mode's chunk size (ForwardDiff's
// `Chunk`): a kernel's source, registers and compile grow with the tangents it carries, so a tape whose
// every value depends on most of 81 inputs (lmm-40: 22.6 MB of CUDA, NVRTC past 24 GB) compiles as kernels
// of N tangents each, at the price of its forward sweep once a chunk.
//
// Same bits: every chunk's forward sweep is the plain kernel's, so each returns the plain value's bits (the
// run checks that they agree, and throws if not); a Greek's tangent is carried in its own slot by the same
// rules whatever other slots the kernel carries, so it has the unchunked kernel's bits (tested on every
// engine here: Engines/TangentChunks).
#pragma once
#include <memory>
#include <vector>

#include "engine/engine.h"

namespace tapelab {

// The inputs of each chunk: differentiatedInputs(options) in order, options.config.tangentChunk at a time.
// One chunk (all of them) where the field is 0, the kernel is not a tangent kernel, or it computes no Greeks.
std::vector<std::vector<int>> tangentChunks(const KernelOptions& options, int numInputs);

// engine.compile(tape, options), except a tangent kernel with config tangent_chunk=N under the inputs it
// differentiates by: one kernel per chunk, compiled side by side on up to `jobs` threads (0: one per hardware
// thread; 1 where the caller already compiles side by side, as the tuner's shortlists), the rest left
// uncompiled once one fails, run as one Kernel. Where N is at least the inputs the kernel is that one kernel,
// its stats saying the field was not used. Every front end compiles through this.
std::unique_ptr<Kernel> compileKernel(Engine& engine, const Tape& tape, const KernelOptions& options, unsigned jobs = 0);

}  // namespace tapelab
