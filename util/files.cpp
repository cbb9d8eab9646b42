#include "util/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>

#include "util/hash.h"
#include "util/process.h"

namespace tapelab {

namespace fs = std::filesystem;

namespace {

constexpr size_t kChunk = 64 * 1024;

std::string errnoText(int e) { return std::strerror(e); }

// Why `path` cannot be opened for reading, in words a user can act on.
std::string openFailure(const std::string& path, int e) {
  if (e == ENOENT) {
    struct stat l {};
    if (::lstat(path.c_str(), &l) == 0 && S_ISLNK(l.st_mode)) {
      std::error_code ec;
      const fs::path target = fs::read_symlink(path, ec);
      return "a symbolic link to '" + (ec ? std::string("?") : target.string()) + "', which does not exist";
    }
    return "no such file";
  }
  if (e == ELOOP) return "a loop of symbolic links (" + errnoText(e) + ")";
  if (e == EACCES) return "permission denied";
  if (e == EISDIR) return "a directory, not a file";
  return errnoText(e);
}

// Reads all of fd (a regular file), at most maxBytes; false when larger or on a read error.
bool readAll(int fd, uint64_t maxBytes, std::string& out) {
  char buf[kChunk];
  for (;;) {
    const ssize_t k = ::read(fd, buf, sizeof buf);
    if (k == 0) return true;
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (out.size() + static_cast<uint64_t>(k) > maxBytes) return false;
    out.append(buf, static_cast<size_t>(k));
  }
}

// A regular file's bytes; `followLinks` false: a symbolic link in the last component is refused.
// Opened without blocking, so a FIFO in the way never hangs (it is then refused as not regular).
std::optional<std::string> readRegular(const fs::path& path, uint64_t maxBytes, bool followLinks) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followLinks ? 0 : O_NOFOLLOW));
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) <= maxBytes) {
    std::string bytes;
    bytes.reserve(static_cast<size_t>(st.st_size));
    if (readAll(fd, maxBytes, bytes)) out = std::move(bytes);
  }
  ::close(fd);
  return out;
}

}  // namespace

// ------------------------------------------------------------ inputs

std::string byteCount(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

namespace {

// guardRunInputs(): the regular files this run has read (device, inode, the name it was read by).
struct RunInputs {
  std::mutex mutex;
  bool on = false;
  std::vector<std::pair<std::pair<dev_t, ino_t>, std::string>> files;
};
RunInputs& runInputs() {
  static RunInputs r;
  return r;
}

void recordInput(const struct stat& st, const std::string& path) {
  RunInputs& r = runInputs();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.on && S_ISREG(st.st_mode)) r.files.push_back({{st.st_dev, st.st_ino}, path});
}

// The name a recorded input of this run was read by, when `st` is one; else "".
std::string recordedInput(const struct stat& st) {
  RunInputs& r = runInputs();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [id, path] : r.files)
    if (id.first == st.st_dev && id.second == st.st_ino) return path;
  return "";
}

}  // namespace

void guardRunInputs() {
  RunInputs& r = runInputs();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.on = true;
}

InputFile::InputFile(const std::string& path, uint64_t maxBytes) : max_(maxBytes) {
  // Opening a FIFO waits for its writer: a signal meanwhile (Ctrl-C in Python) stops it or retries (util/process.h).
  while ((fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0 && errno == EINTR)
    if (stopOnInterruptedCall()) throw Interrupted();
  if (fd_ < 0) throw InputError(openFailure(path, errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    throw InputError(errnoText(e));
  }
  recordInput(st, path);
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw InputError("a directory, not a file");
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_) {
    ::close(fd_);
    throw InputError("larger than the limit of " + byteCount(max_) + " (" + std::to_string(st.st_size) + " bytes)");
  }
  buf_.resize(kChunk);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string_view InputFile::next() {
  for (;;) {
    const ssize_t k = ::read(fd_, buf_.data(), buf_.size());
    if (k < 0) {
      if (errno == EINTR) {
        if (stopOnInterruptedCall()) throw Interrupted();
        continue;
      }
      if (errno == EISDIR) throw InputError("a directory, not a file");
      throw InputError("cannot read: " + errnoText(errno));
    }
    read_ += static_cast<uint64_t>(k);
    if (read_ > max_) throw InputError("larger than the limit of " + byteCount(max_));
    return std::string_view(buf_.data(), static_cast<size_t>(k));
  }
}

std::string readInputText(const std::string& path, uint64_t maxBytes) {
  InputFile in(path, maxBytes);
  std::string text;
  for (std::string_view chunk; !(chunk = in.next()).empty();) text.append(chunk);
  return text;
}

// ------------------------------------------------------------ files tapelab writes itself

std::string uniqueTempSuffix() {
  static std::atomic<unsigned long> counter{0};
  return "." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)) + ".tmp";
}

