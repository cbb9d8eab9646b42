// CUDA C to PTX and SASS with NVRTC (libnvrtc, loaded at run time); needs no
// driver and no GPU, so CI
// compiles every kernel kind here. Options are the exactness ones: --fmad=false,
// no fast-math (NVRTC's default keeps IEEE division and square root).
#pragma once
#include <string>
#include <vector>

namespace tapelab::cu {

struct NvrtcOutput {
  bool ok = false;
  std::string ptx;
  std::vector<char> cubin;  // SASS for the real architecture
  std::string log;          // compiler log; with ptxas -v: registers, stack, spills
  std::string arch;         // "sm_90"
  double seconds = 0;
  int registers = -1;             // from the ptxas log, -1 when not reported
  long long stackBytes = -1;      // "bytes stack frame"
  long long spillStoreBytes = -1, spillLoadBytes = -1;
  long long ptxInstructions = -1;  // tapelab_kernel's PTX instructions (cu::ptxInstructions), -1 without PTX
  std::string statsLine() const;  // "40 registers, 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
};

// Compiles `source` for sm_<smMajor><smMinor> (PTX and cubin, ptxas verbose).
// Never throws for a compile error: ok=false and `log` holds NVRTC's log.
NvrtcOutput compileCuda(const std::string& source, const std::string& fileName, int smMajor = 9, int smMinor = 0);

// compileCuda through an on-disk cache (cacheDir/cuda; "" = none), keyed by
// source, architecture, options and NVRTC version; *cacheHit says whether it was used.
NvrtcOutput compileCudaCached(const std::string& source, const std::string& fileName, int smMajor, int smMinor,
                              const std::string& cacheDir, bool* cacheHit);

// PTX only, for the virtual architecture compute_<smMajor><smMinor> (no ptxas: fast).
NvrtcOutput compilePtxOnly(const std::string& source, const std::string& fileName, int smMajor = 9, int smMinor = 0);

// Instructions in the PTX of one entry function (`entry`; "" = every function): statement lines
// inside its body, not directives, labels or braces. A static count: a loop's body counts once.
long long ptxInstructions(const std::string& ptx, const std::string& entry = "");

// Whether libnvrtc could be loaded (it is dlopen'ed on first use); else *why says so.
bool nvrtcAvailable(std::string* why);

// "13.0" ("?" without NVRTC)
std::string nvrtcVersionString();

}  // namespace tapelab::cu
