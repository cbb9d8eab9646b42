// The cuda engine: the shared emitter's CUDA C dialect, compiled by NVRTC
// (--fmad=false, no fast-math) and run through the driver API, which is
// loaded at run time. Without libcuda.so.1 the engine is compile-only: it
// compiles every kernel kind (statistics from ptxas) and run() throws
// EngineUnavailable. Settings: cuda.device (index; unset: deviceSlot mod the
// device count, 0 in one process), the target when
// no driver says otherwise (cuda.archMajor/archMinor: sm_90), cacheDir (cuda/).
#pragma once
#include <memory>
#include <string>

#include "engine/engine.h"
#include "engine/settings.h"

namespace tapelab {

std::unique_ptr<Engine> makeCudaEngine(const EngineSettings& settings);

// CUDA C to PTX for compute_90 (the H200's sm_90) with the engine's
// exactness options; needs no driver and runs no ptxas. Throws
// std::runtime_error carrying NVRTC's log when the source does not compile.
std::string compilePtx(const std::string& source);

}  // namespace tapelab
