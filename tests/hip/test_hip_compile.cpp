// The hip engine's compiler without a GPU: hipcc builds every golden HIP
// kernel (tests/golden/small.*.hip) and the main job's kernels for each default
// target, the code objects' metadata reads back with sane register counts, the
// exactness flags keep multiply-add unfused and division and sqrt correctly
// rounded, and the occupancy formula agrees with the compiler's own figure.
// Skips, with the reason, where hipcc is not installed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "api/knobs.h"
#include "gpu/codegen/emit.h"
#include "gpu/hip/hip.h"
#include "engine/settings.h"
#include "gpu/hip/codeobject.h"
#include "gpu/hip/compiler.h"
#include "tape/products/products.h"
#include "tests/common/cache_faults.h"
#include "tests/common/test_util.h"
#include "util/files.h"
#include "util/process.h"

using namespace tapelab;
namespace fs = std::filesystem;

namespace {

#define REQUIRE_HIPCC()                                                          \
  do {                                                                           \
    if (!hip::toolchain().ok) GTEST_SKIP() << hip::toolchain().why;              \
  } while (0)

// The engine's settings here: TAPELAB_HIP_ARCH's targets, else the default ones.
EngineSettings settings() { return engineSettingsFromEnvironment(); }
std::vector<std::string> defaultTargets() { return hip::parseTargets(settings().hip.arch); }
std::string cacheDir() { return settings().cacheDir; }

fs::path goldenDir() {
  fs::path dir = fs::path(TAPELAB_SOURCE_DIR) / "tests" / "golden";
  if (!fs::exists(dir) && fs::exists("tests/golden")) dir = "tests/golden";
  return dir;
}

// Register counts a compiler could produce for a kernel of 64 work-items.
void expectSaneResources(const hip::KernelResources& r, const std::string& target, const std::string& what) {
  const int wave = hip::processorOf(target).compare(0, 4, "gfx9") == 0 ? 64 : 32;
  EXPECT_EQ(r.wavefrontSize, wave) << what;
  EXPECT_GE(r.vgprs, 1) << what;
  EXPECT_LE(r.vgprs, 512) << what;
  EXPECT_GE(r.sgprs, 1) << what;
  EXPECT_LE(r.sgprs, 112) << what;
  EXPECT_GE(r.scratchBytes, 0) << what;
  EXPECT_GE(r.vgprSpills, 0) << what;
  EXPECT_GE(r.sgprSpills, 0) << what;
  EXPECT_GE(r.maxWorkgroupSize, 64) << what;
}

// Device assembly for `target` with the exactness flags, then `extra`.
std::string assembly(const std::string& source, const std::string& target, const std::vector<std::string>& extra) {
  const fs::path dir = fs::temp_directory_path() / ("tapelab-hip-asm" + uniqueTempSuffix());
  writeFileAtomic(dir / "k.hip", source);
  std::vector<std::string> argv = {hip::toolchain().hipcc, "-S"};
  for (const std::string& a : hip::hipccArguments(target, cacheDir())) argv.push_back(a);
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {(dir / "k.hip").string(), "-o", (dir / "k.s").string()});
  const ProcessResult r = runProcess(argv);
  EXPECT_EQ(r.status, 0) << r.output << r.error;
  const std::string s = readFile(dir / "k.s").value_or("");
  fs::remove_all(dir);
  return s;
}

const char* kMulAdd = R"(extern "C" __global__ void k(float* a, const float* b, const float* c) {
  unsigned i = threadIdx.x; a[i] = a[i] * b[i] + c[i]; })";
const char* kDivSqrt = R"(extern "C" __global__ void k(float* a, const float* b) {
  unsigned i = threadIdx.x; a[i] = sqrtf(a[i]) / b[i]; })";

}  // namespace

