// cpu-jit's compile cache, dumps, failures and argument checks.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <functional>
#include <thread>

#include <sys/stat.h>

#include "tape/products/products.h"
#include "tests/cpujit/cpujit_test_util.h"
#include "util/files.h"
#include "util/process.h"

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

// Resource faults (README, "Faults"): the cached object is checked against its .sum
// before dlopen, so a truncated or corrupt one is rebuilt, never loaded.
TEST(CpuJitCache, CorruptCachedObjectIsRebuilt) {
  CPUJIT_REQUIRE();
  const Tape t = products::europeanCall(8);
  TempDir dir;
  EngineSettings settings = engineSettingsFromEnvironment();
  settings.cacheDir = dir.path();
  settings.cpuJit.precompiledHeader = false;
  const auto first = jit(settings)->compile(t, KernelOptions{});
  const RunResult want = first->run({t.inputDefaults}, 2000, 5);
  const std::string notes = first->stats().notes;
  const fs::path so = notes.substr(notes.find("object=") + 7, notes.find(' ', notes.find("object=")) - notes.find("object=") - 7);
  ASSERT_TRUE(fs::exists(so)) << so;
  const std::string whole = readFile(so).value();
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"truncated", whole.substr(0, whole.size() / 2)},
      {"one byte flipped", [&] { std::string b = whole; b[b.size() / 2] ^= 1; return b; }()},
      {"empty", ""}};
  for (const auto& [what, bytes] : damages) {
    ASSERT_TRUE(writeFileAtomic(so, bytes));
    const auto again = jit(settings)->compile(t, KernelOptions{});
    EXPECT_FALSE(again->stats().cacheHit) << what << ": the damaged object was loaded";
    expectSameBits(want, again->run({t.inputDefaults}, 2000, 5), what);
    EXPECT_TRUE(cacheSumKey(so).has_value()) << what;
  }
  fs::remove(so.string() + ".sum");
  EXPECT_FALSE(jit(settings)->compile(t, KernelOptions{})->stats().cacheHit) << "an object without its .sum was loaded";
}

// The object a kernel's notes name (object=...).
static fs::path objectOf(const Kernel& k) {
  const std::string notes = k.stats().notes;
  const size_t at = notes.find("object=") + 7;
  return notes.substr(at, notes.find(' ', at) - at);
}

// No result from another key's object (README, "Faults"): another kernel's .so and .sum copied
// under this kernel's names, or its .so with a sum forged to name this key, is never loaded: the
// sum holds the full key, and the object itself answers tapelab_cpujit_key.
TEST(CpuJitCache, AnotherKernelsObjectIsNeverLoaded) {
  CPUJIT_REQUIRE();
  const Tape a = products::europeanCall(8), b = products::asianCall(8);
  TempDir dir;
  EngineSettings settings = engineSettingsFromEnvironment();
  settings.cacheDir = dir.path();
  settings.cpuJit.precompiledHeader = false;
  // Every kernel is released before its object is replaced (a loaded object stays mapped, and
  // dlopen hands out the loaded one by name), and files are replaced by rename, as a cache does.
  RunResult want;
  fs::path soA, soB;
  {
    const auto ka = jit(settings)->compile(a, KernelOptions{});
    want = ka->run({a.inputDefaults}, 2000, 5);
    soA = objectOf(*ka);
    soB = objectOf(*jit(settings)->compile(b, KernelOptions{}));
  }
  const std::string keyA = cacheSumKey(soA).value();
  ASSERT_NE(keyA, cacheSumKey(soB).value_or(keyA));
  auto copy = [](const fs::path& from, const fs::path& to) { ASSERT_TRUE(writeFileAtomic(to, readFile(from).value())); };
  auto expectRebuilt = [&](const std::string& what) {
    const auto again = jit(settings)->compile(a, KernelOptions{});
    EXPECT_FALSE(again->stats().cacheHit) << what << ": B's object ran as A's";
    expectSameBits(want, again->run({a.inputDefaults}, 2000, 5), what);
    EXPECT_EQ(cacheSumKey(soA), keyA) << what;
  };
  // Copied whole: the sum names B's key.
  copy(soB, soA);
  copy(soB.string() + ".sum", soA.string() + ".sum");
  expectRebuilt("B's object and sum copied over A's");
  // Forged: B's bytes with a sum naming A's key; the object's own key refuses it.
  copy(soB, soA);
  ASSERT_TRUE(writeCacheSum(soA, keyA));
  expectRebuilt("B's object with a sum forged for A");
}

