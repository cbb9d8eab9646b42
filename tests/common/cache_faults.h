// A compiled-kernel cache's faults, the same for every engine (README, "Faults"): another
// key's entry copied under this entry's name, and special files in its place (a link to
// /dev/zero, a FIFO, a directory) are misses, rebuilt with this key's content; the rebuilt
// entry then hits.
#pragma once
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "util/files.h"

namespace tapelab::testutil {

// `entry` is the cache file compileX fills; `other` another key's entry of the same cache.
// compileX compiles the same kernel again, checks its result against the first compile's and
// returns whether it was a cache hit.
inline void expectForeignAndSpecialEntriesRebuilt(const std::filesystem::path& entry, const std::filesystem::path& other,
                                                  const std::function<bool()>& compileX) {
  namespace fs = std::filesystem;
  const std::optional<std::string> key = cacheEntryKey(entry);
  ASSERT_TRUE(key.has_value()) << entry << " is not a whole entry";
  ASSERT_NE(cacheEntryKey(other), key) << "two entries of one key";
  ASSERT_TRUE(writeFileAtomic(entry, readFile(other).value()));
  EXPECT_FALSE(compileX()) << "another key's entry under this name was used";
  EXPECT_EQ(cacheEntryKey(entry), key) << "not rebuilt for its own key";
  const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> specials = {
      {"a link to /dev/zero", [](const fs::path& p) { fs::create_symlink("/dev/zero", p); }},
      {"a FIFO", [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0); }},
      {"a directory", [](const fs::path& p) { fs::create_directories(p / "inside"); }}};
  for (const auto& [what, make] : specials) {
    fs::remove_all(entry);
    make(entry);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(compileX()) << what;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(300)) << what;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(entry))) << what << " was not replaced";
    EXPECT_EQ(cacheEntryKey(entry), key) << what;
    EXPECT_TRUE(compileX()) << what << ": the rebuilt entry does not hit";
  }
}

}  // namespace tapelab::testutil
