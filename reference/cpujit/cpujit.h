// cpu-jit: each tape compiled to native SIMD code (xsimd, one lane per path)
// by the system C++ compiler at run time, cached on disk, loaded with dlopen.
// fp64 by default, fp32 on request; plain and register-checkpointed kernels.
// Settings (engine/settings.h): threads (worker threads, default all cores),
// cacheDir, cpuJit.compiler, cpuJit.precompiledHeader; the kernel's configuration
// (engine/config.h): jit.chunk (most nodes per generated function, default 256),
// jit.part (tapes longer than this many nodes, default 4096, are split into
// translation units of about that size, compiled in parallel); KernelOptions::dumpDir
// also writes the source there. Their variables: api/knobs.h and reference/cpujit/README.md.
#pragma once
#include <memory>

#include "engine/engine.h"
#include "engine/settings.h"

namespace tapelab {

std::unique_ptr<Engine> makeCpuJitEngine(const EngineSettings& settings);

}  // namespace tapelab