// Special files in an entry's place: a link to /dev/zero (never read whole), a FIFO (never waited
// on) or a directory as the object, its sum or its source: a miss at once, rebuilt, same bits.
TEST(CpuJitCache, SpecialFilesInTheCacheAreRebuilt) {
  CPUJIT_REQUIRE();
  const Tape t = products::europeanCall(8);
  TempDir dir;
  EngineSettings settings = engineSettingsFromEnvironment();
  settings.cacheDir = dir.path();
  settings.cpuJit.precompiledHeader = false;
  const auto first = jit(settings)->compile(t, KernelOptions{});
  const RunResult want = first->run({t.inputDefaults}, 2000, 5);
  const fs::path so = objectOf(*first);
  const fs::path src = fs::path(so).replace_extension(".cpp");
  ASSERT_TRUE(fs::exists(src)) << src;
  using Damage = std::function<void(const fs::path&)>;
  const std::vector<std::pair<std::string, Damage>> damages = {
      {"a link to /dev/zero", [](const fs::path& p) { fs::create_symlink("/dev/zero", p); }},
      {"a FIFO", [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0); }},
      {"a directory", [](const fs::path& p) { fs::create_directories(p / "inside"); }}};
  for (const fs::path& victim : {so, fs::path(so.string() + ".sum"), src})
    for (const auto& [what, damage] : damages) {
      const std::string label = what + " as " + victim.filename().string();
      fs::remove_all(victim);
      damage(victim);
      const auto t0 = std::chrono::steady_clock::now();
      const auto again = jit(settings)->compile(t, KernelOptions{});
      EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120)) << label;
      EXPECT_FALSE(again->stats().cacheHit) << label;
      expectSameBits(want, again->run({t.inputDefaults}, 2000, 5), label);
      EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(victim))) << label << ": not replaced";
      EXPECT_TRUE(jit(settings)->compile(t, KernelOptions{})->stats().cacheHit) << label << ": the rebuilt entry";
    }
}

// A truncated precompiled header is rebuilt (its sum names its key), not handed to every later compile.
TEST(CpuJitCache, TruncatedPrecompiledHeaderIsRebuilt) {
  CPUJIT_REQUIRE();
  TempDir dir;
  EngineSettings settings = engineSettingsFromEnvironment();
  settings.cacheDir = dir.path();
  settings.cpuJit.precompiledHeader = true;
  jit(settings)->compile(products::europeanCall(4), KernelOptions{});
  std::vector<fs::path> gchs;
  for (const auto& e : fs::recursive_directory_iterator(dir.path()))
    if (e.path().extension() == ".gch") gchs.push_back(e.path());
  if (gchs.empty()) GTEST_SKIP() << "no precompiled header here (not GCC)";
  ASSERT_EQ(gchs.size(), 1u);
  const std::string whole = readFile(gchs[0]).value();
  ASSERT_TRUE(writeFileAtomic(gchs[0], std::string_view(whole).substr(0, whole.size() / 3)));
  for (int steps : {5, 6}) {  // later compiles of other kernels
    const Tape t = products::europeanCall(steps);
    EXPECT_GT(jit(settings)->compile(t, KernelOptions{})->run({t.inputDefaults}, 500, 1).markets.at(0).value, 0.0);
  }
  EXPECT_GT(readFile(gchs[0]).value_or("").size(), whole.size() / 2) << "the header was not rebuilt";
  EXPECT_TRUE(cacheSumKey(gchs[0]).has_value());
}

