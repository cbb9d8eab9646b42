#include "gpu/hip/hip.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>

#include "engine/compile_watch.h"
#include "gpu/codegen/emit.h"
#include "gpu/hip/codeobject.h"
#include "gpu/hip/compiler.h"
#include "gpu/hip/runtime.h"
#include "gpu/host/compile.h"
#include "gpu/host/dispatch.h"
#include "gpu/host/watchdog.h"

namespace tapelab {
namespace {

// Longest dispatch, in groups: bounds one launch's run time and partials buffer.
constexpr uint32_t kMaxGroupsPerDispatch = 1u << 16;

// One target's code object and what its metadata says.
struct TargetBuild {
  hip::CodeObject object;
  hip::KernelResources resources;
  int waves = -1;  // waves per SIMD the registers allow (codeobject.h)
  bool vgprLimitLifted = false;  // TAPELAB_HIP_GFX11_VGPRS=256: statistics only
};

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

// "gfx1103 wave32: 102 VGPRs, 24 SGPRs, 0 B scratch/lane (spills: 0 VGPRs, 0 SGPRs),
// 9 waves/SIMD by registers (compiler: 9); "
std::string describe(const TargetBuild& b) {
  const hip::KernelResources& r = b.resources;
  std::string s = b.object.target + " wave" + std::to_string(r.wavefrontSize) + ": " + std::to_string(r.vgprs) +
                  " VGPRs";
  if (r.agprs > 0) s += " (" + std::to_string(r.agprs) + " AGPRs)";
  s += ", " + std::to_string(r.sgprs) + " SGPRs, " + std::to_string(r.scratchBytes) + " B scratch/lane (spills: " +
       std::to_string(r.vgprSpills) + " VGPRs, " + std::to_string(r.sgprSpills) + " SGPRs), " +
       std::to_string(b.waves) + " waves/SIMD by registers (compiler: " + std::to_string(b.object.compilerOccupancy) +
       ")";
  if (b.object.syntheticIsaLibrary) s += ", device-library ISA file made here";
  if (b.vgprLimitLifted) s += ", LLVM's 128-VGPR gfx11 limit lifted (statistics only)";
  return s + "; ";
}

// Builds `source` for every target, in parallel (hipcc runs outside the
// process), and reads each code object's metadata.
std::vector<TargetBuild> buildAll(const EmittedKernel& k, const std::vector<std::string>& targets,
                                  const EngineSettings& settings, const std::string& sourcePath,
                                  const CompileWatch& watch) {
  const bool lift = settings.hip.gfx11Vgprs == 256;
  std::vector<std::future<hip::CodeObject>> jobs;
  for (const std::string& t : targets)
    jobs.push_back(std::async(std::launch::async, [&k, t, &settings, lift, deadline = watch.deadline()] {
      return hip::compileHip(k.source, t, settings.cacheDir, lift ? hip::liftGfx11VgprLimit(t) : std::vector<std::string>{},
                             deadline);
    }));
  std::vector<hip::CodeObject> objects;
  for (auto& j : jobs) objects.push_back(j.get());
  for (const hip::CodeObject& o : objects)
    if (o.timedOut) watch.timedOut();  // hipcc ended at --compile-timeout
  std::vector<TargetBuild> builds;
  for (hip::CodeObject& o : objects) {
    if (o.bytes.empty())
      throw std::runtime_error("hipcc failed for " + o.target + " [source: " +
                               sourceForError(sourcePath, "hip", "hip", k.source) + "]: " + logHead(o.log, 8));
    TargetBuild b;
    const hip::CodeObjectInfo info = hip::readCodeObject(o.bytes);
    const auto it = std::find_if(info.kernels.begin(), info.kernels.end(),
                                 [&](const hip::KernelResources& r) { return r.name == k.entry; });
    if (it == info.kernels.end())
      throw std::runtime_error("hip: the " + o.target + " code object has no kernel " + k.entry);
    if (it->maxWorkgroupSize > 0 && it->maxWorkgroupSize < k.workgroupSize)
      throw std::runtime_error("hip: " + k.entry + " allows " + std::to_string(it->maxWorkgroupSize) +
                               " work-items per group, needs " + std::to_string(k.workgroupSize));
    b.resources = *it;
    b.waves = hip::wavesPerSimd(hip::registerFile(o.target, it->wavefrontSize), it->vgprs, it->sgprs);
    b.vgprLimitLifted = lift && hip::isGfx11Target(o.target);
    b.object = std::move(o);
    builds.push_back(std::move(b));
  }
  return builds;
}

// The device (index 0) for as long as an engine or a kernel uses it.
class Device {
 public:
  explicit Device(const hip::Runtime& rt) : rt_(rt) {
    bind();
    char name[256] = {};
    hip::check(rt_, rt_.hipDeviceGetName(name, sizeof name, 0), "hipDeviceGetName");
    name_ = name;
    rt_.hipRuntimeGetVersion(&version_);
  }
  void bind() const { hip::check(rt_, rt_.hipSetDevice(0), "hipSetDevice"); }
  // Set when a wait on the device passed TAPELAB_DEVICE_TIMEOUT (gpu/host/watchdog.h).
  DeviceLostFlag lost = makeDeviceLostFlag();
  const hip::Runtime& runtime() const { return rt_; }
  const std::string& name() const { return name_; }
  std::string describe() const {
    return name_ + " (HIP runtime " + std::to_string(version_) + ", " + rt_.library + "; hipcc " +
           hip::toolchain().version + ")";
  }

