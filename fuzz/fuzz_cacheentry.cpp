// libFuzzer harness for the compiled-kernel cache's record reader (util/files.h): the entry
// reader every engine's cache uses, and the sidecar sum of cpu-jit's objects. The first byte
// picks the key (empty, short, one with newlines and NULs, a tuning key) and the mode: the rest
// as a whole entry file; a valid record of (key, payload) then damaged by the rest's edits
// (flip, insert, delete, truncate, another key); or a file and a sum. A bug is a crash, a
// sanitizer report, an exception, a payload returned for bytes that are not exactly the record
// writeCacheEntry writes for this key and that payload (another key's entry, a truncated or
// damaged one), readCacheEntry and cacheEntryKey disagreeing, the size cap not honoured, or a sum
// accepted that is not the one writeCacheSum writes for this key and file.
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/harness.h"
#include "util/files.h"

using namespace tapelab;

namespace {

const std::string kKeys[] = {
    "", "k", std::string("tapelab-test-v1|line one\nline two\0nul|", 33),
    "tapelab-tuning 1\nengine cpu-jit\ndevice x\ntape 0123456789abcdef0123456789abcdef\nmarkets 1\n"};

std::string dir() {
  static const std::string d = [] {
    std::string tmpl = "/tmp/tapelab-fuzz-cache-XXXXXX";
    if (!::mkdtemp(tmpl.data())) fuzz::bug("mkdtemp failed");
    return tmpl;
  }();
  return d;
}

std::string put(const std::string& name, std::string_view bytes) {
  const std::string path = dir() + "/" + name;
  if (!writeFileAtomic(path, bytes)) fuzz::bug("cannot write " + path);
  return path;
}

// The exact record writeCacheEntry writes for (key, payload).
std::string record(const std::string& key, const std::string& payload) {
  const std::string path = dir() + "/expected";
  if (!writeCacheEntry(path, key, payload)) fuzz::bug("writeCacheEntry failed");
  return readFile(path).value();
}

void checkEntry(const std::string& file, const std::string& key) {
  const std::string path = put("entry", file);
  const std::optional<std::string> got = readCacheEntry(path, key);
  if (got) {
    if (record(key, *got) != file) fuzz::bug("a payload from bytes that are not this key's exact record");
    if (cacheEntryKey(path) != key) fuzz::bug("readCacheEntry accepted a key cacheEntryKey does not name");
    if (!file.empty() && readCacheEntry(path, key, file.size() - 1)) fuzz::bug("the size cap was not honoured");
  }
  if (const std::optional<std::string> k = cacheEntryKey(path)) {
    const std::optional<std::string> payload = readCacheEntry(path, *k);
    if (!payload) fuzz::bug("cacheEntryKey names a key readCacheEntry refuses");
    if (*k != key && got) fuzz::bug("one entry read for two keys");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string& key = kKeys[data[0] % 4];
  const int mode = (data[0] / 4) % 3;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (mode == 0) {
    checkEntry(rest, key);
  } else if (mode == 1) {
    // A valid record of the first half as payload, damaged by the second half's edits.
    const size_t half = rest.size() / 2;
    std::string file = record(data[0] & 0x80 ? kKeys[(data[0] + 1) % 4] : key, rest.substr(0, half));
    for (size_t i = half; i + 2 < rest.size() && !file.empty(); i += 3) {
      const size_t at = (static_cast<uint8_t>(rest[i + 1]) * 256u + static_cast<uint8_t>(rest[i + 2])) % file.size();
      switch (static_cast<uint8_t>(rest[i]) % 4) {
        case 0: file[at] = static_cast<char>(file[at] ^ (1 + rest[i] / 4)); break;
        case 1: file.insert(at, 1, rest[i + 1]); break;
        case 2: file.erase(at, 1); break;
        case 3: file.resize(at); break;
      }
    }
    checkEntry(file, key);
  } else {
    // A file and its sum: accepted only as writeCacheSum writes it.
    const size_t split = rest.empty() ? 0 : static_cast<uint8_t>(rest[0]) % (rest.size() + 1);
    const std::string object = rest.substr(0, split), sum = rest.substr(split);
    const std::string path = put("kernel.so", object);
    put("kernel.so.sum", sum);
    const bool accepted = checkCacheSum(path, key);
    const std::string other = put("other.so", object);
    if (!writeCacheSum(other, key)) fuzz::bug("writeCacheSum failed");
    const std::string expected = readFile(other + ".sum").value();
    if (accepted != (sum == expected)) fuzz::bug(accepted ? "a sum accepted that is not this key's" : "this key's sum refused");
    if (accepted && !object.empty() && checkCacheSum(path, key, object.size() - 1)) fuzz::bug("the size cap was not honoured");
    if (const std::optional<std::string> k = cacheSumKey(path); k && !checkCacheSum(path, *k))
      fuzz::bug("cacheSumKey names a key checkCacheSum refuses");
  }
  return 0;
}