// Interrupted (Python's KeyboardInterrupt, util/process.h): the compiler is ended, Interrupted
// is thrown promptly, and no temporary file stays; the next compile works.
TEST(CpuJitCache, InterruptEndsTheCompilerAndLeavesNoTemporaries) {
  CPUJIT_REQUIRE();
  TempDir dir;
  EngineSettings settings = engineSettingsFromEnvironment();
  settings.cacheDir = dir.path();
  settings.cpuJit.precompiledHeader = false;
  const Tape t = products::asianCall(400);
  clearInterrupt();
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    requestInterrupt();
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(jit(settings)->compile(t, KernelOptions{}), Interrupted);
  const auto took = std::chrono::steady_clock::now() - t0;
  stopper.join();
  clearInterrupt();
  EXPECT_LT(took, std::chrono::seconds(10));
  int temporaries = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.path()))
    temporaries += e.path().string().find(".tmp") != std::string::npos;
  EXPECT_EQ(temporaries, 0);
  EXPECT_GT(jit(settings)->compile(t, KernelOptions{})->run({t.inputDefaults}, 500, 1).markets.at(0).value, 0.0);
}

// Two processes compile the same kernel into one empty cache at once: both
// succeed, one valid object remains, and a third compile loads it. Then a
// process killed (SIGTERM) while compiling leaves no entry that loads: the
// cache holds only objects whose .sum matches, and the next compile works.
TEST(CpuJitCache, ConcurrentAndInterruptedCompilesKeepTheCacheValid) {
  CPUJIT_REQUIRE();
  const Tape t = products::asianCall(30);
  if (std::getenv(kChildVar)) {  // a child: compile, run
    const auto k = jit()->compile(t, KernelOptions{});
    EXPECT_GT(k->run({t.inputDefaults}, 500, 1).markets.at(0).value, 0.0);
    return;
  }
  TempDir dir;
  ScopedEnv child(kChildVar, "1");
  ScopedEnv cache("TAPELAB_CACHE_DIR", dir.path().c_str());
  ScopedEnv noPch("TAPELAB_JIT_PCH", "0");
  const std::string filter = "--gtest_filter=CpuJitCache.ConcurrentAndInterruptedCompilesKeepTheCacheValid";
  auto spawn = [&] {
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/proc/self/exe", "test_cpujit_cache", filter.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    return pid;
  };
  auto exitCode = [](pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  };
  const pid_t a = spawn(), b = spawn();
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_EQ(exitCode(a), 0);
  EXPECT_EQ(exitCode(b), 0);
  const std::string objects = dir.path() + "/cpujit";
  EXPECT_EQ(countWithExtension(objects, ".so"), 1);
  for (const auto& e : fs::directory_iterator(objects)) {
    if (e.path().extension() == ".so") {
      EXPECT_TRUE(cacheSumKey(e.path()).has_value()) << e.path();
    }
  }
  EngineSettings settings = engineSettingsFromEnvironment();
  settings.cacheDir = dir.path();
  settings.cpuJit.precompiledHeader = false;
  EXPECT_TRUE(jit(settings)->compile(t, KernelOptions{})->stats().cacheHit);

  // Interrupted: a fresh cache, the child killed while its compiler runs.
  TempDir dir2;
  ScopedEnv cache2("TAPELAB_CACHE_DIR", dir2.path().c_str());
  const pid_t c = spawn();
  ASSERT_GT(c, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(c, SIGTERM);
  exitCode(c);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let an orphaned compiler finish its temporary file
  const std::string objects2 = dir2.path() + "/cpujit";
  if (fs::exists(objects2)) {
    for (const auto& e : fs::directory_iterator(objects2)) {
      if (e.path().extension() == ".so") {
        EXPECT_TRUE(cacheSumKey(e.path()).has_value()) << "partial entry " << e.path();
      }
    }
  }
  settings.cacheDir = dir2.path();
  const auto k = jit(settings)->compile(t, KernelOptions{});
  EXPECT_GT(k->run({t.inputDefaults}, 500, 1).markets.at(0).value, 0.0);
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
  KernelOptions noChunks;
  noChunks.config.jitChunk = 0;
  EXPECT_THROW(jit()->compile(t, noChunks), std::invalid_argument);
  EXPECT_EQ(k->run({t.inputDefaults}, 1, 1).paths, 1u);
}