 private:
  const hip::Runtime& rt_;
  std::string name_;
  int version_ = 0;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void ensure(const Device& dev, size_t bytes) {
    if (ptr_ && bytes_ >= bytes) return;
    reset();
    dev_ = &dev;
    hip::check(dev.runtime(), dev.runtime().hipMalloc(&ptr_, std::max<size_t>(bytes, 1)),
               "hipMalloc of " + std::to_string(bytes) + " bytes");
    bytes_ = bytes;
  }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void reset() {
    if (ptr_ && !*dev_->lost) dev_->runtime().hipFree(ptr_);  // hipFree may wait for a stuck kernel: leak
    ptr_ = nullptr;
    bytes_ = 0;
  }
  const Device* dev_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A kernel on an AMD GPU: the first code object the device accepts (the
// runtime refuses another target's), run through runDispatches (runDispatchBlocks for part of a run).
class HipKernel final : public Kernel, DispatchRunner {
 public:
  HipKernel(std::shared_ptr<Device> dev, EmittedKernel k, DispatchOptions dispatch, const std::vector<TargetBuild>& builds,
            KernelStats stats, double deviceTimeout)
      : dev_(std::move(dev)), k_(std::move(k)), dispatch_(dispatch), stats_(std::move(stats)),
        watch_("hip", deviceTimeout, dev_->lost) {
    const hip::Runtime& rt = dev_->runtime();
    dev_->bind();
    std::string refused;
    for (const TargetBuild& b : builds) {
      const hip::hipError_t rc = rt.hipModuleLoadData(&module_, b.object.bytes.data());
      if (rc == 0) {
        stats_.registers = b.resources.vgprs;
        stats_.spillBytes = b.resources.scratchBytes;
        stats_.notes += "loaded the " + b.object.target + " code object; ";
        break;
      }
      module_ = nullptr;
      refused += " " + b.object.target + " (" + std::string(rt.hipGetErrorName(rc)) + ")";
    }
    if (!module_)
      throw std::runtime_error("HIP: the device takes none of the code objects built:" + refused +
                               "; set TAPELAB_HIP_ARCH to its target");
    hip::check(rt, rt.hipModuleGetFunction(&fn_, module_, k_.entry.c_str()), "hipModuleGetFunction " + k_.entry);
  }
  ~HipKernel() override {
    if (module_ && !watch_.lost()) {  // unloading may wait for a stuck kernel: leak it
      dev_->bind();
      dev_->runtime().hipModuleUnload(module_);
    }
  }

  RunResult run(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) override {
    dev_->bind();
    return runDispatches(k_, dispatch_, groupLimit(), inputs, paths, seed, *this);
  }
  // Part of a run for a split over MPI ranks (api/ranks.h), as the CUDA engine: gpu/host's loop.
  uint64_t blockPaths() const override { return k_.pathsPerGroup(); }
  double runBlocks(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
                   BlockSink& sink) override {
    dev_->bind();
    return runDispatchBlocks(k_, dispatch_, groupLimit(), inputs, first, paths, seed, *this, sink);
  }

  KernelStats stats() const override { return stats_; }

 private:
  void upload(const std::vector<unsigned char>& in, uint32_t groups, size_t) override {
    const hip::Runtime& rt = dev_->runtime();
    watch_.checkAlive();  // the copy below would queue behind a stuck kernel
    inputs_.ensure(*dev_, in.size());
    hip::check(rt, rt.hipMemcpyHtoD(inputs_.get(), const_cast<unsigned char*>(in.data()), in.size()), "hipMemcpyHtoD");
    const size_t partialBytes = k_.partialBytes(groups), scratchBytes = k_.scratchBytes(groups);
    partials_.ensure(*dev_, partialBytes);
    scratch_.ensure(*dev_, scratchBytes);
    host_.resize(partialBytes);
    stats_.scratchBytes = k_.kind == KernelKind::Scratch ? static_cast<int64_t>(scratchBytes) : 0;
    if (k_.kind == KernelKind::Scratch) stats_.scratchBytesPerPath = static_cast<int64_t>(k_.scratchSlots * k_.scalarBytes());
  }

  void launch(std::span<const Dispatch> batch, PartialSums& sums) override {
    const hip::Runtime& rt = dev_->runtime();
    void* bufs[3] = {inputs_.get(), partials_.get(), scratch_.get()};
    // Polled on the null stream within the device timeout (as CUDA; HIP has no timed wait either);
    // with no limit, hipDeviceSynchronize as always.
    auto finished = [&] {
      const hip::hipError_t rc = rt.hipStreamQuery(nullptr);
      if (rc == hip::hipErrorNotReady) return false;
      hip::check(rt, rc, "hipStreamQuery (kernel execution)");
      return true;
    };
    auto synchronize = [&] { hip::check(rt, rt.hipDeviceSynchronize(), "hipDeviceSynchronize (kernel execution)"); };
    for (const Dispatch& x : batch) {
      std::array<uint32_t, 7> p = x.params.words();
      void* args[10] = {&bufs[0], &bufs[1], &bufs[2], &p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &p[6]};
      hip::check(rt,
                 rt.hipModuleLaunchKernel(fn_, x.groups, 1, 1, static_cast<unsigned>(k_.workgroupSize), 1, 1, 0,
                                          nullptr, args, nullptr),
                 "hipModuleLaunchKernel");
      watch_.wait("a dispatch of " + std::to_string(x.groups) + " groups on " + dev_->name(), finished, synchronize);
      const size_t bytes = k_.partialBytes(x.groups);
      hip::check(rt, rt.hipMemcpyDtoH(host_.data(), partials_.get(), bytes), "hipMemcpyDtoH");
      sums.add(host_.data(), x.groups);
    }
  }

  // Groups per dispatch: one dispatch's scratch must fit the budget, by default
  // free device memory (with headroom).
  uint32_t groupLimit() const {
    size_t freeBytes = 0, total = 0;
    if (dispatch_.scratchBudget == 0 && k_.scratchSlots > 0)
      hip::check(dev_->runtime(), dev_->runtime().hipMemGetInfo(&freeBytes, &total), "hipMemGetInfo");
    const uint64_t budget = scratchBudgetFromFree(dispatch_.scratchBudget, freeBytes, scratch_.bytes());
    return scratchGroupCap(k_, kMaxGroupsPerDispatch, budget, "HIP");
  }

  std::shared_ptr<Device> dev_;
  EmittedKernel k_;
  DispatchOptions dispatch_;
  KernelStats stats_;
  DeviceWatch watch_;
  hip::hipModule_t module_ = nullptr;
  hip::hipFunction_t fn_ = nullptr;
  DeviceBuffer inputs_, partials_, scratch_;
  std::vector<unsigned char> host_;  // one dispatch's partials, read back
};

class HipEngine final : public Engine {
 public:
  explicit HipEngine(EngineSettings settings) : settings_(std::move(settings)) {}
  std::string name() const override { return "hip"; }

  EngineCaps caps() const override {
    EngineCaps c;
    c.perValuePlans = true;  // as register kernels (gpu/codegen: kept values at kernel scope)
    c.defaultPrecision = Precision::F32;
    c.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch, KernelKind::Tangent};
    c.marketOrder = true;
    c.maxMarkets = 8;
    c.maxPlanDepth = 232;  // hipcc's clang: 256 brackets, as OpenCL's (hipcc failed at 254 levels)
    c.maxPlanDepthWhy = "its compiler (clang) nests at most 256 brackets and each level of cuts nests the "
                        "kernel one deeper; the kernel's own blocks and expressions take up to ~20 (hipcc stops at 254 levels as PoCL does)";
    c.usable = false;
    std::vector<std::string> targets;
    try {
      targets = hip::parseTargets(settings_.hip.arch);
    } catch (const std::invalid_argument& e) {
      c.reason = e.what();
      return c;
    }
    std::string noGpu;
    const hip::Runtime* rt = hip::runtime(&noGpu);
    const hip::Toolchain& tc = hip::toolchain();
    if (!tc.ok) {
      c.reason = tc.why + (rt ? "" : "; " + noGpu);
      return c;
    }
    if (!rt) {
      c.compileOnly = true;
      c.reason = "compile-only: hipcc (" + tc.version + ") builds code objects for " + joined(targets) + "; " + noGpu;
      return c;
    }
    try {
      c.reason = device()->describe() + ", code objects for " + joined(targets);
      c.usable = true;
      c.gpu = true;
    } catch (const std::exception& e) {
      c.compileOnly = true;
      c.reason = std::string("compile-only: ") + e.what();
    }
    return c;
  }

  std::unique_ptr<Kernel> compile(const Tape& tape, const KernelOptions& options) override {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<std::string> targets = hip::parseTargets(settings_.hip.arch);
    refusePerValuePlan(options, "hip");
    EmittedKernel k = emitKernel(tape, options, hipDialect());
    KernelStats stats;
    stats.sourcePath = dumpKernel(options.dumpDir, "hip-" + std::string(toString(options.kind)), "hip", k, k.source);
    if (const hip::Toolchain& tc = hip::toolchain(); !tc.ok)
      throw EngineUnavailable("hip: " + tc.why +
                              (stats.sourcePath.empty() ? "" : " (source written to " + stats.sourcePath + ")"));
    stats.sourceBytes = static_cast<int64_t>(k.source.size());
    if (k.kind == KernelKind::Scratch) stats.scratchBytesPerPath = static_cast<int64_t>(k.scratchSlots * k.scalarBytes());
    const CompileWatch watch("hip", kernelSubject(tape, options), k.source.size(), settings_.compileTimeout);
    const std::vector<TargetBuild> builds = buildAll(k, targets, settings_, stats.sourcePath, watch);
    // The first target stands for the kernel in `registers` and `spillBytes`; notes list them all.
    stats.registers = builds.front().resources.vgprs;
    stats.spillBytes = builds.front().resources.scratchBytes;
    stats.configUnused = k.configUnused;
    stats.cacheHit = std::all_of(builds.begin(), builds.end(), [](const TargetBuild& b) { return b.object.cacheHit; });
    for (const TargetBuild& b : builds) stats.notes += describe(b);
    stats.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string noGpu;
    if (!hip::runtime(&noGpu)) return std::make_unique<CompileOnlyKernel>(std::move(stats), "hip: compile-only: " + noGpu);
    if (std::any_of(builds.begin(), builds.end(), [](const TargetBuild& b) { return b.vgprLimitLifted; }))
      return std::make_unique<CompileOnlyKernel>(
          std::move(stats), "hip: TAPELAB_HIP_GFX11_VGPRS=256 builds gfx11 code objects for statistics only, not to run");
    return std::make_unique<HipKernel>(device(), std::move(k), options.dispatch, builds, std::move(stats),
                                       settings_.deviceTimeout);
  }

 private:
  std::shared_ptr<Device> device() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!dev_) {
      std::string why;
      const hip::Runtime* rt = hip::runtime(&why);
      if (!rt) throw EngineUnavailable("hip: " + why);
      dev_ = std::make_shared<Device>(*rt);
    }
    return dev_;
  }

  EngineSettings settings_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<Device> dev_;
};

}  // namespace

std::unique_ptr<Engine> makeHipEngine(const EngineSettings& settings) { return std::make_unique<HipEngine>(settings); }

}  // namespace tapelab
