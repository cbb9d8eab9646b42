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
