// The CUDA driver API, loaded at run time. libcuda.so.1 comes with the NVIDIA
// driver, not with the toolkit, so tapelab never links it: a binary built here
// starts on machines without a driver, and the cuda engine says why it cannot
// run. cuda.h supplies the types and signatures only.
#pragma once
#include <cuda.h>

#include <string>

namespace tapelab::cu {

// Function pointers resolved with dlsym under the names cuda.h maps them to
// (cuMemAlloc -> cuMemAlloc_v2, ...).
struct Driver {
#define TAPELAB_CU_FUNCTIONS(X)                                                                            \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet) \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)              \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuMemGetInfo) X(cuMemAlloc)       \
  X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuModuleLoadDataEx) X(cuModuleUnload)                    \
  X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuMemAllocHost)       \
  X(cuMemFreeHost) X(cuMemcpyDtoHAsync) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery)  \
  X(cuEventSynchronize) X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuStreamCreate) X(cuStreamDestroy)    \
  X(cuStreamWaitEvent) X(cuStreamCreateWithPriority) X(cuCtxGetStreamPriorityRange) X(cuFuncSetAttribute)
// Resolved where the driver has them, else left null: cuEventElapsedTime is cuEventElapsedTime_v2
// in cuda.h 12.8 and later, which older drivers lack (only DispatchOptions::timeline uses it).
#define TAPELAB_CU_OPTIONAL_FUNCTIONS(X) X(cuEventElapsedTime)
#define TAPELAB_CU_DECLARE(fn) decltype(&::fn) fn = nullptr;
  TAPELAB_CU_FUNCTIONS(TAPELAB_CU_DECLARE)
  TAPELAB_CU_OPTIONAL_FUNCTIONS(TAPELAB_CU_DECLARE)
#undef TAPELAB_CU_DECLARE
};

// The loaded driver with cuInit done, or nullptr with *why set to a one-line
// reason ("libcuda.so.1 not found (no NVIDIA driver)", "cuInit failed: ...",
// "no CUDA device"). Loads once per process.
const Driver* driver(std::string* why);

// Throws std::runtime_error("CUDA: <what>: <error name>: <error string>") unless rc == CUDA_SUCCESS.
void check(const Driver& d, CUresult rc, const std::string& what);

}  // namespace tapelab::cu
