// The opencl engine: the shared emitter's OpenCL C dialect, built through the
// ICD loader. Device: settings.opencl.device (index or name substring; default
// the first GPU, else the first device); programs cached under settings.cacheDir.
// Plain, register and scratch kernels (aos/soa), 1..8 markets per dispatch, fp32
// (fp64 where the device has it).
#pragma once
#include <memory>

#include "engine/engine.h"
#include "engine/settings.h"

namespace tapelab {

std::unique_ptr<Engine> makeOpenCLEngine(const EngineSettings& settings);

}  // namespace tapelab
