// util/: the content hash, atomic file writes, the cache directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "util/files.h"
#include "util/hash.h"

using namespace tapelab;
namespace fs = std::filesystem;

namespace {

fs::path freshDir() {
  const fs::path d = fs::temp_directory_path() /
                     ("tapelab-util-test-" + std::to_string(::getpid()) + "-" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  return d;
}

}  // namespace

// XXH3-128: 32 hex digits, the library's known values, sensitive to every byte.
TEST(UtilHash, Xxh3_128AsHex) {
  EXPECT_EQ(contentHash(""), "99aa06d3014798d86001c324468d497f");
  const std::string h = contentHash("tapelab");
  EXPECT_EQ(h.size(), 32u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(h, contentHash(std::string("tapelab")));
  std::set<std::string> seen;
  std::string text(200, 'a');
  for (size_t i = 0; i < text.size(); ++i) {
    std::string t = text;
    t[i] = 'b';
    seen.insert(contentHash(t));
  }
  EXPECT_EQ(seen.size(), text.size());
}

TEST(UtilFiles, AtomicWriteCreatesReplacesAndLeavesNoTemporaries) {
  const fs::path dir = freshDir();
  const fs::path file = dir / "a" / "b" / "entry.bin";
  EXPECT_FALSE(readFile(file).has_value());
  ASSERT_TRUE(writeFileAtomic(file, std::string("first\0with a zero", 17)));
  EXPECT_EQ(readFile(file), std::string("first\0with a zero", 17));
  ASSERT_TRUE(writeFileAtomic(file, "second"));
  EXPECT_EQ(readFile(file), "second");
  // Writers racing on one file leave one of their whole texts, and no temporary file.
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 20; ++i) writeFileAtomic(file, std::string(1000 + w, char('a' + w)));
    });
  for (auto& t : writers) t.join();
  const std::string last = readFile(file).value_or("");
  ASSERT_GE(last.size(), 1000u);
  EXPECT_EQ(last, std::string(last.size(), last[0]));
  int files = 0;
  for (const auto& e : fs::directory_iterator(file.parent_path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  // An impossible place: false and the reason, no throw.
  std::string why;
  EXPECT_FALSE(writeFileAtomic(file / "under-a-file", "x", &why));
  EXPECT_FALSE(why.empty());
  fs::remove_all(dir);
}

TEST(UtilFiles, TempSuffixesAreUnique) {
  std::set<std::string> s;
  for (int i = 0; i < 100; ++i) s.insert(uniqueTempSuffix());
  EXPECT_EQ(s.size(), 100u);
  EXPECT_NE(s.begin()->find(std::to_string(::getpid())), std::string::npos);
}

TEST(UtilFiles, CacheDirectory) {
  EXPECT_EQ(resolveCacheDir("/c", "/x", "/h"), "/c");
  EXPECT_EQ(resolveCacheDir("off", "/x", "/h"), "");
  EXPECT_EQ(resolveCacheDir("", "/x", "/h"), "/x/tapelab");
  EXPECT_EQ(resolveCacheDir(nullptr, nullptr, "/h"), "/h/.cache/tapelab");
  EXPECT_EQ(resolveCacheDir(nullptr, "", ""), "");
}

// A cache entry reads back only whole and unchanged: truncated, one byte flipped,
// an old entry without the trailer or an empty file are misses (rebuilt, never loaded).
TEST(UtilFiles, CacheEntryDetectsTruncationAndCorruption) {
  const fs::path d = freshDir();
  const fs::path p = d / "entry.bin";
  std::string payload = "key line\n";
  for (int i = 0; i < 4096; ++i) payload += static_cast<char>(i * 37);
  ASSERT_TRUE(writeCacheEntry(p, payload));
  ASSERT_EQ(readCacheEntry(p), payload);
  const std::string whole = readFile(p).value();
  for (size_t keep : {size_t{0}, size_t{1}, payload.size() / 2, payload.size(), whole.size() - 1}) {
    ASSERT_TRUE(writeFileAtomic(p, std::string_view(whole).substr(0, keep)));
    EXPECT_FALSE(readCacheEntry(p)) << "truncated to " << keep << " bytes";
  }
  for (size_t at : {size_t{0}, size_t{100}, payload.size() - 1, whole.size() - 2}) {
    std::string bad = whole;
    bad[at] ^= 0x10;
    ASSERT_TRUE(writeFileAtomic(p, bad));
    EXPECT_FALSE(readCacheEntry(p)) << "byte " << at << " flipped";
  }
  ASSERT_TRUE(writeFileAtomic(p, payload));  // the format before the trailer
  EXPECT_FALSE(readCacheEntry(p));
  EXPECT_FALSE(readCacheEntry(d / "missing"));
  // A sidecar sum for a file that must stay as it is (cpu-jit's .so).
  const fs::path so = d / "kernel.so";
  ASSERT_TRUE(writeFileAtomic(so, payload));
  EXPECT_FALSE(checkCacheSum(so));
  ASSERT_TRUE(writeCacheSum(so));
  EXPECT_TRUE(checkCacheSum(so));
  ASSERT_TRUE(writeFileAtomic(so, payload.substr(0, payload.size() - 3)));
  EXPECT_FALSE(checkCacheSum(so));
  fs::remove_all(d);
}
