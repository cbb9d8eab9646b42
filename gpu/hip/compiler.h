// HIP C to AMD code objects with the offline compiler: hipcc (ROCm's driver
// for its clang; Debian 12 ships ROCm 5.2.3's with clang 15), one code object
// (an ELF file, unbundled) per target, through an on-disk cache. Needs no GPU
// and no HIP runtime.
//
// Why hipcc and not hipRTC: Debian's hipRTC lives in libamdhip64.so.5 and
// compiles gfx9 and gfx10 here, but aborts the process (munmap_chunk) for every
// gfx11 target, since its embedded device libraries stop at gfx1036; hipcc runs
// outside the process, reports errors as text, and takes a device-library folder.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace tapelab::hip {

// hipcc as found here; probed once per process.
struct Toolchain {
  bool ok = false;
  std::string why;           // when !ok: one line
  std::string hipcc;         // the command run
  std::string version;       // "HIP version: 5.2.21153-0, Debian clang version 15.0.6"
  std::string versionText;   // hipcc --version in full: part of every cache key
  std::string clang;         // the clang hipcc drives (its -### output)
  std::string deviceLibDir;  // where its ocml.bc is
};
const Toolchain& toolchain();

// The exactness options every compile gets, after --offload-arch: no
// contraction (clang's HIP default fuses across statements), no fast math,
// correctly rounded fp32 division and sqrt (clang's default, said explicitly),
// denormals kept, and the runtime header hipRTC would include itself.
const std::vector<std::string>& exactnessFlags();

// hipcc's arguments for `target` up to the input file: -x hip, the target,
// one unbundled device object, the exactness flags, and for a gfx11 target
// this ROCm has no device-library ISA file for, a folder with one made here
// (compiler.cpp says why that is sound; made on first use in cacheDir/hip, each
// made file's key in its util/files.h record, checked at every call and the
// folder made again when a check fails; with cacheDir "", in a mkdtemp folder
// private to this process, removed at exit, which compileHip's log names).
std::vector<std::string> hipccArguments(const std::string& target, const std::string& cacheDir);

// Whether `target` (with or without features) is a gfx11 (RDNA3) processor.
bool isGfx11Target(const std::string& target);

// The hipcc arguments that let LLVM 15 use 256 VGPRs on a gfx11 target instead
// of its interim 128 (-amdgpu-limit-to-128-vgprs: until its 16-bit operand
// encoding is done, v128-v255 may be misencoded, so such code objects are for
// statistics, never run). Empty for other targets.
std::vector<std::string> liftGfx11VgprLimit(const std::string& target);

// "gfx1103,gfx90a" -> {"gfx1103", "gfx90a"}; a target may carry features
// ("gfx90a:xnack-"). Throws std::invalid_argument naming TAPELAB_HIP_ARCH for
// an empty list or an entry that is not gfx<digits/letters>[:feature±...].
std::vector<std::string> parseTargets(const std::string& list);

struct CodeObject {
  std::string target;
  std::string bytes;            // the ELF code object; empty when the compile failed
  std::string log;              // hipcc's output: warnings, the resource-usage remarks
  int compilerOccupancy = -1;   // the remark's "Occupancy [waves/SIMD]" (VGPR, SGPR, LDS and workgroup limits)
  bool cacheHit = false;
  bool syntheticIsaLibrary = false;  // oclc_isa_version_<target>.bc made here (see compiler.cpp)
  double seconds = 0;
  bool timedOut = false;  // hipcc was ended at `deadline` (bytes empty)
};

// Compiles `source` for `target` (cache: cacheDir/hip; "" = none), with
// `extra` hipcc arguments after the usual ones (part of the cache key). Never
// throws for a compile error: bytes is empty and log says why. Throws
// std::runtime_error when hipcc is missing. hipcc is ended past `deadline` (timedOut).
CodeObject compileHip(const std::string& source, const std::string& target, const std::string& cacheDir,
                      const std::vector<std::string>& extra = {},
                      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

}  // namespace tapelab::hip
