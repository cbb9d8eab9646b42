// Test hooks into cpu-jit's generated code (not part of the engine interface).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "engine/settings.h"

namespace tapelab {

struct JitDraw {
  double u, z;  // the uniform and the normal, in the kernel's precision, widened
};

// Draw k of paths firstPath, firstPath+1, ... (one per SIMD lane) exactly as a
// generated kernel computes it.
std::vector<JitDraw> cpuJitDraws(const EngineSettings& settings, Precision precision, uint64_t seed,
                                 uint64_t firstPath, uint32_t k);

// The generated code's exp and log (tl_exp, tl_log) next to xsimd::exp and
// xsimd::log, lane-wise over `args` converted to the kernel's precision.
struct JitMath {
  std::vector<double> args, exp, xsimdExp, log, xsimdLog;
};
JitMath cpuJitMath(const EngineSettings& settings, Precision precision, const std::vector<double>& args);

}  // namespace tapelab
