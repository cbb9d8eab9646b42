// GLSL to SPIR-V with shaderc, cached on disk: the vulkan engine's compiler.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tapelab::vulkan {

struct Spirv {
  std::vector<uint32_t> words;
  bool cacheHit = false;
  int dontInlineMarked = 0;  // functions carrying DontInline from the `dontInline` names
};

// Compiles a GLSL 450 compute shader for Vulkan 1.1 (no spirv-opt: the driver
// optimises), or loads it from cacheDir/vulkan ("" = no cache). Throws
// std::runtime_error with shaderc's first message line and a file holding the
// source (`sourcePath`, the dump, else one written now). The functions named in
// `dontInline` (GLSL names, without the signature glslang appends) get SPIR-V's
// DontInline function control: GLSL cannot say it (config outline_draws).
Spirv compileGlsl(const std::string& source, const std::string& sourcePath, const std::string& cacheDir,
                  const std::vector<std::string>& dontInline = {});

// Sets DontInline on every OpFunction whose OpName is one of `names` followed by "(" (glslang's
// mangling) or equal to it; returns how many functions it marked.
int markDontInline(std::vector<uint32_t>& words, const std::vector<std::string>& names);

}  // namespace tapelab::vulkan
