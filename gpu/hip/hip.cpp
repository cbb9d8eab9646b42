#include "gpu/hip/hip.h"

#include <dlfcn.h>

#include <chrono>
#include <stdexcept>

#include "gpu/codegen/emit.h"
#include "gpu/host/compile.h"

namespace tapelab {
namespace {

// hipRTC's C API, declared here (its header comes with ROCm, which Debian 12
// does not ship): the NVRTC-shaped subset tapelab calls.
using hiprtcResult = int;
using hiprtcProgram = struct HiprtcProgramOpaque*;
struct HipRtc {
  hiprtcResult (*createProgram)(hiprtcProgram*, const char*, const char*, int, const char**, const char**) = nullptr;
  hiprtcResult (*compileProgram)(hiprtcProgram, int, const char**) = nullptr;
  hiprtcResult (*getProgramLogSize)(hiprtcProgram, size_t*) = nullptr;
  hiprtcResult (*getProgramLog)(hiprtcProgram, char*) = nullptr;
  hiprtcResult (*getCodeSize)(hiprtcProgram, size_t*) = nullptr;
  hiprtcResult (*getCode)(hiprtcProgram, char*) = nullptr;
  hiprtcResult (*destroyProgram)(hiprtcProgram*) = nullptr;
  std::string library;
};

constexpr const char* kNoAmdGpu = "no AMD GPU available to the project";

struct LoadedHipRtc {
  HipRtc api;
  bool ok = false;
  std::string why;
};

LoadedHipRtc loadHipRtc() {
  LoadedHipRtc l;
  for (const char* name : {"libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5", "/opt/rocm/lib/libhiprtc.so"}) {
    void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) continue;
    auto sym = [&](const char* s) { return dlsym(lib, s); };
    l.api.createProgram = reinterpret_cast<decltype(l.api.createProgram)>(sym("hiprtcCreateProgram"));
    l.api.compileProgram = reinterpret_cast<decltype(l.api.compileProgram)>(sym("hiprtcCompileProgram"));
    l.api.getProgramLogSize = reinterpret_cast<decltype(l.api.getProgramLogSize)>(sym("hiprtcGetProgramLogSize"));
    l.api.getProgramLog = reinterpret_cast<decltype(l.api.getProgramLog)>(sym("hiprtcGetProgramLog"));
    l.api.getCodeSize = reinterpret_cast<decltype(l.api.getCodeSize)>(sym("hiprtcGetCodeSize"));
    l.api.getCode = reinterpret_cast<decltype(l.api.getCode)>(sym("hiprtcGetCode"));
    l.api.destroyProgram = reinterpret_cast<decltype(l.api.destroyProgram)>(sym("hiprtcDestroyProgram"));
    if (l.api.createProgram && l.api.compileProgram && l.api.getProgramLogSize && l.api.getProgramLog &&
        l.api.getCodeSize && l.api.getCode && l.api.destroyProgram) {
      l.api.library = name;
      l.ok = true;
      return l;
    }
    dlclose(lib);
  }
  l.why = std::string("no HIP toolchain on this machine (libhiprtc.so not found); ") + kNoAmdGpu;
  return l;
}

const LoadedHipRtc& hipRtc() {
  static const LoadedHipRtc loaded = loadHipRtc();
  return loaded;
}

class HipEngine final : public Engine {
 public:
  explicit HipEngine(std::string arch) : arch_(std::move(arch)) {}
  std::string name() const override { return "hip"; }

  EngineCaps caps() const override {
    EngineCaps c;
    c.defaultPrecision = Precision::F32;
    c.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch, KernelKind::Tangent};
    c.maxMarkets = 8;
    c.usable = false;
    const LoadedHipRtc& rtc = hipRtc();
    c.compileOnly = rtc.ok;
    c.reason = rtc.ok ? "compile-only: hipRTC (" + rtc.api.library + ") builds for " + arch_ + "; " + kNoAmdGpu
                      : rtc.why;
    return c;
  }

  std::unique_ptr<Kernel> compile(const Tape& tape, const KernelOptions& options) override {
    const auto t0 = std::chrono::steady_clock::now();
    const EmittedKernel k = emitKernel(tape, options, hipDialect(), emitOptionsFor(options));
    KernelStats stats;
    stats.sourcePath = dumpSource(options.dumpDir, "hip-" + std::string(toString(options.kind)), "hip", k.source);
    const LoadedHipRtc& rtc = hipRtc();
    if (!rtc.ok)
      throw EngineUnavailable("hip: " + rtc.why +
                              (stats.sourcePath.empty() ? "" : " (source written to " + stats.sourcePath + ")"));
    const HipRtc& h = rtc.api;
    hiprtcProgram prog = nullptr;
    if (h.createProgram(&prog, k.source.c_str(), "tapelab_kernel.hip", 0, nullptr, nullptr) != 0)
      throw std::runtime_error("hipRTC: hiprtcCreateProgram failed");
    const std::string arch = "--offload-arch=" + arch_;
    // Exactness: no contraction, no fast-math (clang's HIP default contracts).
    const char* opts[] = {arch.c_str(), "-ffp-contract=off", "-fno-fast-math", "-O3"};
    const hiprtcResult rc = h.compileProgram(prog, 4, opts);
    size_t n = 0;
    std::string log;
    if (h.getProgramLogSize(prog, &n) == 0 && n > 1) {
      log.resize(n);
      h.getProgramLog(prog, log.data());
    }
    size_t codeSize = 0;
    if (rc == 0) h.getCodeSize(prog, &codeSize);
    h.destroyProgram(&prog);
    if (rc != 0 || codeSize == 0) {
      const std::string where = sourceForError(stats.sourcePath, "hip", "hip", k.source);
      throw std::runtime_error("hipRTC failed for " + arch_ + " [source: " + where + "]: " + logHead(log, 8));
    }
    stats.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stats.notes = "hipRTC code object " + std::to_string(codeSize) + " bytes for " + arch_ + "; ";
    return std::make_unique<CompileOnlyKernel>(std::move(stats), std::string("hip: compile-only: ") + kNoAmdGpu);
  }

 private:
  std::string arch_;
};

}  // namespace

std::unique_ptr<Engine> makeHipEngine(const EngineSettings& settings) {
  return std::make_unique<HipEngine>(settings.hip.arch);
}

}  // namespace tapelab
