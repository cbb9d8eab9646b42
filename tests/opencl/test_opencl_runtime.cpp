// The OpenCL host plumbing (gpu/opencl/cl_runtime.h) on the device here:
// device choice by index and name, build errors carrying the log and the
// dumped source's path, the on-disk binary cache, buffers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "gpu/opencl/cl_runtime.h"
#include "tests/common/cache_faults.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

bool haveDevice(std::string* why) {
  try {
    ocl::listDevices();
    return true;
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
}

#define REQUIRE_DEVICE()                   \
  std::string why_;                        \
  if (!haveDevice(&why_)) GTEST_SKIP() << why_

const char* kScale = R"(
#pragma OPENCL FP_CONTRACT OFF
__kernel void scale(__global float* x, float a) { size_t i = get_global_id(0); x[i] = x[i] * a + 1.0f; }
)";

// A fresh cache directory per test, removed afterwards.
struct TempCache {
  static std::filesystem::path fresh() {
    auto dir = std::filesystem::temp_directory_path() /
               ("tapelab-ocl-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    return dir;
  }
  std::filesystem::path dir = fresh();
  ~TempCache() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

TEST(OpenCLRuntime, ChoosesDevicesByIndexAndName) {
  REQUIRE_DEVICE();
  const auto devs = ocl::listDevices();
  ASSERT_FALSE(devs.empty());
  EXPECT_EQ(ocl::chooseDevice("0", "TEST").deviceName, devs[0].deviceName);
  // A substring of the name, in another case, finds it too.
  const std::string part = devs[0].deviceName.substr(0, 4);
  std::string upper = part;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(ocl::chooseDevice(upper, "TEST").index, ocl::chooseDevice(part, "TEST").index);
  try {
    ocl::chooseDevice("99", "TAPELAB_OPENCL_DEVICE");
    FAIL() << "index 99 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("TAPELAB_OPENCL_DEVICE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(devs[0].deviceName), std::string::npos) << e.what();
  }
  EXPECT_THROW(ocl::chooseDevice("no-such-device-xyz", "TEST"), std::invalid_argument);
}

TEST(OpenCLRuntime, BuildsRunsAndCachesBinaries) {
  REQUIRE_DEVICE();
  TempCache cache;
  ocl::Context ctx(ocl::chooseDevice("", "TEST"));
  ocl::Program first = ocl::buildProgram(ctx, kScale, "-cl-std=CL1.2", "", cache.dir.string());
  ocl::ProgramHandle keep(first.program);
  EXPECT_FALSE(first.cacheHit);
  const bool cached = std::filesystem::exists(cache.dir / "opencl") && !std::filesystem::is_empty(cache.dir / "opencl");
  ocl::Program second = ocl::buildProgram(ctx, kScale, "-cl-std=CL1.2", "", cache.dir.string());
  ocl::ProgramHandle keep2(second.program);
  EXPECT_EQ(second.cacheHit, cached) << "a stored binary must be loaded by the next build";
  // Other options are another key.
  ocl::Program third = ocl::buildProgram(ctx, kScale, "-cl-std=CL1.2 -DUNUSED=1", "", cache.dir.string());
  ocl::ProgramHandle keep3(third.program);
  EXPECT_FALSE(third.cacheHit);

  // Run the cached program: x -> 2x + 1, exactly.
  cl_int rc = CL_SUCCESS;
  cl_kernel k = clCreateKernel(second.program, "scale", &rc);
  ASSERT_EQ(rc, CL_SUCCESS) << ocl::errorName(rc);
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * float(i);
  ocl::Buffer buf(ctx, x.size() * sizeof(float));
  cl_event wrote = buf.enqueueWrite(ctx.queue(), x.data(), x.size() * sizeof(float));
  ocl::waitForEvent(wrote, "write");
  EXPECT_TRUE(ocl::eventDone(wrote, "write"));
  clReleaseEvent(wrote);
  const cl_mem m = buf.get();
  const float a = 2.0f;
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k, 1, sizeof a, &a), CL_SUCCESS);
  const size_t global = x.size();
  ASSERT_EQ(clEnqueueNDRangeKernel(ctx.queue(), k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<float> y(x.size());
  cl_event read = buf.enqueueRead(ctx.queue(), y.data(), y.size() * sizeof(float));
  ASSERT_EQ(clFlush(ctx.queue()), CL_SUCCESS);
  while (!ocl::eventDone(read, "read")) std::this_thread::yield();  // how the engine polls (gpu/host/watchdog.h)
  clReleaseEvent(read);
  clReleaseKernel(k);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] * 2.0f + 1.0f) << i;
}

