#include "gpu/opencl/cl_runtime.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "gpu/host/compile.h"
#include "gpu/host/memory.h"
#include "util/files.h"
#include "util/hash.h"

namespace tapelab::ocl {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string platformString(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  return trim(s);
}

std::string deviceString(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  return trim(s);
}

template <class T>
T deviceValue(cl_device_id d, cl_device_info what) {
  T v{};
  if (clGetDeviceInfo(d, what, sizeof(T), &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

std::string programBuildLog(cl_program prog, cl_device_id dev) {
  size_t n = 0;
  if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, s.data(), nullptr) != CL_SUCCESS) return "";
  return trim(s);
}

// A cached program: an entry holding the full key (util/files.h) whose payload is a line with the
// build log's length, the log, then the binary.
std::string cacheKey(const Context& ctx, const std::string& source, const std::string& options) {
  const DeviceInfo& d = ctx.device();
  return "tapelab-opencl-v3|" + d.platformName + "|" + d.deviceName + "|" + d.driverVersion + "|" + options +
         "|" + contentHash(source) + "|" + std::to_string(source.size());
}

std::vector<unsigned char> loadCached(const std::string& path, const std::string& key, std::string& log) {
  const std::optional<std::string> file = readCacheEntry(path, key);  // nullopt when missing, foreign or damaged
  if (!file) return {};
  std::istringstream in(*file);
  std::string logSize;
  if (!std::getline(in, logSize)) return {};
  char* end = nullptr;
  const unsigned long n = std::strtoul(logSize.c_str(), &end, 10);
  if (logSize.empty() || *end || n > (64u << 20)) return {};
  log.assign(n, '\0');
  if (!in.read(log.data(), static_cast<std::streamsize>(n))) return {};
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

void storeCached(const std::string& path, const std::string& key, const std::string& log,
                 const std::vector<unsigned char>& binary) {
  std::string entry = std::to_string(log.size()) + '\n' + log;
  entry.append(reinterpret_cast<const char*>(binary.data()), binary.size());
  writeCacheEntry(path, key, entry);  // the cache is an optimisation: an unwritable one is ignored
}

std::vector<unsigned char> programBinary(cl_program prog) {
  cl_uint ndev = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, nullptr) != CL_SUCCESS || ndev != 1)
    return {};
  size_t size = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
    return {};
  std::vector<unsigned char> bin(size);
  unsigned char* ptr = bin.data();
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) return {};
  return bin;
}

}  // namespace

const char* errorName(cl_int code) {
  switch (code) {
#define TAPELAB_CL_ERR(x) \
  case x: return #x;
    TAPELAB_CL_ERR(CL_SUCCESS)
    TAPELAB_CL_ERR(CL_DEVICE_NOT_FOUND)
    TAPELAB_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    TAPELAB_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
    TAPELAB_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TAPELAB_CL_ERR(CL_OUT_OF_RESOURCES)
    TAPELAB_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    TAPELAB_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    TAPELAB_CL_ERR(CL_INVALID_VALUE)
    TAPELAB_CL_ERR(CL_INVALID_DEVICE)
    TAPELAB_CL_ERR(CL_INVALID_PLATFORM)
    TAPELAB_CL_ERR(CL_INVALID_CONTEXT)
    TAPELAB_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    TAPELAB_CL_ERR(CL_INVALID_MEM_OBJECT)
    TAPELAB_CL_ERR(CL_INVALID_BINARY)
    TAPELAB_CL_ERR(CL_INVALID_BUILD_OPTIONS)
    TAPELAB_CL_ERR(CL_INVALID_PROGRAM)
    TAPELAB_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    TAPELAB_CL_ERR(CL_INVALID_KERNEL_NAME)
    TAPELAB_CL_ERR(CL_INVALID_KERNEL)
    TAPELAB_CL_ERR(CL_INVALID_ARG_INDEX)
    TAPELAB_CL_ERR(CL_INVALID_ARG_VALUE)
    TAPELAB_CL_ERR(CL_INVALID_ARG_SIZE)
    TAPELAB_CL_ERR(CL_INVALID_KERNEL_ARGS)
    TAPELAB_CL_ERR(CL_INVALID_WORK_DIMENSION)
    TAPELAB_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    TAPELAB_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    TAPELAB_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    TAPELAB_CL_ERR(CL_INVALID_BUFFER_SIZE)
    TAPELAB_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    TAPELAB_CL_ERR(CL_INVALID_OPERATION)
    TAPELAB_CL_ERR(CL_INVALID_COMPILER_OPTIONS)
    TAPELAB_CL_ERR(CL_INVALID_DEVICE_TYPE)
#undef TAPELAB_CL_ERR
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (the ICD loader found no OpenCL platform)";
    default: return "unknown OpenCL error";
  }
}

