// The cuda engine: the shared emitter's CUDA C dialect, compiled by NVRTC
// (--fmad=false, no fast-math) and run through the driver API, which is
// loaded at run time. Without libcuda.so.1 the engine is compile-only: it
// compiles every kernel kind (statistics from ptxas) and run() throws
// EngineUnavailable. Device: TAPELAB_CUDA_DEVICE (index, default 0); target
// when no driver says otherwise: sm_90, or TAPELAB_CUDA_ARCH (e.g. sm_80).
#pragma once
#include <memory>
#include <string>

#include "api/engine.h"

namespace tapelab {

std::unique_ptr<Engine> makeCudaEngine();

// CUDA C to PTX for compute_90 (the H200's sm_90) with the engine's
// exactness options; needs no driver and runs no ptxas. Throws
// std::runtime_error carrying NVRTC's log when the source does not compile.
std::string compilePtx(const std::string& source);

}  // namespace tapelab
