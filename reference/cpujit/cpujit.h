// cpu-jit: each tape compiled to native SIMD code (xsimd, one lane per path)
// by the system C++ compiler at run time, cached on disk, loaded with dlopen.
// fp64 by default, fp32 on request; plain and register-checkpointed kernels.
// Knobs: TAPELAB_THREADS (worker threads, default all cores), TAPELAB_CACHE_DIR,
// TAPELAB_CXX (compiler), TAPELAB_DUMP (also write the source there),
// TAPELAB_JIT_CHUNK (most nodes per generated function, default 256),
// TAPELAB_JIT_PART (tapes longer than this many nodes, default 4096, are
// split into translation units of about that size, compiled in parallel),
// TAPELAB_JIT_PCH=0 (no precompiled xsimd header). See reference/cpujit/README.md.
#pragma once
#include <memory>

#include "api/engine.h"

namespace tapelab {

std::unique_ptr<Engine> makeCpuJitEngine();

}  // namespace tapelab
