// Test hooks into cpu-jit's generated code (not part of the engine interface).
#pragma once
#include <cstdint>
#include <vector>

#include "api/engine.h"

namespace tapelab {

struct JitDraw {
  double u, z;  // the uniform and the normal, in the kernel's precision, widened
};

// Draw k of paths firstPath, firstPath+1, ... (one per SIMD lane) exactly as a
// generated kernel computes it.
std::vector<JitDraw> cpuJitDraws(Precision precision, uint64_t seed, uint64_t firstPath, uint32_t k);

}  // namespace tapelab
