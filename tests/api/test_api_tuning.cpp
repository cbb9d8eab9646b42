// The tuning cache (api/tuning.h) as every compiled-kernel cache (util/files.h): an entry serves
// only its own job's key, special files in an entry's place are no winner and are replaced.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "api/tuning.h"
#include "tape/philox.h"
#include "util/files.h"
#include "util/hash.h"

using namespace tapelab;
namespace fs = std::filesystem;

namespace {

TuningKey keyFor(int markets) {
  TuningKey k;
  k.engine = "cpu-jit";
  k.device = "test device";
  k.tape = contentHash("a tape");
  k.markets = markets;
  return k;
}

TunedWinner winner(const std::string& config) {
  TunedWinner w;
  w.config = config;
  w.kind = KernelKind::Register;
  w.planLabel = "window 16";
  w.mpathsPerSecond = 2;
  w.defaultsMpathsPerSecond = 1;
  w.paths = 1000;
  w.when = "2026-12-01T00:00:00Z";
  return w;
}

}  // namespace

TEST(ApiTuningCache, AnEntryServesOnlyItsOwnJob) {
  const fs::path dir = fs::temp_directory_path() / ("tapelab-tuning-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const TuningKey a = keyFor(1), b = keyFor(2);
  TunedWinner wa = winner("jit.chunk=8"), wb = winner("jit.chunk=16");
  std::string why;
  ASSERT_TRUE(storeTuned(dir.string(), a, wa, &why)) << why;
  ASSERT_TRUE(storeTuned(dir.string(), b, wb, &why)) << why;
  ASSERT_EQ(loadTuned(dir.string(), a).value().config, "jit.chunk=8");
  EXPECT_EQ(cacheEntryKey(wa.path), a.text());
  // The draws' version is part of the job: a winner timed under other draws is not used.
  EXPECT_NE(a.text().find("\ndraws " + std::to_string(kDrawsVersion) + "\n"), std::string::npos) << a.text();
  // b's entry copied under a's name: no winner for a.
  ASSERT_TRUE(writeFileAtomic(wa.path, readFile(wb.path).value()));
  EXPECT_FALSE(loadTuned(dir.string(), a).has_value());
  // Special files in a's place: no winner, at once; storing again replaces them.
  for (const std::string what : {"link", "fifo", "dir"}) {
    fs::remove_all(wa.path);
    if (what == "link") fs::create_symlink("/dev/zero", wa.path);
    if (what == "fifo") {
      ASSERT_EQ(::mkfifo(wa.path.c_str(), 0600), 0);
    }
    if (what == "dir") fs::create_directories(fs::path(wa.path) / "x");
    EXPECT_FALSE(loadTuned(dir.string(), a).has_value()) << what;
    ASSERT_TRUE(storeTuned(dir.string(), a, wa, &why)) << what << ": " << why;
    EXPECT_EQ(loadTuned(dir.string(), a).value().config, "jit.chunk=8") << what;
  }
  EXPECT_EQ(loadTuned(dir.string(), b).value().config, "jit.chunk=16");
  fs::remove_all(dir);
}
