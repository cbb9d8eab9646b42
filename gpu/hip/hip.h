// The hip engine: the shared emitter's HIP dialect. hipRTC (libhiprtc.so,
// from ROCm) is looked for at run time: where it is found the engine is
// compile-only (code objects for settings.hip.arch, default gfx90a, built with
// -ffp-contract=off); where it is not, caps() says the engine is unavailable
// and why. No AMD GPU is available to the project, so no HIP kernel runs.
#pragma once
#include <memory>

#include "engine/engine.h"
#include "engine/settings.h"

namespace tapelab {

std::unique_ptr<Engine> makeHipEngine(const EngineSettings& settings);

}  // namespace tapelab
