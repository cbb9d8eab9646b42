// The hip engine: the shared emitter's HIP dialect, compiled by hipcc to one
// AMD code object per target of settings.hip.arch (TAPELAB_HIP_ARCH, comma-
// separated; default gfx1103,gfx90a: the article's Radeon 780M and a CDNA2
// MI200), cached under cacheDir/hip. Statistics come from each code object's
// metadata (gpu/hip/codeobject.h). Kernels run through the HIP runtime
// (libamdhip64, loaded at run time) on the first target the device takes;
// without an AMD GPU the engine is compile-only and run() throws
// EngineUnavailable; without hipcc it is unavailable and caps() says why.
#pragma once
#include <memory>

#include "engine/engine.h"
#include "engine/settings.h"

namespace tapelab {

std::unique_ptr<Engine> makeHipEngine(const EngineSettings& settings);

}  // namespace tapelab
