// The opencl engine: the shared emitter's OpenCL C dialect, built through the
// ICD loader. Device: TAPELAB_OPENCL_DEVICE (index or name substring; default
// the first GPU, else the first device). Plain, register and scratch kernels
// (aos/soa), 1..8 markets per dispatch, fp32 (fp64 where the device has it).
#pragma once
#include <memory>

#include "api/engine.h"

namespace tapelab {

std::unique_ptr<Engine> makeOpenCLEngine();

}  // namespace tapelab