namespace {

// Writes all of `bytes` to fd; false with errno set on failure.
bool writeAll(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t k = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(k);
  }
  return true;
}

// The bytes in a new file `tmp` (mode `mode`, umask applied); "" or the reason it failed.
std::string writeNew(const std::string& tmp, std::string_view bytes, mode_t mode) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return errnoText(errno);
  const bool ok = writeAll(fd, bytes);
  const int e = errno;
  if (::close(fd) != 0 && ok) return errnoText(errno);  // NFS and quotas report here
  return ok ? "" : errnoText(e);
}

}  // namespace

bool writeFileAtomic(const fs::path& path, std::string_view bytes, std::string* error) noexcept {
  try {
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    const TempFile tmp(path.string() + uniqueTempSuffix());
    if (const std::string why = writeNew(tmp.path(), bytes, 0666); !why.empty()) {
      if (error) *error = "cannot write " + tmp.path() + ": " + why;
      return false;
    }
    if (::rename(tmp.path().c_str(), path.c_str()) != 0) {
      if (error) *error = "cannot move " + tmp.path() + " to " + path.string() + ": " + errnoText(errno);
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

std::optional<std::string> readFile(const fs::path& path, uint64_t maxBytes) {
  return readRegular(path, maxBytes, true);
}

// ------------------------------------------------------------ outputs a user names

namespace {

bool sameFile(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// `path` with its symbolic links followed to the file they name (which may not exist yet).
std::string throughLinks(const std::string& path, const std::string& shown, const std::string& what) {
  std::string p = path;
  for (int hops = 0;; ++hops) {
    struct stat l {};
    if (::lstat(p.c_str(), &l) != 0 || !S_ISLNK(l.st_mode)) return p;
    if (hops == 40) throw OutputRefused(what + " " + shown + ": a loop of symbolic links");
    std::error_code ec;
    fs::path target = fs::read_symlink(p, ec);
    if (ec) throw OutputRefused(what + " " + shown + ": cannot read the symbolic link: " + ec.message());
    if (target.is_relative()) target = fs::path(p).parent_path() / target;
    p = target.string();
  }
}

}  // namespace

namespace {

// Where an output goes, once the refusals are passed: the file its links name, the name messages
// give, and what is there now (exists false: nothing yet).
struct OutputTarget {
  std::string path, shown;
  bool exists = false;
  struct stat st {};
};

// Throws OutputRefused when `st` (what the output is, or will write) is one of `inputs` or a kind
// of file that is never written.
void refuseOutput(const struct stat& st, const std::string& path, const std::string& shown,
                  const std::vector<std::string>& inputs, const std::string& what) {
  for (const std::string& in : inputs) {
    struct stat is {};
    if (!in.empty() && ::stat(in.c_str(), &is) == 0 && sameFile(st, is))
      throw OutputRefused(what + " " + shown + ": is " + (in == path ? "" : in + ", ") +
                          "an input of this run; refusing to overwrite it");
  }
  if (const std::string in = recordedInput(st); !in.empty())
    throw OutputRefused(what + " " + shown + ": is " + (in == path ? "" : in + ", ") +
                        "an input of this run; refusing to overwrite it");
  if (S_ISDIR(st.st_mode)) throw OutputRefused(what + " " + shown + ": a directory, not a file");
  if (S_ISBLK(st.st_mode)) throw OutputRefused(what + " " + shown + ": a block device; refusing to write to it");
  if (S_ISSOCK(st.st_mode)) throw OutputRefused(what + " " + shown + ": a socket, not a file");
}

OutputTarget outputTarget(const std::string& path, const std::vector<std::string>& inputs, const std::string& what) {
  if (path.empty()) throw OutputRefused(what + ": an empty file name");
  OutputTarget t;
  t.path = throughLinks(path, path, what);
  t.shown = t.path == path ? path : path + " (-> " + t.path + ")";
  t.exists = ::stat(t.path.c_str(), &t.st) == 0;
  if (t.exists) refuseOutput(t.st, path, t.shown, inputs, what);
  return t;
}

std::runtime_error cannotWrite(const std::string& what, const std::string& shown, int e) {
  return std::runtime_error(what + " " + shown + ": cannot write: " + errnoText(e));
}

}  // namespace

void checkOutputFile(const std::string& path, const std::vector<std::string>& inputs, const std::string& what) {
  outputTarget(path, inputs, what);
}

void writeOutputFile(const std::string& path, std::string_view bytes, const std::vector<std::string>& inputs,
                     const std::string& what) {
  const OutputTarget t = outputTarget(path, inputs, what);
  const std::string& target = t.path;
  const std::string& shown = t.shown;
  const struct stat& st = t.st;
  const bool exists = t.exists;
  if (exists && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {  // written in place, never replaced
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) throw cannotWrite(what, shown, errno);
    const bool ok = writeAll(fd, bytes);
    const int e = errno;
    const bool closed = ::close(fd) == 0;
    if (!ok || !closed) throw cannotWrite(what, shown, ok ? errno : e);
    return;
  }
  // A regular file or none: a temporary file beside it, then rename.
  const TempFile tmp(target + uniqueTempSuffix());
  const mode_t mode = exists ? (st.st_mode & 07777) : 0666;
  if (const std::string why = writeNew(tmp.path(), bytes, mode); !why.empty())
    throw std::runtime_error(what + " " + shown + ": cannot write: " + why);
  // The old file's permission bits past the umask; where that fails the umask's stay, not worth failing for.
  if (exists && ::chmod(tmp.path().c_str(), mode) != 0) errno = 0;
  if (::rename(tmp.path().c_str(), target.c_str()) != 0) throw cannotWrite(what, shown, errno);
}

OutputFile::OutputFile(const std::string& path, const std::vector<std::string>& inputs, const std::string& what)
    : what_(what) {
  const OutputTarget t = outputTarget(path, inputs, what);
  shown_ = t.shown;
  // Opened without O_TRUNC: what was opened is checked again (it may have changed since), then emptied.
  fd_ = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd_ < 0) throw cannotWrite(what_, shown_, errno);
  struct stat st {};
  try {
    if (::fstat(fd_, &st) != 0) throw cannotWrite(what_, shown_, errno);
    refuseOutput(st, path, shown_, inputs, what_);
    if (S_ISREG(st.st_mode) && ::ftruncate(fd_, 0) != 0) throw cannotWrite(what_, shown_, errno);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::write(std::string_view bytes) {
  if (fd_ < 0) throw std::runtime_error(what_ + " " + shown_ + ": cannot write: already closed");
  if (!writeAll(fd_, bytes)) throw cannotWrite(what_, shown_, errno);
}

void OutputFile::close() {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw cannotWrite(what_, shown_, errno);  // NFS and quotas report here
}

// ------------------------------------------------------------ cache records

namespace {

const std::string kEntryTag = "tapelab-cache-entry 2 ";
const std::string kSumTag = "tapelab-cache-sum 2 ";

std::string hashOf(std::string_view a, std::string_view b) {
  std::string both;
  both.reserve(a.size() + b.size());
  both.append(a);
  both.append(b);
  return contentHash(both);
}

// "<tag><a> <b> <hash>\n" parsed strictly: decimal numbers without signs or leading zeros, 32 hex digits.
struct Header {
  uint64_t a = 0, b = 0;
  std::string hash;
  size_t length = 0;  // bytes up to and including the newline
};
std::optional<Header> parseHeader(std::string_view text, const std::string& tag) {
  if (text.substr(0, tag.size()) != tag) return std::nullopt;
  const size_t eol = text.find('\n');
  if (eol == std::string_view::npos || eol > 200) return std::nullopt;
  std::string_view rest = text.substr(tag.size(), eol - tag.size());
  Header h;
  for (uint64_t* field : {&h.a, &h.b}) {
    const size_t sp = rest.find(' ');
    if (sp == std::string_view::npos || sp == 0 || (sp > 1 && rest[0] == '0')) return std::nullopt;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + sp, *field);
    if (ec != std::errc() || end != rest.data() + sp) return std::nullopt;
    rest.remove_prefix(sp + 1);
  }
  if (rest.size() != 32 || rest.find_first_not_of("0123456789abcdef") != std::string_view::npos) return std::nullopt;
  h.hash = std::string(rest);
  h.length = eol + 1;
  return h;
}

struct Entry {
  std::string key, payload;
};
std::optional<Entry> parseEntry(const std::string& file) {
  const std::optional<Header> h = parseHeader(file, kEntryTag);
  if (!h) return std::nullopt;
  const uint64_t rest = file.size() - h->length;
  if (h->a > rest || h->b != rest - h->a) return std::nullopt;
  const std::string_view key(file.data() + h->length, static_cast<size_t>(h->a));
  const std::string_view payload(file.data() + h->length + h->a, static_cast<size_t>(h->b));
  if (hashOf(key, payload) != h->hash) return std::nullopt;
  return Entry{std::string(key), std::string(payload)};
}

std::string sumText(std::string_view key, std::string_view bytes) {
  return kSumTag + std::to_string(key.size()) + " " + std::to_string(bytes.size()) + " " + contentHash(bytes) + "\n" +
         std::string(key);
}

}  // namespace

bool clearCacheSlot(const fs::path& path, std::string* error) noexcept {
  try {
    struct stat l {};
    if (::lstat(path.c_str(), &l) != 0 || S_ISREG(l.st_mode)) return true;
    std::error_code ec;
    if (S_ISDIR(l.st_mode)) fs::remove_all(path, ec);  // a link is removed, never followed
    else fs::remove(path, ec);
    if (ec) {
      if (error) *error = "cannot remove " + path.string() + " from the cache: " + ec.message();
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

bool writeCacheFile(const fs::path& path, std::string_view bytes, std::string* error) noexcept {
  return clearCacheSlot(path, error) && writeFileAtomic(path, bytes, error);
}

std::optional<std::string> readCacheFile(const fs::path& path, uint64_t maxBytes) {
  return readRegular(path, maxBytes, false);
}

bool writeCacheEntry(const fs::path& path, std::string_view key, std::string_view payload, std::string* error) noexcept {
  try {
    std::string entry = kEntryTag + std::to_string(key.size()) + " " + std::to_string(payload.size()) + " " +
                        hashOf(key, payload) + "\n";
    entry.reserve(entry.size() + key.size() + payload.size());
    entry.append(key);
    entry.append(payload);
    return writeCacheFile(path, entry, error);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

std::optional<std::string> cacheEntryKey(const fs::path& path, uint64_t maxBytes) {
  const std::optional<std::string> file = readCacheFile(path, maxBytes);
  if (!file) return std::nullopt;
  std::optional<Entry> e = parseEntry(*file);
  if (!e) return std::nullopt;
  return std::move(e->key);
}

std::optional<std::string> readCacheEntry(const fs::path& path, std::string_view key, uint64_t maxBytes) {
  const std::optional<std::string> file = readCacheFile(path, maxBytes);
  if (!file) return std::nullopt;
  std::optional<Entry> e = parseEntry(*file);
  if (!e || e->key != key) return std::nullopt;
  return std::move(e->payload);
}

bool writeCacheSum(const fs::path& path, std::string_view key, std::string* error) noexcept {
  try {
    const std::optional<std::string> bytes = readCacheFile(path);
    if (!bytes) {
      if (error) *error = "cannot read " + path.string() + " (a regular file of at most " + byteCount(kMaxCacheFileBytes) + ")";
      return false;
    }
    return writeCacheFile(path.string() + ".sum", sumText(key, *bytes), error);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

std::optional<std::string> cacheSumKey(const fs::path& path, uint64_t maxBytes) {
  const std::optional<std::string> sum = readCacheFile(path.string() + ".sum", 64 * 1024);
  if (!sum) return std::nullopt;
  const std::optional<Header> h = parseHeader(*sum, kSumTag);
  if (!h || h->a != sum->size() - h->length || h->b > maxBytes) return std::nullopt;
  const std::optional<std::string> bytes = readCacheFile(path, maxBytes);
  if (!bytes || bytes->size() != h->b || contentHash(*bytes) != h->hash) return std::nullopt;
  return sum->substr(h->length);
}

bool checkCacheSum(const fs::path& path, std::string_view key, uint64_t maxBytes) {
  const std::optional<std::string> k = cacheSumKey(path, maxBytes);
  return k && *k == key;
}

std::string resolveCacheDir(const char* tapelabCacheDir, const char* xdgCacheHome, const char* home) {
  if (tapelabCacheDir && *tapelabCacheDir) return std::string(tapelabCacheDir) == "off" ? "" : tapelabCacheDir;
  if (xdgCacheHome && *xdgCacheHome) return (fs::path(xdgCacheHome) / "tapelab").string();
  if (home && *home) return (fs::path(home) / ".cache" / "tapelab").string();
  return "";
}

}  // namespace tapelab
