#include "util/files.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "util/hash.h"

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

namespace {
const std::string kTrailerTag = "\ntapelab-cache-entry ";
std::string trailer(std::string_view bytes) {
  return kTrailerTag + std::to_string(bytes.size()) + " " + contentHash(bytes) + "\n";
}
// The payload of `file` when it ends with its own trailer.
std::optional<std::string> payloadOf(std::string file) {
  const size_t at = file.rfind(kTrailerTag);
  if (at == std::string::npos) return std::nullopt;
  const std::string_view payload(file.data(), at);
  if (file.compare(at, std::string::npos, trailer(payload)) != 0) return std::nullopt;
  file.resize(at);
  return file;
}
}  // namespace

bool writeCacheEntry(const fs::path& path, std::string_view bytes, std::string* error) noexcept {
  try {
    std::string entry(bytes);
    entry += trailer(bytes);
    return writeFileAtomic(path, entry, error);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

std::optional<std::string> readCacheEntry(const fs::path& path) {
  std::optional<std::string> file = readFile(path);
  if (!file) return std::nullopt;
  return payloadOf(std::move(*file));
}

bool writeCacheSum(const fs::path& path, std::string* error) noexcept {
  try {
    const std::optional<std::string> bytes = readFile(path);
    if (!bytes) {
      if (error) *error = "cannot read " + path.string();
      return false;
    }
    return writeFileAtomic(path.string() + ".sum", trailer(*bytes), error);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

bool checkCacheSum(const fs::path& path) {
  const std::optional<std::string> bytes = readFile(path);
  const std::optional<std::string> sum = readFile(path.string() + ".sum");
  return bytes && sum && *sum == trailer(*bytes);
}

std::string resolveCacheDir(const char* tapelabCacheDir, const char* xdgCacheHome, const char* home) {
  if (tapelabCacheDir && *tapelabCacheDir) return std::string(tapelabCacheDir) == "off" ? "" : tapelabCacheDir;
  if (xdgCacheHome && *xdgCacheHome) return (fs::path(xdgCacheHome) / "tapelab").string();
  if (home && *home) return (fs::path(home) / ".cache" / "tapelab").string();
  return "";
}

}  // namespace tapelab
