// cpu-jit's compile cache, dumps, failures and argument checks.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tape/products/products.h"
#include "tests/cpujit/cpujit_test_util.h"

using namespace tapelab;
using namespace cpujit_test;
namespace fs = std::filesystem;

namespace {

// A fresh directory, removed with its contents at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tapelab-cpujit-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

int countWithExtension(const std::string& dir, const std::string& ext) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ext) ++n;
  return n;
}

const char* kChildVar = "TAPELAB_CPUJIT_TEST_CHILD";

}  // namespace

// A fresh Engine, and a fresh process, load the object the first compile left
// in the cache: no compiler runs (no new object), and the time is that of a
// dlopen. The child process is this test binary, re-run on this one test; it
// finds the cache through TAPELAB_CACHE_DIR and TAPELAB_JIT_PCH (api/knobs.h).
TEST(CpuJitCache, SecondCompileLoadsTheCachedObject) {
  CPUJIT_REQUIRE();
  const Tape t = products::asianCall(40);
  if (std::getenv(kChildVar)) {  // the second process
    const auto k = jit()->compile(t, KernelOptions{});
    EXPECT_TRUE(k->stats().cacheHit) << "the second process recompiled";
    return;
  }
  TempDir dir;
  EngineSettings settings = engineSettingsFromEnvironment();
  settings.cacheDir = dir.path();
  settings.cpuJit.precompiledHeader = false;  // keep the temporary cache small
  const std::string objects = dir.path() + "/cpujit";
  const auto first = jit(settings)->compile(t, KernelOptions{});
  ASSERT_FALSE(first->stats().cacheHit);
  ASSERT_EQ(countWithExtension(objects, ".so"), 1);
  const auto stamp = fs::last_write_time(first->stats().notes.substr(first->stats().notes.find("object=") + 7));

  const auto second = jit(settings)->compile(t, KernelOptions{});
  EXPECT_TRUE(second->stats().cacheHit);
  EXPECT_LT(second->stats().compileSeconds, first->stats().compileSeconds / 5)
      << "first " << first->stats().compileSeconds << " s, cached " << second->stats().compileSeconds << " s";
  EXPECT_EQ(countWithExtension(objects, ".so"), 1);
  EXPECT_EQ(fs::last_write_time(second->stats().notes.substr(second->stats().notes.find("object=") + 7)), stamp);
  expectSameBits(first->run({t.inputDefaults}, 3000, 1), second->run({t.inputDefaults}, 3000, 1), "cached");

  ScopedEnv child(kChildVar, "1");
  ScopedEnv cache("TAPELAB_CACHE_DIR", dir.path().c_str());
  ScopedEnv noPch("TAPELAB_JIT_PCH", "0");
  const std::string filter = "--gtest_filter=CpuJitCache.SecondCompileLoadsTheCachedObject";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/proc/self/exe", "test_cpujit_cache", filter.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the second process did not load the cached object";
  EXPECT_EQ(countWithExtension(objects, ".so"), 1);
}

// A compiler that fails: one line, naming the source it was given (which is there to read).
// The compiler answers the identity probe (-E) like c++ and refuses everything else.
TEST(CpuJitCache, CompilerFailureNamesTheSource) {
  CPUJIT_REQUIRE();
  TempDir dir, bin;
  const std::string refuser = bin.path() + "/refusing-c++";
  {
    std::ofstream script(refuser);
    script << "#!/bin/sh\nfor a; do [ \"$a\" = -E ] && exec c++ \"$@\"; done\necho 'error: refused' >&2\nexit 1\n";
  }
  fs::permissions(refuser, fs::perms::owner_all);
  EngineSettings settings;
  settings.cacheDir = dir.path();
  settings.cpuJit.compiler = refuser;
  settings.cpuJit.precompiledHeader = false;
  const Tape t = products::europeanCall(3);
  try {
    jit(settings)->compile(t, KernelOptions{});
    FAIL() << "compiled with a compiler that refuses";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    const size_t at = msg.find(dir.path());
    ASSERT_NE(at, std::string::npos) << msg;
    const std::string src = msg.substr(at, msg.find(".cpp", at) + 4 - at);
    EXPECT_TRUE(fs::exists(src)) << msg;
  }
}

// KernelOptions::dumpDir (--dump, TAPELAB_DUMP) writes the generated source.
TEST(CpuJitCache, DumpWritesTheGeneratedSource) {
  CPUJIT_REQUIRE();
  TempDir dumpA, dumpB;
  const Tape t = products::europeanCall(3);
  {
    KernelOptions o;
    o.dumpDir = dumpA.path();
    const auto k = jit()->compile(t, o);
    const std::string path = k->stats().sourcePath;
    EXPECT_EQ(fs::path(path).parent_path(), fs::path(dumpA.path()));
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_NE(ss.str().find("tl_forward"), std::string::npos);
    EXPECT_NE(ss.str().find("#include <xsimd/xsimd.hpp>"), std::string::npos);
  }
  KernelOptions o;
  o.dumpDir = dumpB.path();
  o.greeks = false;  // another kernel, in another directory
  const auto k = jit()->compile(t, o);
  EXPECT_EQ(countWithExtension(dumpB.path(), ".cpp"), 1);
}

TEST(CpuJitEngine, CapsAndBadRequests) {
  CPUJIT_REQUIRE();
  const EngineCaps c = jit()->caps();
  EXPECT_EQ(c.defaultPrecision, Precision::F64);
  EXPECT_TRUE(c.fp32 && c.fp64);
  EXPECT_EQ(c.kinds, (std::vector<KernelKind>{KernelKind::Plain, KernelKind::Register, KernelKind::Tangent}));
  EXPECT_EQ(c.maxMarkets, 8);

  const Tape t = products::europeanCall(2);
  KernelOptions scratch;
  scratch.kind = KernelKind::Scratch;
  scratch.plan = plainPlan(t);
  EXPECT_THROW(jit()->compile(t, scratch), std::invalid_argument);
  KernelOptions many;
  many.markets = 9;
  EXPECT_THROW(jit()->compile(t, many), std::invalid_argument);
  KernelOptions noPlan;
  noPlan.kind = KernelKind::Register;
  EXPECT_THROW(jit()->compile(t, noPlan), std::invalid_argument);
  Tape broken = t;
  broken.output = broken.size() + 3;
  EXPECT_THROW(jit()->compile(broken, KernelOptions{}), std::invalid_argument);

  const auto k = jit()->compile(t, KernelOptions{});
  EXPECT_THROW(k->run({{1.0, 2.0}}, 100, 1), std::invalid_argument);
  EXPECT_THROW(k->run(std::vector<std::vector<double>>(9, t.inputDefaults), 100, 1), std::invalid_argument);
  EngineSettings noChunks;
  noChunks.cpuJit.chunkNodes = 0;
  EXPECT_THROW(jit(noChunks)->compile(t, KernelOptions{}), std::invalid_argument);
  EXPECT_EQ(k->run({t.inputDefaults}, 1, 1).paths, 1u);
}