TEST(HipTargets, ParsesTheCommaSeparatedList) {
  EXPECT_EQ(hip::parseTargets("gfx1103,gfx90a"), (std::vector<std::string>{"gfx1103", "gfx90a"}));
  EXPECT_EQ(hip::parseTargets("gfx90a:xnack-,gfx90a:xnack-,gfx1036"),
            (std::vector<std::string>{"gfx90a:xnack-", "gfx1036"}));
  for (const char* bad : {"", ",", "sm_90", "gfx", "gfx1103;gfx90a", "gfx90a:xnack"}) {
    try {
      hip::parseTargets(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("TAPELAB_HIP_ARCH"), std::string::npos) << e.what();
    }
  }
}

// The formula against LLVM's register-file model (codeobject.h), at the edges.
TEST(HipOccupancy, WavesPerSimdFromTheRegisterFile) {
  const hip::RegisterFile cdna2 = hip::registerFile("gfx90a:xnack-", 64);
  EXPECT_EQ(hip::wavesPerSimd(cdna2, 40, 60), 8);   // at most 8 waves on gfx90a
  EXPECT_EQ(hip::wavesPerSimd(cdna2, 128, 60), 4);  // 512 / 128
  EXPECT_EQ(hip::wavesPerSimd(cdna2, 129, 60), 3);  // 512 / 136
  EXPECT_EQ(hip::wavesPerSimd(cdna2, 512, 60), 1);
  EXPECT_EQ(hip::wavesPerSimd(cdna2, 40, 102), 7);  // GFX9: SGPRs limit too
  const hip::RegisterFile phoenix = hip::registerFile("gfx1103", 32);
  EXPECT_EQ(hip::wavesPerSimd(phoenix, 39, 21), 16);   // 1024 / 48, at most 16
  EXPECT_EQ(hip::wavesPerSimd(phoenix, 102, 21), 9);   // 1024 / 112
  EXPECT_EQ(hip::wavesPerSimd(phoenix, 256, 106), 4);  // no SGPR limit on RDNA
  EXPECT_EQ(hip::wavesPerSimd(hip::registerFile("gfx1100", 32), 256, 21), 5);  // 1536 / 264
  EXPECT_EQ(hip::wavesPerSimd(hip::registerFile("gfx906", 64), 256, 21), 1);
  EXPECT_THROW(hip::registerFile("gfx1200", 32), std::invalid_argument);
  EXPECT_THROW(hip::registerFile("gfx906", 32), std::invalid_argument);
}

TEST(HipCodeObject, RejectsWhatIsNotOne) {
  for (const std::string& bad : {std::string(), std::string("not an elf"), std::string("\x7f" "ELF", 4) + std::string(60, '\0')})
    EXPECT_THROW(hip::readCodeObject(bad), std::runtime_error);
}

// Each golden HIP kernel, for each default target: a code object whose
// metadata names the kernel with sane counts, and an occupancy the compiler
// agrees with (these kernels' LDS and workgroup size do not limit it).
TEST(HipCompile, EveryGoldenKernelForEveryTarget) {
  REQUIRE_HIPCC();
  int kernels = 0;
  for (const auto& f : fs::directory_iterator(goldenDir())) {
    if (f.path().extension() != ".hip") continue;
    const std::string source = readFile(f.path()).value_or("");
    for (const std::string& target : defaultTargets()) {
      const std::string what = f.path().filename().string() + " for " + target;
      const hip::CodeObject o = hip::compileHip(source, target, cacheDir());
      ASSERT_FALSE(o.bytes.empty()) << what << ": " << o.log;
      const hip::CodeObjectInfo info = hip::readCodeObject(o.bytes);
      EXPECT_EQ(hip::processorOf(info.target), hip::processorOf(target)) << what;
      ASSERT_EQ(info.kernels.size(), 1u) << what;
      const hip::KernelResources& r = info.kernels[0];
      EXPECT_EQ(r.name, "tapelab_kernel") << what;
      expectSaneResources(r, target, what);
      EXPECT_EQ(r.scratchBytes, 0) << what << ": a 25-node tape should not spill";
      const int waves = hip::wavesPerSimd(hip::registerFile(target, r.wavefrontSize), r.vgprs, r.sgprs);
      EXPECT_EQ(o.compilerOccupancy, waves) << what << ": " << r.vgprs << " VGPRs, " << r.sgprs << " SGPRs";
      ++kernels;
    }
  }
  EXPECT_GE(kernels, 3 * static_cast<int>(defaultTargets().size()));
}