void check(cl_int code, const std::string& what) {
  if (code != CL_SUCCESS)
    throw std::runtime_error("OpenCL: " + what + ": " + errorName(code) + " (" + std::to_string(code) + ")");
}

bool DeviceInfo::hasExtension(const std::string& ext) const {
  std::istringstream in(extensions);
  std::string word;
  while (in >> word)
    if (word == ext) return true;
  return false;
}

std::string DeviceInfo::describe() const {
  return deviceName + " (" + platformName + ", " + deviceVersion + ", driver " + driverVersion + ")";
}

std::vector<DeviceInfo> listDevices() {
  // Under `ulimit -v` an ICD may fail to load, or crash loading (PoCL: SIGSEGV at 400 MB): memory is said first.
  if (const std::string memory = addressSpaceShortfall("OpenCL"); !memory.empty()) throw std::runtime_error(memory);
  cl_uint np = 0;
  const cl_int rc = clGetPlatformIDs(0, nullptr, &np);
  if (rc == -1001 || (rc == CL_SUCCESS && np == 0)) {
    const std::string memory = addressSpaceShortfall("OpenCL");  // ulimit -v: the ICD loader could not map a driver
    throw std::runtime_error(memory.empty() ? "no OpenCL platform: the ICD loader found no driver (install "
                                              "pocl-opencl-icd, or a GPU vendor's ICD)"
                                            : memory);
  }
  check(rc, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(np);
  check(clGetPlatformIDs(np, platforms.data(), nullptr), "clGetPlatformIDs");
  std::vector<DeviceInfo> out;
  for (cl_platform_id p : platforms) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> devs(nd);
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id d : devs) {
      DeviceInfo info;
      info.platform = p;
      info.device = d;
      info.index = static_cast<int>(out.size());
      info.platformName = platformString(p, CL_PLATFORM_NAME);
      info.deviceName = deviceString(d, CL_DEVICE_NAME);
      info.deviceVersion = deviceString(d, CL_DEVICE_VERSION);
      info.driverVersion = deviceString(d, CL_DRIVER_VERSION);
      info.extensions = deviceString(d, CL_DEVICE_EXTENSIONS);
      info.gpu = (deviceValue<cl_device_type>(d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) != 0;
      info.fp64 = deviceValue<cl_device_fp_config>(d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0 || info.hasExtension("cl_khr_fp64");
      info.fp32CorrectlyRounded =
          (deviceValue<cl_device_fp_config>(d, CL_DEVICE_SINGLE_FP_CONFIG) & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
      info.globalMemBytes = deviceValue<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
      info.maxAllocBytes = deviceValue<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.maxWorkGroupSize = deviceValue<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      info.computeUnits = deviceValue<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
      out.push_back(std::move(info));
    }
  }
  if (out.empty()) {
    const std::string memory = addressSpaceShortfall("OpenCL");
    throw std::runtime_error(memory.empty() ? "no OpenCL device: the platforms found list no devices" : memory);
  }
  return out;
}

DeviceInfo chooseDevice(const std::string& selector, const std::string& what, unsigned slot) {
  const std::vector<DeviceInfo> devs = listDevices();
  std::string known;
  for (const auto& d : devs) known += (known.empty() ? "" : "; ") + std::to_string(d.index) + ": " + d.deviceName;
  if (selector.empty()) {
    std::vector<const DeviceInfo*> gpus;
    for (const auto& d : devs)
      if (d.gpu) gpus.push_back(&d);
    return gpus.empty() ? devs[slot % devs.size()] : *gpus[slot % gpus.size()];
  }
  if (std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const unsigned long i = std::strtoul(selector.c_str(), nullptr, 10);
    if (selector.size() > 6 || i >= devs.size())
      throw std::invalid_argument(what + ": no OpenCL device with index " + selector + " (devices: " + known + ")");
    return devs[i];
  }
  const std::string want = lower(selector);
  for (const auto& d : devs)
    if (lower(d.deviceName).find(want) != std::string::npos || lower(d.platformName).find(want) != std::string::npos)
      return d;
  throw std::invalid_argument(what + ": no OpenCL device matches '" + selector + "' (devices: " + known + ")");
}

Context::Context(const DeviceInfo& dev) : dev_(dev) {
  cl_int rc = CL_SUCCESS;
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(dev.platform), 0};
  ctx_ = clCreateContext(props, 1, &dev_.device, nullptr, nullptr, &rc);
  check(rc, "clCreateContext on " + dev.deviceName);
  queue_ = clCreateCommandQueue(ctx_, dev_.device, 0, &rc);
  if (rc != CL_SUCCESS) {
    clReleaseContext(ctx_);
    check(rc, "clCreateCommandQueue on " + dev.deviceName);
  }
}

Context::~Context() {
  if (*lost) return;  // leaked: see `lost`
  if (queue_) clReleaseCommandQueue(queue_);
  if (ctx_) clReleaseContext(ctx_);
}

Buffer::Buffer(const Context& ctx, size_t bytes, cl_mem_flags flags) : bytes_(bytes) {
  cl_int rc = CL_SUCCESS;
  mem_ = clCreateBuffer(ctx.context(), flags, std::max<size_t>(bytes, 1), nullptr, &rc);
  check(rc, "clCreateBuffer of " + std::to_string(bytes) + " bytes");
}

Buffer::~Buffer() {
  if (mem_) clReleaseMemObject(mem_);
}

Buffer::Buffer(Buffer&& o) noexcept : mem_(o.mem_), bytes_(o.bytes_) {
  o.mem_ = nullptr;
  o.bytes_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    if (mem_) clReleaseMemObject(mem_);
    mem_ = o.mem_;
    bytes_ = o.bytes_;
    o.mem_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

cl_event Buffer::enqueueWrite(cl_command_queue q, const void* host, size_t bytes) {
  cl_event e = nullptr;
  check(clEnqueueWriteBuffer(q, mem_, CL_FALSE, 0, bytes, host, 0, nullptr, &e), "clEnqueueWriteBuffer");
  return e;
}

cl_event Buffer::enqueueRead(cl_command_queue q, void* host, size_t bytes) const {
  cl_event e = nullptr;
  check(clEnqueueReadBuffer(q, mem_, CL_FALSE, 0, bytes, host, 0, nullptr, &e), "clEnqueueReadBuffer");
  return e;
}

bool eventDone(cl_event event, const std::string& what) {
  cl_int status = CL_QUEUED;
  check(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo");
  if (status < 0) check(status, what);  // the command's own error code
  return status == CL_COMPLETE;
}

void waitForEvent(cl_event event, const std::string& what) {
  const cl_int rc = clWaitForEvents(1, &event);
  if (rc == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) eventDone(event, what);  // names the command's error
  check(rc, "clWaitForEvents (" + what + ")");
}

void ProgramDeleter::operator()(cl_program p) const {
  if (p) clReleaseProgram(p);
}

Program buildProgram(const Context& ctx, const std::string& source, const std::string& options,
                     const std::string& sourcePath, const std::string& cacheDir) {
  const auto t0 = std::chrono::steady_clock::now();
  const cl_device_id dev = ctx.device().device;
  const std::string key = cacheKey(ctx, source, options);
  // Named by a hash of the key; the entry begins with the key itself, compared on a hit.
  const std::string path =
      cacheDir.empty() ? "" : (std::filesystem::path(cacheDir) / "opencl" / (contentHash(key) + ".bin")).string();
  Program out;

  if (!path.empty()) {
    std::string cachedLog;
    const std::vector<unsigned char> bin = loadCached(path, key, cachedLog);
    if (!bin.empty()) {
      const unsigned char* ptr = bin.data();
      const size_t size = bin.size();
      cl_int status = CL_SUCCESS, rc = CL_SUCCESS;
      cl_program prog = clCreateProgramWithBinary(ctx.context(), 1, &dev, &size, &ptr, &status, &rc);
      if (rc == CL_SUCCESS && status == CL_SUCCESS &&
          clBuildProgram(prog, 1, &dev, options.c_str(), nullptr, nullptr) == CL_SUCCESS) {
        out.program = prog;
        out.cacheHit = true;
        out.buildLog = cachedLog;  // the log of the build that made the binary (statistics)
      } else if (prog) {
        clReleaseProgram(prog);  // a stale or foreign binary: rebuild from source below
      }
    }
  }

  if (!out.program) {
    const char* src = source.c_str();
    const size_t len = source.size();
    cl_int rc = CL_SUCCESS;
    cl_program prog = clCreateProgramWithSource(ctx.context(), 1, &src, &len, &rc);
    check(rc, "clCreateProgramWithSource");
    rc = clBuildProgram(prog, 1, &dev, options.c_str(), nullptr, nullptr);
    const std::string log = programBuildLog(prog, dev);
    if (rc != CL_SUCCESS) {
      clReleaseProgram(prog);
      // The error names a file holding the source: the caller's dump, else one written now.
      const std::string where = sourceForError(sourcePath, "opencl", "cl", source);
      throw std::runtime_error(std::string("OpenCL build failed on ") + ctx.device().deviceName + " (" +
                               errorName(rc) + ") [source: " + where + "]: " +
                               (log.empty() ? "no build log" : logHead(log, 12)));
    }
    out.program = prog;
    out.buildLog = log;
    if (!path.empty()) {
      const std::vector<unsigned char> bin = programBinary(prog);
      if (!bin.empty()) storeCached(path, key, log, bin);
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace tapelab::ocl
