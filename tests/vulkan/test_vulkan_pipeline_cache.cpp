// The Vulkan engine's pipeline cache on disk (gpu/vulkan/device.cpp: one entry per device and
// driver, <cache>/vulkan/pipelines-*.bin, read when the device opens): another key's record or a
// special file (a link to /dev/zero, a FIFO, a directory) in the entry's place is a miss, never
// handed to the driver, and is rebuilt for this device's key; the rebuilt entry then hits
// (tests/common/cache_faults.h, README "Faults"). The device is opened once per process and reads
// the entry then, so each compile runs in a child process: this test binary re-run on this one
// test, which compiles and runs one kernel and reports the driver's pipeline-creation feedback
// (hit or miss) and the result's bits in a file. Without that feedback (a driver without
// VK_EXT_pipeline_creation_feedback) the test skips, saying so. A driver that reports feedback but
// never a hit from the application's cache (lavapipe: its cache data is a header, no pipelines)
// cannot show whether a foreign entry was served; there the test checks what still shows (the child
// finishes, a FIFO never waited on; the same bits; this key's entry, a regular file, in the place of
// the foreign record and of each special file) and then skips, saying what it could not check.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <csignal>
#include <thread>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/knobs.h"
#include "gpu/vulkan/vulkan.h"
#include "tape/products/products.h"
#include "tests/common/cache_faults.h"
#include "tests/common/test_util.h"
#include "util/files.h"

using namespace tapelab;
namespace fs = std::filesystem;