// math=approx in HIP: __expf and __logf compile for every target (the
// engine builds the same source; its tests run it where a GPU is).
TEST(HipCompile, ApproxMathCompilesForEveryTarget) {
  REQUIRE_HIPCC();
  const Tape t = products::asianCall(8);
  KernelOptions o;
  o.precision = Precision::F32;
  o.config.math = MathContract::Approx;
  const std::string source = emitKernel(t, o, hipDialect()).source;
  ASSERT_NE(source.find("__logf("), std::string::npos);
  for (const std::string& target : defaultTargets()) {
    const hip::CodeObject c = hip::compileHip(source, target, cacheDir());
    EXPECT_FALSE(c.bytes.empty()) << target << ": " << c.log;
  }
}

// The main job's kernels (`tapelab compare`: the 252-step Asian, value + 5
// Greeks, fp32, plain and register-checkpointed at 16 segments, 1 and 4
// markets per dispatch) through the engine, one test per kernel and target:
// on a cold cache each is one hipcc run of 10 s to a few minutes.
struct MainJobKernel {
  KernelKind kind;
  int markets;
  std::string target;
};

void PrintTo(const MainJobKernel& k, std::ostream* os) { *os << toString(k.kind) << " x" << k.markets << " " << k.target; }

class HipMainJob : public ::testing::TestWithParam<MainJobKernel> {};

TEST_P(HipMainJob, Compiles) {
  REQUIRE_HIPCC();
  const MainJobKernel& p = GetParam();
  EngineSettings s = settings();
  s.hip.arch = p.target;
  const Tape t = products::asianCall(252);
  const KernelStats stats =
      makeHipEngine(s)->compile(t, testutil::kindOptions(t, p.kind, 16, 0, ScratchLayout::SoA, p.markets))->stats();
  EXPECT_GE(stats.registers, 1);
  EXPECT_GE(stats.spillBytes, 0);
  EXPECT_NE(stats.notes.find(p.target + " wave"), std::string::npos) << stats.notes;
  std::printf("%s (%.1f s)\n", stats.notes.c_str(), stats.compileSeconds);
}

// Called while tests are registered, before main: a malformed variable falls
// back to the default targets here and fails the other tests with its message.
std::vector<MainJobKernel> mainJobKernels() {
  std::vector<std::string> targets;
  try {
    targets = defaultTargets();
  } catch (const std::exception&) {
    targets = hip::parseTargets(EngineSettings{}.hip.arch);
  }
  std::vector<MainJobKernel> out;
  for (const std::string& target : targets)
    for (KernelKind kind : {KernelKind::Plain, KernelKind::Register})
      for (int markets : {1, 4}) out.push_back({kind, markets, target});
  return out;
}

INSTANTIATE_TEST_SUITE_P(MainJob, HipMainJob, ::testing::ValuesIn(mainJobKernels()),
                         [](const ::testing::TestParamInfo<MainJobKernel>& info) {
                           std::string target = info.param.target;
                           for (char& c : target)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return std::string(toString(info.param.kind)) + std::to_string(info.param.markets) + "_" + target;
                         });

// LLVM 15 stops at 128 VGPRs on gfx11 (gfx1030 takes 203 for this kernel);
// TAPELAB_HIP_GFX11_VGPRS=256 lifts that for the register map, and only there.
TEST(HipCompile, Gfx11VgprLimitAndItsLifting) {
  REQUIRE_HIPCC();
  std::string source = R"(extern "C" __global__ void __launch_bounds__(64) k(float* a) {
  float v[200]; unsigned i = threadIdx.x;
#pragma unroll
  for (int j = 0; j < 200; ++j) v[j] = a[i + 64 * j] * 1.5f;
  float s = 0;
#pragma unroll
  for (int j = 199; j >= 0; --j) s = s * v[j] + v[199 - j];
  a[i] = s; })";
  const auto vgprs = [&](const std::string& target, const std::vector<std::string>& extra) {
    const hip::CodeObject o = hip::compileHip(source, target, cacheDir(), extra);
    EXPECT_FALSE(o.bytes.empty()) << target << ": " << o.log;
    return o.bytes.empty() ? hip::KernelResources{} : hip::readCodeObject(o.bytes).kernels.at(0);
  };
  const hip::KernelResources limited = vgprs("gfx1103", {});
  EXPECT_EQ(limited.vgprs, 128);
  EXPECT_GT(limited.scratchBytes, 0);
  const hip::KernelResources lifted = vgprs("gfx1103", hip::liftGfx11VgprLimit("gfx1103"));
  EXPECT_GT(lifted.vgprs, 128);
  EXPECT_LE(lifted.vgprs, 256);
  EXPECT_EQ(lifted.scratchBytes, 0);
  EXPECT_TRUE(hip::liftGfx11VgprLimit("gfx90a").empty());
  EXPECT_TRUE(hip::liftGfx11VgprLimit("gfx1030").empty());
}

