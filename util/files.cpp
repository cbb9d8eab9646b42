#include "util/files.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

namespace tapelab {

namespace fs = std::filesystem;

std::optional<std::string> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

std::string uniqueTempSuffix() {
  static std::atomic<unsigned long> counter{0};
  return "." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)) + ".tmp";
}

bool writeFileAtomic(const fs::path& path, std::string_view bytes, std::string* error) noexcept {
  try {
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    const fs::path tmp = path.string() + uniqueTempSuffix();
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      out.close();
      if (!out) {
        fs::remove(tmp, ec);
        if (error) *error = "cannot write " + tmp.string();
        return false;
      }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
      if (error) *error = "cannot move " + tmp.string() + " to " + path.string() + ": " + ec.message();
      fs::remove(tmp, ec);
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

std::string resolveCacheDir(const char* tapelabCacheDir, const char* xdgCacheHome, const char* home) {
  if (tapelabCacheDir && *tapelabCacheDir) return std::string(tapelabCacheDir) == "off" ? "" : tapelabCacheDir;
  if (xdgCacheHome && *xdgCacheHome) return (fs::path(xdgCacheHome) / "tapelab").string();
  if (home && *home) return (fs::path(home) / ".cache" / "tapelab").string();
  return "";
}

}  // namespace tapelab
