// The OpenCL host plumbing under the opencl engine: device choice, programs
// built with their log (and cached on disk as binaries), buffers. Nothing here
// knows about tapes; the engine (opencl.cpp) puts kernels on top.
//
// OpenCL 1.2 API only (CL_TARGET_OPENCL_VERSION=120, set by CMake), so the
// same binary runs on PoCL here and on NVIDIA's 3.0 ICD on the H200.
#pragma once
#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/host/watchdog.h"

namespace tapelab::ocl {

// "CL_OUT_OF_RESOURCES" etc.
const char* errorName(cl_int code);
// Throws std::runtime_error("OpenCL: <what>: <name>") unless code == CL_SUCCESS.
void check(cl_int code, const std::string& what);

struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  int index = 0;  // position in listDevices()
  std::string platformName, deviceName, deviceVersion, driverVersion, extensions;
  bool gpu = false;
  bool fp64 = false;
  bool fp32CorrectlyRounded = false;  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT in CL_DEVICE_SINGLE_FP_CONFIG
  uint64_t globalMemBytes = 0, maxAllocBytes = 0;
  size_t maxWorkGroupSize = 0;
  unsigned computeUnits = 0;
  bool hasExtension(const std::string& ext) const;
  std::string describe() const;  // "NVIDIA H200 (NVIDIA CUDA, OpenCL 3.0 CUDA, driver 580.1)"
};

// Every device of every platform, platforms in ICD order. Throws when the
// loader finds no platform (the message says so).
std::vector<DeviceInfo> listDevices();

// The device `selector` names: "" = the (slot mod n)-th of the n GPUs (of every
// device when there is no GPU; api/ranks.h: slot is the node-local rank);
// a decimal index into listDevices(); else the first device whose device or
// platform name contains `selector` (case-insensitive). Throws
// std::invalid_argument naming `what` (e.g. "TAPELAB_OPENCL_DEVICE") when
// nothing matches.
DeviceInfo chooseDevice(const std::string& selector, const std::string& what, unsigned slot = 0);

// A context and an in-order queue on one device.
class Context {
 public:
  explicit Context(const DeviceInfo& dev);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  cl_context context() const { return ctx_; }
  cl_command_queue queue() const { return queue_; }
  const DeviceInfo& device() const { return dev_; }
  // Set when a wait on the queue passed TAPELAB_DEVICE_TIMEOUT (gpu/host/watchdog.h): the queue
  // and context are then never released (a release may finish the queue first, which would not
  // return), nor anything the stuck commands use.
  DeviceLostFlag lost = makeDeviceLostFlag();

 private:
  DeviceInfo dev_;
  cl_context ctx_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

// A device buffer; zero bytes gives a 1-byte buffer so kernel arguments stay valid.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Context& ctx, size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  cl_mem get() const { return mem_; }
  size_t bytes() const { return bytes_; }
  // Non-blocking: enqueues the copy and returns its event (the caller waits and releases it);
  // `host` must stay valid until the event completes.
  cl_event enqueueWrite(cl_command_queue q, const void* host, size_t bytes);
  cl_event enqueueRead(cl_command_queue q, void* host, size_t bytes) const;

 private:
  cl_mem mem_ = nullptr;
  size_t bytes_ = 0;
};

// Whether `event` completed: false while it runs; throws std::runtime_error("OpenCL: <what>: <error>")
// when its command terminated abnormally.
bool eventDone(cl_event event, const std::string& what);
// Blocks until `event` completes (clWaitForEvents), throwing likewise.
void waitForEvent(cl_event event, const std::string& what);

// A built program and what building it took.
struct Program {
  cl_program program = nullptr;
  bool cacheHit = false;
  double seconds = 0;
  std::string buildLog;  // the compiler's log (warnings, -cl-nv-verbose statistics)
};

struct ProgramDeleter {
  void operator()(cl_program p) const;
};
using ProgramHandle = std::unique_ptr<std::remove_pointer_t<cl_program>, ProgramDeleter>;

// Builds `source` with `options` for the context's device. When the platform
// hands out program binaries they are cached (with the build log) under
// cacheDir/opencl ("" = no cache), keyed by source, options, platform, device
// and driver version, and a second build loads the binary. On failure throws
// std::runtime_error with the first lines of the build log and `sourcePath`
// (where the caller dumped the source; when "", the source is written to
// $TMPDIR/tapelab-failed/ and that path is named).
Program buildProgram(const Context& ctx, const std::string& source, const std::string& options,
                     const std::string& sourcePath, const std::string& cacheDir);

}  // namespace tapelab::ocl
