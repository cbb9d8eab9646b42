// Files: one atomic write, one way to read what a user names (a tape, a plan file) and to write
// what a user names (--out), one cache-entry record every compiled-kernel cache shares, one
// cache directory.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tapelab {

// ------------------------------------------------------------ inputs a user names

// Why an input cannot be read: what() is the reason alone ("no such file", "is a directory", ...);
// each reader puts the file and its own prefix before it (tape/textformat.h, planner/planfile.h).
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A file read in chunks, never more than `maxBytes` in all, so that no input (`/dev/zero`, a
// runaway pipe) grows memory past what its reader states: a regular file, a pipe (`<(...)`),
// /dev/stdin. The constructor throws InputError naming why a file cannot be opened: missing, a
// symbolic link to a file that does not exist (and where it points), a loop of links, a
// directory, permission denied.
class InputFile {
 public:
  InputFile(const std::string& path, uint64_t maxBytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  // The next bytes (at most 64 KiB), empty at the end. Throws InputError when a read fails or
  // the file goes past maxBytes ("larger than the limit of N bytes").
  std::string_view next();
  uint64_t bytesRead() const { return read_; }

 private:
  int fd_ = -1;
  uint64_t max_ = 0, read_ = 0;
  std::string buf_;
};

// The whole of a small input a user names (a shortlist, a peer CSV) through InputFile: at most
// maxBytes, a FIFO or /dev/stdin read to its end, a directory or /dev/zero refused; throws
// InputError with the reason alone, as InputFile does.
std::string readInputText(const std::string& path, uint64_t maxBytes);

// "1 GiB", "64 KiB", "1000 bytes": a limit as messages state it.
std::string byteCount(uint64_t bytes);

// ------------------------------------------------------------ outputs a user names

// An output refused for what it is (exit 2): a directory, an input of the same run, ...
struct OutputRefused : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// From this call on, every regular file an InputFile opens is an input of this run: writeOutputFile,
// checkOutputFile and OutputFile refuse it as they refuse the `inputs` they are given (a --dump, a
// figure, a shortlist can never replace the tape or plan the run read, whatever names it). The CLI
// and the C++ drivers call it first thing (one process, one run); a library user (Python) passes the
// inputs it means instead.
void guardRunInputs();

// Writes `bytes` to `path`, a file a user named for output (every --out goes through here):
//  * a symbolic link is followed: the file it names is written (a dangling link: the file it names
//    is created), never replaced by a regular file;
//  * a regular file, or none yet: the bytes go to a temporary file beside it, then a rename puts
//    them in place (a reader never sees half a file; an existing file's permission bits are kept);
//  * a FIFO or a character device (/dev/stdout, /dev/null) is written in place, never replaced;
//  * a directory, a block device or a socket is refused (OutputRefused), and so is the same file
//    (device and inode, through any link or name) as one of `inputs`, the run's own inputs (and,
//    after guardRunInputs(), every file the run has read).
// A failed write (ENOSPC, EACCES, EROFS, ...) throws std::runtime_error "`what` FILE: cannot
// write: reason" and leaves no temporary file; refusals read "`what` FILE: reason".
void writeOutputFile(const std::string& path, std::string_view bytes, const std::vector<std::string>& inputs = {},
                     const std::string& what = "--out");

// The refusals of writeOutputFile alone, nothing written (throws OutputRefused as it does): for a
// command that runs long before it writes a whole file (an experiment driver) to refuse its --out
// before the run, not after it.
void checkOutputFile(const std::string& path, const std::vector<std::string>& inputs = {},
                     const std::string& what = "--out");

// An output a user names that is written as it goes (an experiment's CSV, each row as it finishes,
// so that a run cut short keeps the rows it measured): the refusals of writeOutputFile (a directory,
// a block device, a socket, an input of the same run: OutputRefused from the constructor), a
// symbolic link followed to the file it names, a FIFO or a character device written in place.
// A regular file is written in place too, no temporary file and rename: emptied when opened (after
// the checks, never before), its rows are there as they are written, and a run stopped midway leaves
// the rows written so far. Every failure throws std::runtime_error "`what` FILE: cannot write:
// reason" (ENOSPC, EACCES, EIO; a close that fails). The destructor closes without reporting: call
// close() to know that everything was written.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path, const std::vector<std::string>& inputs = {},
                      const std::string& what = "--out");
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // All of `bytes`, or a throw; nothing is buffered here.
  void write(std::string_view bytes);
  void close();
  // The name as messages give it: "FILE", or "LINK (-> FILE)".
  const std::string& name() const { return shown_; }

 private:
  int fd_ = -1;
  std::string what_, shown_;
};

// ------------------------------------------------------------ files tapelab writes itself

