// What an engine is made with: the machine-level settings its factory takes
// (threads, the cache directory, which device, which compiler). Plain data,
// filled at the edge (api/knobs.h: TAPELAB_* variables) or set directly; no
// engine reads the environment. Per-kernel knobs are KernelOptions::knobs.
#pragma once
#include <optional>
#include <string>

namespace tapelab {

struct EngineSettings {
  unsigned threads = 0;  // CPU engines' worker threads; 0 = the hardware's
  std::string cacheDir;  // root of the compiled-kernel caches, each engine in its folder; "" = none
  // Which of the devices a GPU engine picks by default: under mpirun the process's node-local rank
  // (api/ranks.h). An engine whose device selector is unset takes the (deviceSlot mod n)-th of the
  // n devices its default chooses among (0: the default itself).
  unsigned deviceSlot = 0;
  // GPU engines: the most seconds one wait on the device (a submit, a dispatch and its read-back)
  // may take; past it the run throws DeviceTimeout and the device is abandoned (gpu/host/watchdog.h).
  // 0 = no limit (the drivers' own blocking waits). 600 s: a long submit on a CPU-served device
  // (lavapipe, PoCL) of a long tape takes minutes, a real GPU's dispatches milliseconds.
  double deviceTimeout = 600;
  // Every engine: the most seconds one kernel's compile may take (a compiler process is ended, an
  // in-process compiler left behind: engine/compile_watch.h); 0 = no limit. 900 s: a cold OpenCL
  // build on the H200 took 228 s, a cold 7-market revolve kernel through NVRTC over 240 s.
  double compileTimeout = 900;

  struct CpuJit {
    std::string compiler = "c++";  // run at compile time (PATH lookup)
    bool precompiledHeader = true; // a precompiled xsimd header in the cache (GCC)
  } cpuJit;

  struct Vulkan {
    std::string device;     // index or name substring; "" = the first discrete GPU (else integrated, else any)
    std::string loaderKey;  // which drivers the Vulkan loader sees (VK_DRIVER_FILES, VK_ICD_FILENAMES)
  } vulkan;

  struct OpenCL {
    std::string device;  // index or name substring; "" = the first GPU (else the first device)
  } opencl;

  struct Cuda {
    std::optional<unsigned> device;      // device index; unset: deviceSlot mod the device count (0)
    int archMajor = 9, archMinor = 0;    // the target when no driver says: sm_90 (the H200)
  } cuda;

  struct Hip {
    std::string arch = "gfx1103,gfx90a";  // --offload-arch targets, comma-separated: Radeon 780M (RDNA3), MI200 (CDNA2)
    // VGPRs per lane hipcc may use on gfx11: LLVM 15 stops at 128 (an interim
    // limit of its gfx11 backend, not the hardware's 256); 256 lifts it, for
    // statistics only (such code objects are not run).
    int gfx11Vgprs = 128;
  } hip;
};

}  // namespace tapelab
