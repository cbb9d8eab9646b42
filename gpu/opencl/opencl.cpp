#include "gpu/opencl/opencl.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <regex>
#include <stdexcept>

#include "engine/compile_watch.h"
#include "gpu/codegen/emit.h"
#include "gpu/host/compile.h"
#include "gpu/host/dispatch.h"
#include "gpu/host/watchdog.h"
#include "gpu/opencl/cl_runtime.h"

namespace tapelab {
namespace {

using ocl::Buffer;
using ocl::Context;
using ocl::DeviceInfo;

constexpr const char* kDeviceVariable = "TAPELAB_OPENCL_DEVICE";
// Longest dispatch, in groups: bounds one launch's run time and partials buffer.
constexpr uint32_t kMaxGroupsPerDispatch = 1u << 16;

// DispatchOptions::scratchBudget (bytes) overrides the device-derived scratch budget,
// so a test can force a launch to be chunked on a small device.
uint64_t scratchBudget(const DeviceInfo& dev, uint64_t requested) {
  if (requested) return requested;
  // One buffer may not exceed the device's largest allocation; leave half the
  // memory to everything else on the device.
  return std::min<uint64_t>(dev.maxAllocBytes, dev.globalMemBytes / 2);
}

// Statistics NVIDIA's compiler prints with -cl-nv-verbose (ptxas format).
void parseVerboseLog(const std::string& log, KernelStats& s) {
  std::smatch m;
  if (std::regex_search(log, m, std::regex(R"(Used (\d+) registers)"))) s.registers = std::stoi(m[1]);
  if (std::regex_search(log, m, std::regex(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    s.notes += "ptxas: " + m.str(0) + "; ";
  }
}

class OpenCLKernel final : public Kernel, DispatchRunner {
 public:
  // `started`: when compile() began; compileSeconds runs to the end of the warm-up launch.
  OpenCLKernel(std::shared_ptr<Context> ctx, EmittedKernel k, DispatchOptions dispatch, ocl::Program program,
               KernelStats stats, std::chrono::steady_clock::time_point started, double deviceTimeout,
               const CompileWatch& compile)
      : ctx_(std::move(ctx)), k_(std::move(k)), dispatch_(dispatch), watch_("opencl", deviceTimeout, ctx_->lost, !ctx_->device().gpu),
        program_(program.program), stats_(std::move(stats)) {
    cl_int rc = CL_SUCCESS;
    kernel_ = clCreateKernel(program_.get(), k_.entry.c_str(), &rc);
    ocl::check(rc, "clCreateKernel " + k_.entry);
    size_t priv = 0;
    if (clGetKernelWorkGroupInfo(kernel_, ctx_->device().device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv,
                                 nullptr) == CL_SUCCESS)
      stats_.spillBytes = static_cast<int64_t>(priv);
    size_t maxWg = 0;
    if (clGetKernelWorkGroupInfo(kernel_, ctx_->device().device, CL_KERNEL_WORK_GROUP_SIZE, sizeof maxWg, &maxWg,
                                 nullptr) == CL_SUCCESS &&
        maxWg < static_cast<size_t>(k_.workgroupSize)) {
      clReleaseKernel(kernel_);
      throw std::runtime_error("OpenCL: kernel needs workgroups of " + std::to_string(k_.workgroupSize) +
                               " but " + ctx_->device().deviceName + " allows " + std::to_string(maxWg) +
                               " for it (too many registers?): --config workgroup=N with N a power of two up to " +
                               std::to_string(maxWg) + " (other sums' rounding)");
    }
    stats_.notes += "private memory " + std::to_string(priv) + " bytes/work-item; ";
    // One empty group (count 0: no lane prices a path) so that drivers which
    // finish compiling at the first launch (PoCL builds its work-group
    // function then) do it here, inside compile, not inside the first timed run;
    // within what is left of --compile-timeout where that is the nearer limit.
    Dispatch warm;
    warm.groups = 1;
    warm.params.invocations = static_cast<uint32_t>(k_.workgroupSize);
    const std::vector<unsigned char> in = packInputs(k_, std::vector<std::vector<double>>(
                                                             k_.markets, std::vector<double>(k_.numInputs, 1.0)));
    const DeviceWatch runs = watch_;
    const double left = compile.remaining();
    const bool compileBinds = compile.limit() > 0 && (deviceTimeout <= 0 || left < deviceTimeout);
    if (compileBinds) watch_ = DeviceWatch("opencl", std::max(left, 1e-3), ctx_->lost, !ctx_->device().gpu);
    try {
      upload(in, 1, 1);
      launchOne(warm);
    } catch (const DeviceTimeout&) {
      abandonIfLost();  // no destructor runs for a constructor that throws
      if (compileBinds) compile.timedOut();
      throw;
    }
    watch_ = runs;
    stats_.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  ~OpenCLKernel() override {
    abandonIfLost();
    if (kernel_) clReleaseKernel(kernel_);
  }

  RunResult run(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) override {
    const uint32_t limit = scratchGroupCap(k_, kMaxGroupsPerDispatch, scratchBudget(ctx_->device(), dispatch_.scratchBudget),
                                           "OpenCL", " on " + ctx_->device().deviceName);
    RunResult r = runDispatches(k_, dispatch_, limit, inputs, paths, seed, *this);
    stats_.scratchBytes = k_.kind == KernelKind::Scratch ? static_cast<int64_t>(scratchBytes_) : 0;
    return r;
  }
  uint64_t blockPaths() const override { return k_.pathsPerGroup(); }
  double runBlocks(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
                   BlockSink& sink) override {
    const uint32_t limit = scratchGroupCap(k_, kMaxGroupsPerDispatch, scratchBudget(ctx_->device(), dispatch_.scratchBudget),
                                           "OpenCL", " on " + ctx_->device().deviceName);
    const double seconds = runDispatchBlocks(k_, dispatch_, limit, inputs, first, paths, seed, *this, sink);
    stats_.scratchBytes = k_.kind == KernelKind::Scratch ? static_cast<int64_t>(scratchBytes_) : 0;
    return seconds;
  }

  KernelStats stats() const override { return stats_; }

 private:
  // Buffers for dispatches of up to `groups` groups, and the inputs written.
  void upload(const std::vector<unsigned char>& in, uint32_t groups, size_t) override {
    // First: after a timeout a stuck read-back may still write host_ and a stuck write read
    // inputsHost_, so neither may be resized or reassigned.
    watch_.checkAlive();
    const size_t partialBytes = k_.partialBytes(groups), scratchBytes = k_.scratchBytes(groups);
    if (inputs_.bytes() < in.size() || !inputs_.get()) inputs_ = Buffer(*ctx_, in.size(), CL_MEM_READ_ONLY);
    if (partials_.bytes() < partialBytes || !partials_.get()) partials_ = Buffer(*ctx_, partialBytes, CL_MEM_WRITE_ONLY);
    if (scratch_.bytes() < scratchBytes || !scratch_.get()) scratch_ = Buffer(*ctx_, scratchBytes);
    host_.resize(partialBytes);
    scratchBytes_ = scratchBytes;
    if (in.empty()) return;  // a tape without inputs
    inputsHost_ = in;        // the kernel's own copy: a write that times out may still read it
    await(inputs_.enqueueWrite(ctx_->queue(), inputsHost_.data(), inputsHost_.size()),
          "the upload of " + std::to_string(in.size()) + " bytes of inputs to " + ctx_->device().deviceName);
  }

  void launch(std::span<const Dispatch> batch, PartialSums& sums) override {
    for (const Dispatch& d : batch) {
      launchOne(d);
      sums.add(host_.data(), d.groups);
    }
  }

  // One dispatch; its group partials land in host_ (the read follows the kernel on the in-order queue).
  void launchOne(const Dispatch& d) {
    const cl_command_queue q = ctx_->queue();
    const cl_mem bufs[3] = {inputs_.get(), partials_.get(), scratch_.get()};
    for (cl_uint i = 0; i < 3; ++i) ocl::check(clSetKernelArg(kernel_, i, sizeof(cl_mem), &bufs[i]), "clSetKernelArg");
    const std::array<uint32_t, 7> params = d.params.words();
    for (cl_uint i = 0; i < 7; ++i) ocl::check(clSetKernelArg(kernel_, 3 + i, sizeof(cl_uint), &params[i]), "clSetKernelArg");
    const size_t global = size_t{d.groups} * k_.workgroupSize, local = k_.workgroupSize;
    ocl::check(clEnqueueNDRangeKernel(q, kernel_, 1, nullptr, &global, &local, 0, nullptr, nullptr),
               "clEnqueueNDRangeKernel");
    await(partials_.enqueueRead(q, host_.data(), k_.partialBytes(d.groups)),
          "the read-back of a dispatch of " + std::to_string(d.groups) + " groups on " + ctx_->device().deviceName);
  }

  // Waits for `event`, the queue's last command, within the device timeout (polling its status:
  // OpenCL has no timed wait), then releases it. A command that failed throws its error.
  void await(cl_event event, const std::string& what) {
    ocl::check(clFlush(ctx_->queue()), "clFlush");  // a platform may not start the queue for a status query
    watch_.wait(what, [&] { return ocl::eventDone(event, what); }, [&] { ocl::waitForEvent(event, what); });
    clReleaseEvent(event);
  }

  // After a timeout the queue's commands may never finish, or finish late: the memory they read and
  // write (device buffers, inputsHost_, host_) and the objects they use leak instead.
  void abandonIfLost() {
    if (!watch_.lost()) return;
    abandon(inputs_), abandon(partials_), abandon(scratch_), abandon(inputsHost_), abandon(host_);
    static_cast<void>(program_.release());
    kernel_ = nullptr;
  }

  std::shared_ptr<Context> ctx_;
  EmittedKernel k_;
  DispatchOptions dispatch_;
  DeviceWatch watch_;
  ocl::ProgramHandle program_;
  cl_kernel kernel_ = nullptr;
  KernelStats stats_;
  Buffer inputs_, partials_, scratch_;
  std::vector<unsigned char> inputsHost_;  // the inputs being uploaded
  std::vector<unsigned char> host_;        // one dispatch's partials, read back
  size_t scratchBytes_ = 0;                // what the last run's dispatches needed
};

class OpenCLEngine final : public Engine {
 public:
  explicit OpenCLEngine(EngineSettings settings) : settings_(std::move(settings)) {}
  std::string name() const override { return "opencl"; }

  EngineCaps caps() const override {
    EngineCaps c;
    c.perValuePlans = true;  // as register kernels (gpu/codegen: kept values at kernel scope)
    c.defaultPrecision = Precision::F32;
    c.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch, KernelKind::Tangent};
    c.marketOrder = true;
    c.maxMarkets = 8;
    c.maxPlanDepth = 232;  // clang's 256 brackets, less the kernel's own (EngineCaps::maxPlanDepth)
    c.maxPlanDepthWhy = "its compiler (clang) nests at most 256 brackets and each level of cuts nests the "
                        "kernel one deeper; the kernel's own blocks and expressions take up to ~20 (PoCL built 250 levels, not 254)";
    try {
      const DeviceInfo dev = ocl::chooseDevice(settings_.opencl.device, kDeviceVariable, settings_.deviceSlot);
      c.usable = true;
      c.reason = dev.describe();
      c.cpuDevice = !dev.gpu;
      c.gpu = dev.gpu;
      c.fp64 = dev.fp64;
    } catch (const std::exception& e) {
      c.usable = false;
      c.fp64 = false;
      c.reason = e.what();
    }
    return c;
  }

  std::unique_ptr<Kernel> compile(const Tape& tape, const KernelOptions& options) override {
    std::shared_ptr<Context> ctx = context();
    if (options.precision == Precision::F64 && !ctx->device().fp64)
      throw std::invalid_argument("opencl: " + ctx->device().deviceName + " has no fp64 (cl_khr_fp64)");
    const auto t0 = std::chrono::steady_clock::now();
    refusePerValuePlan(options, "opencl");
    EmittedKernel k = emitKernel(tape, options, openclDialect());
    KernelStats stats;
    stats.sourcePath = dumpKernel(options.dumpDir, "opencl-" + std::string(toString(options.kind)), "cl", k, k.source);
    // Exactness: no -cl-mad-enable, no -cl-fast-relaxed-math, no -cl-unsafe-math-optimizations;
    // the source's FP_CONTRACT OFF pragma forbids contraction. Single-precision division and
    // sqrt correctly rounded where the device can: OpenCL's default lets them be 2.5-3 ulp,
    // and NVIDIA's compiler then implements one division differently in two kernels (plain
    // and checkpointed differed in the H200 property run; CUDA, IEEE by default, did not).
    std::string buildOptions = "-cl-std=CL1.2";
    if (ctx->device().fp32CorrectlyRounded) buildOptions += " -cl-fp32-correctly-rounded-divide-sqrt";
    const bool nvidia = ctx->device().hasExtension("cl_nv_compiler_options");
    if (nvidia) buildOptions += " -cl-nv-verbose";  // ptxas statistics in the build log
    stats.sourceBytes = static_cast<int64_t>(k.source.size());
    // The driver's compiler in-process: on a thread of its own under --compile-timeout (engine/compile_watch.h),
    // holding the context; past the limit the context is abandoned (marked lost: the next compile opens another).
    CompileWatch compile("opencl", kernelSubject(tape, options), k.source.size(), settings_.compileTimeout);
    ocl::Program program;
    try {
      program = compile.run([ctx, source = k.source, buildOptions, path = stats.sourcePath, dir = settings_.cacheDir] {
        return ocl::buildProgram(*ctx, source, buildOptions, path, dir);
      });
    } catch (const CompileTimeout&) {
      ctx->lost->store(true);
      throw;
    }
    stats.cacheHit = program.cacheHit;
    stats.configUnused = k.configUnused;
    if (nvidia) parseVerboseLog(program.buildLog, stats);
    if (k.kind == KernelKind::Scratch) stats.scratchBytesPerPath = static_cast<int64_t>(k.scratchSlots * k.scalarBytes());
    return std::make_unique<OpenCLKernel>(ctx, std::move(k), options.dispatch, std::move(program), std::move(stats), t0,
                                          settings_.deviceTimeout, compile);
  }

 private:

  // One context per engine, made on first compile; kernels share it. compile()
  // may be called from several threads (the sweep builds kernels in parallel).
  std::shared_ptr<Context> context() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ctx_ || *ctx_->lost) {  // a lost context (a device or compile timeout) is left to leak, never reused
      DeviceInfo dev;
      try {
        dev = ocl::chooseDevice(settings_.opencl.device, kDeviceVariable, settings_.deviceSlot);
      } catch (const std::invalid_argument&) {
        throw;
      } catch (const std::exception& e) {
        throw EngineUnavailable(std::string("opencl: ") + e.what());
      }
      ctx_ = std::make_shared<Context>(dev);
    }
    return ctx_;
  }

  EngineSettings settings_;
  std::mutex mu_;
  std::shared_ptr<Context> ctx_;
};

}  // namespace

std::unique_ptr<Engine> makeOpenCLEngine(const EngineSettings& settings) {
  return std::make_unique<OpenCLEngine>(settings);
}

}  // namespace tapelab