TEST(OpenCLRuntime, BuildFailureCarriesLogAndSourcePath) {
  REQUIRE_DEVICE();
  TempCache cache;
  ocl::Context ctx(ocl::chooseDevice("", "TEST"));
  const std::string bad = "__kernel void broken(__global float* x) { x[0] = undeclared_name; }\n";
  try {
    ocl::buildProgram(ctx, bad, "-cl-std=CL1.2", "/tmp/dumped/broken.cl", cache.dir.string());
    FAIL() << "a broken kernel built";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("/tmp/dumped/broken.cl"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undeclared_name"), std::string::npos) << "the build log should be quoted: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  }
  // Not dumped by the caller: the error still names a file holding the source.
  try {
    ocl::buildProgram(ctx, bad, "-cl-std=CL1.2", "", cache.dir.string());
    FAIL();
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    const size_t at = msg.find("[source: ");
    ASSERT_NE(at, std::string::npos) << msg;
    const std::string path = msg.substr(at + 9, msg.find(']', at) - at - 9);
    std::ifstream f(path);
    const std::string text((std::istreambuf_iterator<char>(f)), {});
    EXPECT_EQ(text, bad) << path;
    std::filesystem::remove(path);
  }
}

// A cached binary that is truncated or has a byte changed is a miss: built again
// from source and rewritten whole, never handed to clCreateProgramWithBinary.
TEST(OpenCLRuntime, CorruptCachedBinaryIsRebuilt) {
  REQUIRE_DEVICE();
  TempCache cache;
  ocl::Context ctx(ocl::chooseDevice("", "TEST"));
  ocl::ProgramHandle first(ocl::buildProgram(ctx, kScale, "-cl-std=CL1.2", "", cache.dir.string()).program);
  if (!std::filesystem::exists(cache.dir / "opencl") || std::filesystem::is_empty(cache.dir / "opencl"))
    GTEST_SKIP() << "this platform hands out no program binaries";
  std::filesystem::path entry;
  for (const auto& e : std::filesystem::directory_iterator(cache.dir / "opencl")) entry = e.path();
  std::string whole;
  {
    std::ifstream in(entry, std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (const std::string& bad : {whole.substr(0, whole.size() / 2), whole.substr(0, whole.size() - 1),
                                 [&] { std::string b = whole; b[whole.size() * 3 / 4] ^= 8; return b; }()}) {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bad;
    ocl::Program again = ocl::buildProgram(ctx, kScale, "-cl-std=CL1.2", "", cache.dir.string());
    ocl::ProgramHandle keep(again.program);
    EXPECT_FALSE(again.cacheHit) << "a damaged binary was loaded";
    ocl::Program next = ocl::buildProgram(ctx, kScale, "-cl-std=CL1.2", "", cache.dir.string());
    ocl::ProgramHandle keepNext(next.program);
    EXPECT_TRUE(next.cacheHit) << "the rebuilt entry was not stored whole";
  }
}

// No binary from another key's entry, none read from a special file (README, "Faults"): another
// program's entry under this name, a link to /dev/zero, a FIFO or a directory are misses, rebuilt.
TEST(OpenCLRuntime, ForeignOrSpecialCachedBinariesAreRebuilt) {
  REQUIRE_DEVICE();
  TempCache cache;
  ocl::Context ctx(ocl::chooseDevice("", "TEST"));
  const std::string other = std::string(kScale) + "// another program\n";
  auto build = [&](const std::string& source) {
    ocl::Program p = ocl::buildProgram(ctx, source, "-cl-std=CL1.2", "", cache.dir.string());
    ocl::ProgramHandle keep(p.program);
    return p.cacheHit;
  };
  build(kScale);
  if (!std::filesystem::exists(cache.dir / "opencl") || std::filesystem::is_empty(cache.dir / "opencl"))
    GTEST_SKIP() << "this platform hands out no program binaries";
  std::filesystem::path entry;
  for (const auto& e : std::filesystem::directory_iterator(cache.dir / "opencl")) entry = e.path();
  build(other);
  std::filesystem::path otherEntry;
  for (const auto& e : std::filesystem::directory_iterator(cache.dir / "opencl"))
    if (e.path() != entry) otherEntry = e.path();
  ASSERT_FALSE(otherEntry.empty());
  testutil::expectForeignAndSpecialEntriesRebuilt(entry, otherEntry, [&] { return build(kScale); });
}
