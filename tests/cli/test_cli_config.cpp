// tapelab config and --config: the generated field reference is the committed one, results carry the
// configuration, a field an engine has no use for is one line naming both, a field a kernel did not
// use is said on stderr; and tapelab tune stores a winner that a following run says it used.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/cli/cli_process.h"

using namespace tapelab::clitest;

namespace {

class CliConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"TAPELAB_CONFIG", "TAPELAB_ENGINE", "TAPELAB_CKPT", "TAPELAB_STRATEGY"}) unsetenv(v);
    cache_ = std::filesystem::temp_directory_path() / ("tapelab-config-cache-" + std::to_string(getpid()));
    std::filesystem::remove_all(cache_);
    env_ = "TAPELAB_CACHE_DIR='" + cache_.string() + "'";
  }
  void TearDown() override { std::filesystem::remove_all(cache_); }
  std::filesystem::path cache_;
  std::string env_;
};

}  // namespace

// docs/config.md is what `tapelab config --markdown` prints: regenerate it when a field changes.
TEST_F(CliConfig, TheCommittedReferenceIsTheGeneratedOne) {
  const Proc p = runTapelab("config --markdown");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, slurp(TAPELAB_SOURCE_DIR "/docs/config.md"))
      << "docs/config.md is stale: build/.../tapelab config --markdown > docs/config.md";
  const Proc list = runTapelab("config --list");
  EXPECT_EQ(list.code, 0);
  EXPECT_NE(list.out.find("cuda.reduce"), std::string::npos);
}

TEST_F(CliConfig, ResultsCarryTheConfigAndRefuseFieldsTheEngineHasNoUseFor) {
  const std::string price = "price --product asian --steps 8 --paths 2000 --json --engine reference";
  Proc p = runTapelab(price);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("\"config\":\"math=ieee\""), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("\"math\":\"ieee\""), std::string::npos) << p.out;
  p = runTapelab(price + " --config lanes=2");
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(p.err, "tapelab: --config: field 'lanes' applies to vulkan,opencl,cuda,hip, not to engine reference\n");
  p = runTapelab(price, "TAPELAB_CONFIG=math=approx");
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(p.err, "tapelab: TAPELAB_CONFIG: math=approx: engine reference has no approximate functions (cuda, hip and "
                   "opencl do, in fp32)\n");
  p = runTapelab(price + " --config lanes=2", "TAPELAB_CONFIG=bogus=1");
  EXPECT_EQ(p.code, 2) << "the flag wins over the variable, and the flag's text is checked";
  EXPECT_NE(p.err.find("--config: field 'lanes'"), std::string::npos) << p.err;
  p = runTapelab("config --engine cuda lanes=2,math=approx");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out.rfind("workgroup=64,lanes=2,", 0), 0u) << p.out;  // canonical: every field, in table order
  EXPECT_NE(p.out.find("math=approx"), std::string::npos) << p.out;
}

// A field set by the user that the kernel could not use is said on stderr (and listed in --json).
TEST_F(CliConfig, AFieldTheKernelDidNotUseIsSaid) {
  if (runTapelab("engines").out.find("opencl         yes") == std::string::npos) GTEST_SKIP() << "no OpenCL here";
  const Proc p = runTapelab("price --product asian --steps 8 --paths 500 --engine opencl --checkpoint off "
                         "--config draws=stored --json");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.err, "tapelab: --config: draws=stored: not a checkpointed kernel\n");
  const size_t unused = p.out.find("\"config_unused\":[");
  ASSERT_NE(unused, std::string::npos) << p.out;
  EXPECT_LT(p.out.find("\"draws=stored: not a checkpointed kernel\"", unused), p.out.find(']', unused)) << p.out;
  // The engine's defaults that do not apply to this kernel are listed too, but not said on stderr.
  EXPECT_LT(p.out.find("\"markets=loop: not a register kernel\"", unused), p.out.find(']', unused)) << p.out;
}

// tune stores a winner; the same job's next run says it used it, --untuned does not, another job
// (other markets) does not see it, and --forget removes it.
TEST_F(CliConfig, TuneStoresAWinnerThatRunsSayTheyUse) {
  const std::string job = "--product asian --steps 8 --engine cpu-jit --paths 4000";
  const Proc t = runTapelab("tune " + job + " --budget-seconds 60 --repeats 1 --segments 2 --strategies window", env_);
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("(winner)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("==plain"), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("tune: [1] defaults: "), std::string::npos) << "progress is printed: " << t.err;
  Proc p = runTapelab("price " + job + " --json", env_);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("\"tuned\":\"" + cache_.string() + "/tune/"), std::string::npos) << p.out;
  p = runTapelab("price " + job + " --json --untuned", env_);
  EXPECT_NE(p.out.find("\"tuned\":\"\""), std::string::npos) << p.out;
  p = runTapelab("price " + job + " --json --ladder spot=99,100", env_);
  EXPECT_NE(p.out.find("\"tuned\":\"\""), std::string::npos) << "two markets are another job: " << p.out;
  p = runTapelab("tune " + job + " --forget", env_);
  EXPECT_EQ(p.out, "tuning cache entry removed\n");
  p = runTapelab("price " + job + " --json", env_);
  EXPECT_NE(p.out.find("\"tuned\":\"\""), std::string::npos) << p.out;
}
