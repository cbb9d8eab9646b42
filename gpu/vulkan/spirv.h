// GLSL to SPIR-V with shaderc, cached on disk: the vulkan engine's compiler.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tapelab::vulkan {

struct Spirv {
  std::vector<uint32_t> words;
  bool cacheHit = false;
};

// Compiles a GLSL 450 compute shader for Vulkan 1.1 (no spirv-opt: the driver
// optimises), or loads it from cacheDir/vulkan ("" = no cache). Throws
// std::runtime_error with shaderc's first message line and a file holding the
// source (`sourcePath`, the dump, else one written now).
Spirv compileGlsl(const std::string& source, const std::string& sourcePath, const std::string& cacheDir);

}  // namespace tapelab::vulkan