// -ffp-contract=off keeps a * b + c two roundings (clang's HIP default fuses
// it into v_fma/v_fmac); division and sqrt are clang's correctly rounded
// default, not the approximate instructions -fno-hip-fp32-... gives.
TEST(HipCompile, ExactnessFlags) {
  REQUIRE_HIPCC();
  for (const std::string& target : defaultTargets()) {
    const std::string exact = assembly(kMulAdd, target, {});
    EXPECT_EQ(exact.find("v_fma"), std::string::npos) << target << "\n" << exact;
    EXPECT_EQ(exact.find("v_mad"), std::string::npos) << target;
    EXPECT_NE(exact.find("v_mul_f32"), std::string::npos) << target;
    EXPECT_NE(assembly(kMulAdd, target, {"-ffp-contract=fast"}).find("v_fma"), std::string::npos)
        << target << ": the check above would not see a fused multiply-add";
    const std::string divSqrt = assembly(kDivSqrt, target, {});
    EXPECT_NE(divSqrt.find("v_div_fixup_f32"), std::string::npos) << target << ": division not correctly rounded";
    EXPECT_NE(divSqrt, assembly(kDivSqrt, target, {"-fno-hip-fp32-correctly-rounded-divide-sqrt"}))
        << target << ": sqrt/division the same as the approximate ones";
  }
}

