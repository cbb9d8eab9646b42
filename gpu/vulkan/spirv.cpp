#include "gpu/vulkan/spirv.h"

#include <shaderc/shaderc.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "gpu/host/compile.h"
#include "util/files.h"
#include "util/hash.h"

namespace tapelab::vulkan {

int markDontInline(std::vector<uint32_t>& words, const std::vector<std::string>& names) {
  constexpr uint32_t kOpName = 5, kOpFunction = 54, kDontInline = 0x2, kInline = 0x1;
  std::vector<uint32_t> ids;  // the functions' result ids, from their OpName
  auto walk = [&](auto&& visit) {
    for (size_t i = 5; i < words.size();) {  // five header words, then instructions
      const uint32_t count = words[i] >> 16;
      if (count == 0 || i + count > words.size()) throw std::runtime_error("vulkan: malformed SPIR-V from shaderc");
      visit(words[i] & 0xFFFFu, i, count);
      i += count;
    }
  };
  walk([&](uint32_t op, size_t i, uint32_t count) {
    if (op != kOpName || count < 3) return;
    const char* text = reinterpret_cast<const char*>(&words[i + 2]);
    const std::string name(text, strnlen(text, (count - 2) * 4));
    for (const std::string& n : names)
      if (name == n || name.rfind(n + "(", 0) == 0) ids.push_back(words[i + 1]);
  });
  int marked = 0;
  walk([&](uint32_t op, size_t i, uint32_t count) {
    if (op != kOpFunction || count < 5) return;
    for (uint32_t id : ids)
      if (words[i + 2] == id) {
        words[i + 3] = (words[i + 3] & ~kInline) | kDontInline;
        ++marked;
      }
  });
  return marked;
}

Spirv compileGlsl(const std::string& source, const std::string& sourcePath, const std::string& cacheDir,
                  const std::vector<std::string>& dontInline) {
  static const std::string version = [] {
    unsigned int v = 0, r = 0;
    shaderc_get_spv_version(&v, &r);
    return "shaderc-spv" + std::to_string(v) + "." + std::to_string(r) + "-vk1.1-O0";
  }();
  Spirv out;
  // The entry is named by a hash of its key and holds the key (shaderc's version, the source's
  // length and hash), compared on a hit (util/files.h).
  std::string outlined;
  for (const std::string& n : dontInline) outlined += n + ",";
  const std::string key = "tapelab-spirv-v3|" + version + "|dont-inline:" + outlined + "|" + std::to_string(source.size()) +
                          "|" + contentHash(source);
  std::filesystem::path cached;
  if (!cacheDir.empty()) {
    cached = std::filesystem::path(cacheDir) / "vulkan" / ("spirv-" + contentHash(key) + ".spv");
    const std::string words = readCacheEntry(cached, key).value_or("");  // "" when missing, foreign or damaged
    if (!words.empty() && words.size() % 4 == 0) {
      out.words.resize(words.size() / 4);
      std::memcpy(out.words.data(), words.data(), words.size());
      out.cacheHit = true;
      if (!dontInline.empty()) out.dontInlineMarked = markDontInline(out.words, dontInline);  // marked already: counts
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
  if (!dontInline.empty()) out.dontInlineMarked = markDontInline(out.words, dontInline);  // 0 where nothing draws
  if (!cached.empty())  // an unwritable cache is ignored
    writeCacheEntry(cached, key, std::string_view(reinterpret_cast<const char*>(out.words.data()), out.words.size() * 4));
  return out;
}

}  // namespace tapelab::vulkan