// Writes `bytes` to `path` as one step for every reader: a temporary file in the
// same directory, then rename, so concurrent writers leave one whole file and a
// reader never sees half of one. Creates the directory. Returns false, with the
// reason in *error, when it cannot (a cache ignores that; a dump reports it).
// The temporary file is removed if the process is stopped meanwhile (util/process.h).
bool writeFileAtomic(const std::filesystem::path& path, std::string_view bytes, std::string* error = nullptr) noexcept;

// A regular file's bytes (through links), at most maxBytes; nullopt for anything else: missing, a
// directory, a FIFO (never waited on), a device, larger than maxBytes, unreadable.
inline constexpr uint64_t kMaxCacheFileBytes = uint64_t{1} << 30;  // 1 GiB: the largest kernel object a cache reads
std::optional<std::string> readFile(const std::filesystem::path& path, uint64_t maxBytes = kMaxCacheFileBytes);

// ------------------------------------------------------------ compiled-kernel caches
//
// Every cache (cpu-jit's objects and precompiled header, SPIR-V, Vulkan's pipeline cache, OpenCL
// binaries, NVRTC's PTX and CUBIN, HIP code objects, the tuning cache) names an entry by a hash
// of its key and stores the whole key inside the checked record, so that an entry is used only
// by the key it was made for: another kernel's entry copied or renamed over this name, a hash
// collision, a truncated or corrupt file are all misses, rebuilt and overwritten. Entries are
// read only from regular files that are not symbolic links (a link to /dev/zero, a FIFO, a
// directory in an entry's place are misses, never read or waited on) and at most maxBytes;
// whatever sits in an entry's place is replaced when the entry is rebuilt (a directory too).
//
// An entry file: "tapelab-cache-entry 2 <key bytes> <payload bytes> <XXH3-128 of key and
// payload>\n" then the key, then the payload.
bool writeCacheEntry(const std::filesystem::path& path, std::string_view key, std::string_view payload,
                     std::string* error = nullptr) noexcept;
// The payload when the entry is whole and was written for `key`; nullopt otherwise.
std::optional<std::string> readCacheEntry(const std::filesystem::path& path, std::string_view key,
                                          uint64_t maxBytes = kMaxCacheFileBytes);
// The key an entry holds when it is whole (tests, fuzz/fuzz_cacheentry.cpp); nullopt otherwise.
std::optional<std::string> cacheEntryKey(const std::filesystem::path& path, uint64_t maxBytes = kMaxCacheFileBytes);
// The record alone, for a file that must stay as it is (cpu-jit's .so, its precompiled header):
// `path`.sum holds "tapelab-cache-sum 2 <key bytes> <file bytes> <XXH3-128 of the file>\n" and the key.
bool writeCacheSum(const std::filesystem::path& path, std::string_view key, std::string* error = nullptr) noexcept;
// True when `path` is a regular file (not a link) of at most maxBytes whose sum matches it and `key`.
bool checkCacheSum(const std::filesystem::path& path, std::string_view key, uint64_t maxBytes = kMaxCacheFileBytes);
// The key `path`.sum names when it matches the file (tests); nullopt otherwise.
std::optional<std::string> cacheSumKey(const std::filesystem::path& path, uint64_t maxBytes = kMaxCacheFileBytes);
// Removes whatever is at `path` unless it is a regular file (a symbolic link, FIFO, device node,
// directory and what it holds), so that a rebuilt entry can be renamed into its place. False with
// *error when something stays.
bool clearCacheSlot(const std::filesystem::path& path, std::string* error = nullptr) noexcept;
// clearCacheSlot, then writeFileAtomic: a cache file that is not a record (cpu-jit's sources).
bool writeCacheFile(const std::filesystem::path& path, std::string_view bytes, std::string* error = nullptr) noexcept;
// A cache file's bytes when it is a regular file and not a link, at most maxBytes; else nullopt.
std::optional<std::string> readCacheFile(const std::filesystem::path& path, uint64_t maxBytes = kMaxCacheFileBytes);

// ".<pid>.<n>.tmp", unique to this call among the process's threads and the
// machine's processes: for a temporary file renamed into place afterwards.
std::string uniqueTempSuffix();

// The root of tapelab's compiled-kernel caches, from the variables' values
// (nullptr or "" = unset): TAPELAB_CACHE_DIR ("off": none), else
// $XDG_CACHE_HOME/tapelab, else $HOME/.cache/tapelab; "" = no cache. Each
// engine keeps its own folder below it (cpujit/, cuda/, opencl/, vulkan/).
std::string resolveCacheDir(const char* tapelabCacheDir, const char* xdgCacheHome, const char* home);

}  // namespace tapelab
