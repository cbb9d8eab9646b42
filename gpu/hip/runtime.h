// The HIP runtime (libamdhip64, ROCm's), loaded at run time like CUDA's
// driver: tapelab links no ROCm library, so every binary starts where there is
// none, and the hip engine says what it lacks. The few entry points used are
// declared here with their C types (hip_runtime_api.h is not needed to build).
#pragma once
#include <cstddef>
#include <string>

namespace tapelab::hip {

using hipError_t = int;  // hipSuccess = 0
inline constexpr hipError_t hipErrorNotReady = 600;  // hipStreamQuery: work still running
using hipModule_t = struct HipModuleOpaque*;
using hipFunction_t = struct HipFunctionOpaque*;
using hipStream_t = struct HipStreamOpaque*;
using hipDeviceptr_t = void*;

struct Runtime {
  hipError_t (*hipInit)(unsigned int) = nullptr;
  hipError_t (*hipRuntimeGetVersion)(int*) = nullptr;
  hipError_t (*hipGetDeviceCount)(int*) = nullptr;
  hipError_t (*hipSetDevice)(int) = nullptr;
  hipError_t (*hipDeviceGetName)(char*, int, int) = nullptr;
  const char* (*hipGetErrorName)(hipError_t) = nullptr;
  const char* (*hipGetErrorString)(hipError_t) = nullptr;
  hipError_t (*hipMemGetInfo)(size_t*, size_t*) = nullptr;
  hipError_t (*hipMalloc)(void**, size_t) = nullptr;
  hipError_t (*hipFree)(void*) = nullptr;
  hipError_t (*hipMemcpyHtoD)(hipDeviceptr_t, void*, size_t) = nullptr;
  hipError_t (*hipMemcpyDtoH)(void*, hipDeviceptr_t, size_t) = nullptr;
  hipError_t (*hipDeviceSynchronize)() = nullptr;
  hipError_t (*hipStreamQuery)(hipStream_t) = nullptr;
  hipError_t (*hipModuleLoadData)(hipModule_t*, const void*) = nullptr;
  hipError_t (*hipModuleUnload)(hipModule_t) = nullptr;
  hipError_t (*hipModuleGetFunction)(hipFunction_t*, hipModule_t, const char*) = nullptr;
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void**, void**) = nullptr;
  std::string library;  // the file loaded
  int devices = 0;      // hipGetDeviceCount after hipInit
};

// The runtime with hipInit done and at least one device, or nullptr with *why
// set to a one-line reason ("libamdhip64.so not found", "hipInit failed:
// hipErrorInvalidDevice (no AMD GPU)"). Loads once per process.
const Runtime* runtime(std::string* why);

// Throws std::runtime_error("HIP: <what>: <error name>: <error string>") unless rc == 0.
void check(const Runtime& rt, hipError_t rc, const std::string& what);

}  // namespace tapelab::hip
