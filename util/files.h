// Files the caches and dumps share: one atomic write, one read, one cache directory.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tapelab {

// The whole file, or nullopt when it cannot be opened or read.
std::optional<std::string> readFile(const std::filesystem::path& path);

// Writes `bytes` to `path` as one step for every reader: a temporary file in the
// same directory, then rename, so concurrent writers leave one whole file and a
// reader never sees half of one. Creates the directory. Returns false, with the
// reason in *error, when it cannot (a cache ignores that; a dump reports it).
bool writeFileAtomic(const std::filesystem::path& path, std::string_view bytes, std::string* error = nullptr) noexcept;

// A compiled-kernel cache entry: `bytes` then a trailer line holding their length and
// XXH3-128, written atomically (writeFileAtomic). readCacheEntry returns the bytes
// only when the trailer is there and matches them, so a truncated, corrupt or
// foreign entry is a miss (rebuilt and overwritten), never loaded.
bool writeCacheEntry(const std::filesystem::path& path, std::string_view bytes, std::string* error = nullptr) noexcept;
std::optional<std::string> readCacheEntry(const std::filesystem::path& path);
// The trailer alone, for a file that must stay as it is (cpu-jit's .so): kept
// in `path`.sum; checkCacheSum is true when it matches the file's bytes.
bool writeCacheSum(const std::filesystem::path& path, std::string* error = nullptr) noexcept;
bool checkCacheSum(const std::filesystem::path& path);

// ".<pid>.<n>.tmp", unique to this call among the process's threads and the
// machine's processes: for a temporary file renamed into place afterwards.
std::string uniqueTempSuffix();

// The root of tapelab's compiled-kernel caches, from the variables' values
// (nullptr or "" = unset): TAPELAB_CACHE_DIR ("off": none), else
// $XDG_CACHE_HOME/tapelab, else $HOME/.cache/tapelab; "" = no cache. Each
// engine keeps its own folder below it (cpujit/, cuda/, opencl/, vulkan/).
std::string resolveCacheDir(const char* tapelabCacheDir, const char* xdgCacheHome, const char* home);

}  // namespace tapelab
