#include "gpu/vulkan/spirv.h"

#include <shaderc/shaderc.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "gpu/host/compile.h"
#include "util/files.h"
#include "util/hash.h"

namespace tapelab::vulkan {

Spirv compileGlsl(const std::string& source, const std::string& sourcePath, const std::string& cacheDir) {
  static const std::string version = [] {
    unsigned int v = 0, r = 0;
    shaderc_get_spv_version(&v, &r);
    return "shaderc-spv" + std::to_string(v) + "." + std::to_string(r) + "-vk1.1-O0";
  }();
  Spirv out;
  // The entry is named by a hash of its key and holds the key (shaderc's version, the source's
  // length and hash), compared on a hit (util/files.h).
  const std::string key = "tapelab-spirv-v3|" + version + "|" + std::to_string(source.size()) + "|" + contentHash(source);
  std::filesystem::path cached;
  if (!cacheDir.empty()) {
    cached = std::filesystem::path(cacheDir) / "vulkan" / ("spirv-" + contentHash(key) + ".spv");
    const std::string words = readCacheEntry(cached, key).value_or("");  // "" when missing, foreign or damaged
    if (!words.empty() && words.size() % 4 == 0) {
      out.words.resize(words.size() / 4);
      std::memcpy(out.words.data(), words.data(), words.size());
      out.cacheHit = true;
      return out;
    }
  }
  shaderc_compiler_t compiler = shaderc_compiler_initialize();
  shaderc_compile_options_t options = shaderc_compile_options_initialize();
  shaderc_compile_options_set_target_env(options, shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
  // The driver optimises; spirv-opt would only add compile time.
  shaderc_compile_options_set_optimization_level(options, shaderc_optimization_level_zero);
  shaderc_compilation_result_t result = shaderc_compile_into_spv(
      compiler, source.data(), source.size(), shaderc_compute_shader, "tapelab.comp", "main", options);
  const bool ok = shaderc_result_get_compilation_status(result) == shaderc_compilation_status_success;
  std::string message = shaderc_result_get_error_message(result);
  if (ok) {
    const size_t bytes = shaderc_result_get_length(result);
    out.words.resize(bytes / 4);
    std::memcpy(out.words.data(), shaderc_result_get_bytes(result), bytes);
  }
  shaderc_result_release(result);
  shaderc_compile_options_release(options);
  shaderc_compiler_release(compiler);
  if (!ok) {
    const size_t nl = message.find('\n');
    throw std::runtime_error("vulkan: GLSL compile failed: " + message.substr(0, nl) +
                             " (source: " + sourceForError(sourcePath, "vulkan", "comp", source) + ")");
  }
  if (!cached.empty())  // an unwritable cache is ignored
    writeCacheEntry(cached, key, std::string_view(reinterpret_cast<const char*>(out.words.data()), out.words.size() * 4));
  return out;
}

}  // namespace tapelab::vulkan