// No code object from another key's entry, none read from a special file (README, "Faults").
TEST(HipCompile, ForeignOrSpecialCacheEntriesAreRebuilt) {
  const fs::path dir = fs::temp_directory_path() / ("tapelab-hip-cache-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string source = "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n";
  const std::string other = "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 3.0f; }\n";
  hip::CodeObject first;
  try {
    first = hip::compileHip(source, "gfx90a", dir.string(), {});
  } catch (const std::exception& e) {
    GTEST_SKIP() << "hipcc not usable here: " << e.what();
  }
  if (first.bytes.empty()) GTEST_SKIP() << "hipcc made no code object: " << first.log;
  fs::path entry, otherEntry;
  for (const auto& e : fs::directory_iterator(dir / "hip"))
    if (e.path().extension() == ".hipco") entry = e.path();
  hip::compileHip(other, "gfx90a", dir.string(), {});
  for (const auto& e : fs::directory_iterator(dir / "hip"))
    if (e.path().extension() == ".hipco" && e.path() != entry) otherEntry = e.path();
  testutil::expectForeignAndSpecialEntriesRebuilt(entry, otherEntry, [&] {
    const hip::CodeObject again = hip::compileHip(source, "gfx90a", dir.string(), {});
    EXPECT_EQ(again.bytes.size(), first.bytes.size());
    return again.cacheHit;
  });
  fs::remove_all(dir);
}

// The gfx11 device-library folder made here (compiler.cpp): trusted only when each made ISA file
// matches its key's record and each installed library is a link to it; a README alone, another
// processor's file and record, a link pointing elsewhere or a file in the folder's place are all
// rebuilt. Without a cache directory the folder is private to the process, never a shared /tmp one.
TEST(HipCompile, MadeDeviceLibrariesAreCheckedAndRebuilt) {
  REQUIRE_HIPCC();
  const fs::path dir = fs::temp_directory_path() / ("tapelab-hip-isa-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string flag = "--hip-device-lib-path=";
  auto folder = [&](const std::string& cache) {
    for (const std::string& a : hip::hipccArguments("gfx1103", cache))
      if (a.rfind(flag, 0) == 0) return fs::path(a.substr(flag.size()));
    return fs::path();
  };
  const fs::path made = folder(dir.string());
  if (made.empty()) GTEST_SKIP() << "this ROCm has gfx1103's ISA library: nothing is made here";
  const std::string lib = hip::toolchain().deviceLibDir;
  ASSERT_EQ(made.parent_path(), dir / "hip");
  const fs::path isa = made / "oclc_isa_version_1103.bc", other = made / "oclc_isa_version_1100.bc";
  const std::optional<std::string> key = cacheSumKey(isa);
  ASSERT_TRUE(key.has_value()) << isa << " has no record of its key";
  ASSERT_NE(cacheSumKey(other), key);
  auto expectRebuilt = [&](const std::string& what) {
    EXPECT_EQ(folder(dir.string()), made) << what;
    EXPECT_EQ(cacheSumKey(isa), key) << what << ": not rebuilt for its key";
    EXPECT_NE(readFile(isa), readFile(other)) << what;  // (the bytes name the folder they were made in: no equality)
    EXPECT_EQ(fs::read_symlink(made / "ocml.bc"), fs::path(lib) / "ocml.bc") << what;
  };
  // Another processor's file with its own record under this name: its key is not this one's.
  fs::remove(isa);
  fs::remove(isa.string() + ".sum");
  fs::copy_file(other, isa);
  fs::copy_file(other.string() + ".sum", isa.string() + ".sum");
  expectRebuilt("gfx1100's file and record");
  // The file changed, its record kept.
  ASSERT_TRUE(writeFileAtomic(isa, readFile(other).value()));
  expectRebuilt("another file under the record");
  // The old rule: a README was enough.
  fs::remove_all(made);
  fs::create_directories(made);
  ASSERT_TRUE(writeFileAtomic(made / "README", "trust me\n"));
  expectRebuilt("a README alone");
  // An installed library's link pointing elsewhere.
  fs::remove(made / "ocml.bc");
  fs::create_symlink(fs::path(lib) / "ockl.bc", made / "ocml.bc");
  expectRebuilt("ocml.bc linked to ockl.bc");
  // A file, and a link to another folder, in the folder's place.
  fs::remove_all(made);
  ASSERT_TRUE(writeFileAtomic(made, "not a folder"));
  expectRebuilt("a file in its place");
  fs::create_directories(dir / "elsewhere");
  fs::remove_all(made);
  fs::create_symlink(dir / "elsewhere", made);
  expectRebuilt("a link to another folder");
  EXPECT_FALSE(fs::is_symlink(made));
  // The rebuilt folder compiles (gfx1103 links its ISA library).
  const std::string source = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n";
  const hip::CodeObject o = hip::compileHip(source, "gfx1103", dir.string());
  EXPECT_FALSE(o.bytes.empty()) << o.log;
  EXPECT_TRUE(o.syntheticIsaLibrary);
  // No cache directory: a mkdtemp folder only this user can enter, said in the log; never /tmp/tapelab-hip.
  const fs::path mine = folder("");
  ASSERT_FALSE(mine.empty());
  EXPECT_EQ(mine.parent_path().filename().string().rfind("tapelab-hip-device-libs-", 0), 0u) << mine;
  EXPECT_NE(mine.parent_path(), fs::temp_directory_path() / "tapelab-hip");
  struct stat st {};
  ASSERT_EQ(::stat(mine.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(checkCacheSum(mine / "oclc_isa_version_1103.bc", *key));
  const hip::CodeObject uncached = hip::compileHip(source, "gfx1103", "");
  EXPECT_FALSE(uncached.bytes.empty()) << uncached.log;
  EXPECT_NE(uncached.log.find("no cache directory: the gfx11 device libraries were made in " + mine.parent_path().string()),
            std::string::npos) << uncached.log;
  fs::remove_all(dir);
}