namespace {

const char* kChildVar = "TAPELAB_VULKAN_PIPELINE_TEST_REPORT";  // set in a child: where its report goes
const char* kTest = "VulkanPipelineCache.ForeignAndSpecialEntriesAreRebuiltNeverServed";
const char* kStepsVar = "TAPELAB_VULKAN_PIPELINE_TEST_STEPS";  // the child's tape length (default 8)
// Set in a child: after its device opened (and read the cache file) it writes GATE.ready and waits for GATE.go.
const char* kGateVar = "TAPELAB_VULKAN_PIPELINE_TEST_GATE";

// What a child saw: "unusable REASON", or "hit|miss|n/a" then the result's bits (hex of each double).
struct Report {
  std::string feedback;  // hit, miss, n/a, unusable, or "" when the child did not report
  std::string rest;      // the bits, or the reason
};

// The child's work: compile the plain kernel of a short European call (fresh device, so the
// pipeline cache is read from TAPELAB_CACHE_DIR now), run it, report.
void childCompileAndReport(const std::string& reportPath) {
  const std::unique_ptr<Engine> engine = makeVulkanEngine(engineSettingsFromEnvironment());
  std::ostringstream out;
  if (const EngineCaps caps = engine->caps(); !caps.usable) {
    out << "unusable " << caps.reason;
  } else {
    if (const char* gate = std::getenv(kGateVar)) {
      ASSERT_TRUE(writeFileAtomic(std::string(gate) + ".ready", "ready"));
      const auto t0 = std::chrono::steady_clock::now();
      while (!fs::exists(std::string(gate) + ".go") && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const char* steps = std::getenv(kStepsVar);
    const Tape t = products::europeanCall(steps ? std::atoi(steps) : 8);
    KernelOptions o;
    o.precision = Precision::F32;
    o.config.math = MathContract::Glsl;  // a Vulkan shader's contract
    const std::unique_ptr<Kernel> k = engine->compile(t, o);
    const std::string notes = k->stats().notes;
    out << (notes.find("pipeline cache hit") != std::string::npos    ? "hit"
            : notes.find("pipeline cache miss") != std::string::npos ? "miss"
                                                                     : "n/a");
    const RunResult r = k->run({t.inputDefaults}, 3000, 20261202);
    char hex[20];
    std::snprintf(hex, sizeof hex, " %016llx", static_cast<unsigned long long>(std::bit_cast<uint64_t>(r.markets.at(0).value)));
    out << hex;
    for (double g : r.markets.at(0).greeks) {
      std::snprintf(hex, sizeof hex, " %016llx", static_cast<unsigned long long>(std::bit_cast<uint64_t>(g)));
      out << hex;
    }
  }
  ASSERT_TRUE(writeFileAtomic(reportPath, out.str()));
}

// This binary, re-run on this test with the report path and the cache directory set (and the tape's
// length and a gate, where given): the child's pid, or -1.
pid_t startChild(const fs::path& cacheDir, const fs::path& reportPath, int steps = 8, const std::string& gate = "") {
  fs::remove(reportPath);
  testutil::ScopedEnv child(kChildVar, reportPath.string());
  testutil::ScopedEnv cache("TAPELAB_CACHE_DIR", cacheDir.string());
  testutil::ScopedEnv length(kStepsVar, std::to_string(steps));
  std::optional<testutil::ScopedEnv> gated;
  if (!gate.empty()) gated.emplace(kGateVar, gate);
  // Only the entry under test may serve a pipeline: not Mesa's own shader cache (lavapipe), not NVIDIA's.
  testutil::ScopedEnv mesa("MESA_SHADER_CACHE_DISABLE", "true");
  testutil::ScopedEnv nvidia("__GL_SHADER_DISK_CACHE", "0");
  const std::string filter = std::string("--gtest_filter=") + kTest;
  const pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    return -1;
  }
  if (pid == 0) {
    if (gate.empty()) unsetenv(kGateVar);
    execl("/proc/self/exe", "test_vulkan_pipeline_cache", filter.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits for the child (two minutes at most: one waiting on a FIFO in the entry's place would never end)
// and reads its report.
Report finishChild(pid_t pid, const fs::path& reportPath) {
  if (pid < 0) return {};
  int status = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (pid_t done = 0; (done = waitpid(pid, &status, WNOHANG)) != pid;) {
    if (done < 0 || std::chrono::steady_clock::now() - t0 > std::chrono::seconds(120)) {
      ::kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "the child process did not finish in 120 s (waiting on the entry?)";
      return {};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << "the child process failed (status " << status << ")";
    return {};
  }
  const std::string text = readFile(reportPath).value_or("");
  const size_t space = text.find(' ');
  return {text.substr(0, space), space == std::string::npos ? "" : text.substr(space + 1)};
}

Report runChild(const fs::path& cacheDir, const fs::path& reportPath) {
  return finishChild(startChild(cacheDir, reportPath), reportPath);
}

}  // namespace

TEST(VulkanPipelineCache, ForeignAndSpecialEntriesAreRebuiltNeverServed) {
  if (const char* report = std::getenv(kChildVar)) {  // a child: one compile in a fresh process
    childCompileAndReport(report);
    return;
  }
  const testutil::ScopedTempDir scoped("tapelab-vulkan-pipelines");
  const fs::path& dir = scoped.path();
  const fs::path reportPath = dir / "report.txt", cacheDir = dir / "cache";

  const Report first = runChild(cacheDir, reportPath);
  if (first.feedback == "unusable") GTEST_SKIP() << "vulkan unavailable: " << first.rest;
  ASSERT_FALSE(first.feedback.empty()) << "the first child reported nothing";
  if (first.feedback == "n/a") {
    GTEST_SKIP() << "this Vulkan driver gives no pipeline-creation feedback (VK_EXT_pipeline_creation_feedback): "
                    "a pipeline-cache hit cannot be told from a miss";
  }
  EXPECT_EQ(first.feedback, "miss") << "an empty cache directory served a pipeline";
  fs::path entry;
  for (const auto& e : fs::directory_iterator(cacheDir / "vulkan"))
    if (e.path().filename().string().rfind("pipelines-", 0) == 0) entry = e.path();
  ASSERT_FALSE(entry.empty()) << "no pipelines-*.bin under " << cacheDir / "vulkan";
  // Another key's record: this very entry's pipelines (data the driver would accept), under the key of
  // another device and driver; then the special files.
  const std::optional<std::string> key = cacheEntryKey(entry);
  ASSERT_TRUE(key.has_value());
  const fs::path other = dir / "another-device-pipelines.bin";
  ASSERT_TRUE(writeCacheEntry(other, *key + "|another device and driver", readCacheEntry(entry, *key).value()));
  const Report again = runChild(cacheDir, reportPath);
  EXPECT_EQ(again.rest, first.rest) << "the second process's bits";
  if (again.feedback != "hit") {
    const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> places = {
        {"another key's record", [&](const fs::path& p) { ASSERT_TRUE(writeFileAtomic(p, readFile(other).value())); }},
        {"a link to /dev/zero", [](const fs::path& p) { fs::create_symlink("/dev/zero", p); }},
        {"a FIFO", [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0); }},
        {"a directory", [](const fs::path& p) { fs::create_directories(p / "inside"); }}};
    for (const auto& [what, make] : places) {
      fs::remove_all(entry);
      make(entry);
      EXPECT_EQ(runChild(cacheDir, reportPath).rest, first.rest) << what;
      EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(entry))) << what << " was not replaced";
      EXPECT_EQ(cacheEntryKey(entry), key) << what << " was not rebuilt for this key";
    }
    GTEST_SKIP() << "this Vulkan driver reports no pipeline-cache hit for its own whole entry (" << again.feedback << ", "
                 << fs::file_size(entry) << "-byte entry): whether a foreign entry is served cannot be seen here; "
                    "checked only that a foreign record and special files in its place are replaced by this key's entry";
  }
  testutil::expectForeignAndSpecialEntriesRebuilt(entry, other, [&] {
    const Report r = runChild(cacheDir, reportPath);
    EXPECT_EQ(r.rest, first.rest) << "another compile's bits";
    return r.feedback == "hit";
  });
}

// Two processes that opened the device before either saved (a tuner's or a driver's compile jobs): each
// writes the cache file after its compile, and the second merges what the first added instead of
// dropping it (gpu/vulkan/device.cpp, savePipelineCache). So a third process finds both pipelines.
// Where the driver never reports a hit from its own entry (lavapipe), that cannot be seen: the test then
// checks that both processes finished with one entry in place, and skips saying so.
TEST(VulkanPipelineCache, ProcessesSavingTogetherKeepEachOthersPipelines) {
  if (std::getenv(kChildVar)) GTEST_SKIP() << "a child runs the other test";
  const testutil::ScopedTempDir scoped("tapelab-vulkan-pipelines-merge");
  const fs::path& dir = scoped.path();
  const fs::path cacheDir = dir / "cache";
  const std::string gateA = (dir / "a").string(), gateB = (dir / "b").string();
  const pid_t a = startChild(cacheDir, dir / "a.txt", 8, gateA);
  const pid_t b = startChild(cacheDir, dir / "b.txt", 9, gateB);
  const auto t0 = std::chrono::steady_clock::now();
  while (!(fs::exists(gateA + ".ready") && fs::exists(gateB + ".ready")) &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(writeFileAtomic(gateA + ".go", "go"));  // a compiles and saves first, b holds the file as it was
  const Report first = finishChild(a, dir / "a.txt");
  ASSERT_TRUE(writeFileAtomic(gateB + ".go", "go"));
  const Report second = finishChild(b, dir / "b.txt");
  if (first.feedback == "unusable") GTEST_SKIP() << "vulkan unavailable: " << first.rest;
  ASSERT_EQ(first.feedback, "miss") << first.rest;
  ASSERT_EQ(second.feedback, "miss") << second.rest;
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(cacheDir / "vulkan"))
    entries += e.path().filename().string().rfind("pipelines-", 0) == 0;
  EXPECT_EQ(entries, 1u);
  const Report again = runChild(cacheDir, dir / "c.txt");  // a's kernel, after b's save
  EXPECT_EQ(again.rest, first.rest) << "the same kernel's bits";
  const Report bAgain = finishChild(startChild(cacheDir, dir / "d.txt", 9), dir / "d.txt");
  if (bAgain.feedback != "hit")
    GTEST_SKIP() << "this Vulkan driver reports no pipeline-cache hit for its own entry (" << bAgain.feedback
                 << "): whether the second save kept the first's pipeline cannot be seen here";
  EXPECT_EQ(again.feedback, "hit") << "the second process's save dropped the first one's pipeline";
}
