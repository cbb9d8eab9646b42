#include "gpu/opencl/opencl.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <stdexcept>

#include "gpu/codegen/emit.h"
#include "gpu/codegen/host.h"
#include "gpu/opencl/cl_runtime.h"

namespace tapelab {
namespace {

using ocl::Buffer;
using ocl::Context;
using ocl::DeviceInfo;

constexpr const char* kDeviceVariable = "TAPELAB_OPENCL_DEVICE";
// Longest dispatch, in groups: bounds one launch's run time and partials buffer.
constexpr uint32_t kMaxGroupsPerDispatch = 1u << 16;

std::string deviceSelector() {
  const char* v = std::getenv(kDeviceVariable);
  return v ? v : "";
}

// TAPELAB_SCRATCH_BUDGET (bytes) overrides the device-derived scratch budget,
// so a test can force a launch to be chunked on a small device.
uint64_t scratchBudget(const DeviceInfo& dev) {
  if (const uint64_t b = scratchBudgetFromEnvironment()) return b;
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

class OpenCLKernel final : public Kernel {
 public:
  // `started`: when compile() began; compileSeconds runs to the end of the warm-up launch.
  OpenCLKernel(std::shared_ptr<Context> ctx, EmittedKernel k, ocl::Program program, KernelStats stats,
               std::chrono::steady_clock::time_point started)
      : ctx_(std::move(ctx)), k_(std::move(k)), program_(program.program), stats_(std::move(stats)) {
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
                               " for it (too many registers?)");
    }
    stats_.notes += "private memory " + std::to_string(priv) + " bytes/work-item; ";
    // One empty group (count 0: no lane prices a path) so that drivers which
    // finish compiling at the first launch (PoCL builds its work-group
    // function then) do it here, inside compile, not inside the first timed run.
    Dispatch warm;
    warm.groups = 1;
    warm.params.invocations = static_cast<uint32_t>(k_.workgroupSize);
    const std::vector<unsigned char> in = packInputs(k_, std::vector<std::vector<double>>(
                                                             k_.markets, std::vector<double>(k_.numInputs, 1.0)));
    ensureBuffers(in.size(), 1);
    inputs_.write(ctx_->queue(), in.data(), in.size());
    std::vector<unsigned char> host(size_t(k_.partialsPerGroup()) * k_.scalarBytes());
    launch(warm, host);
    stats_.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  ~OpenCLKernel() override {
    if (kernel_) clReleaseKernel(kernel_);
  }

  RunResult run(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) override {
    const auto t0 = std::chrono::steady_clock::now();
    if (paths == 0) throw std::invalid_argument("paths must be at least 1");
    const std::vector<unsigned char> in = packInputs(k_, inputs);
    const std::vector<Dispatch> dispatches =
        planDispatches(k_, pathOffsetFromEnvironment(), paths, seed, maxGroups());
    uint32_t groups = 0;
    for (const Dispatch& d : dispatches) groups = std::max(groups, d.groups);
    const size_t scratchBytes = ensureBuffers(in.size(), groups);
    stats_.scratchBytes = k_.kind == KernelKind::Scratch ? static_cast<int64_t>(scratchBytes) : 0;
    inputs_.write(ctx_->queue(), in.data(), in.size());

    PartialSums sums(k_);
    std::vector<unsigned char> host(size_t{groups} * k_.partialsPerGroup() * k_.scalarBytes());
    for (const Dispatch& d : dispatches) {
      launch(d, host);
      sums.add(host.data(), d.groups);
    }
    RunResult r = sums.finish(paths, seed);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

  KernelStats stats() const override { return stats_; }

 private:
  // Buffers for dispatches of up to `groups` groups; returns the scratch bytes that needs.
  size_t ensureBuffers(size_t inputBytes, uint32_t groups) {
    const size_t partialBytes = size_t{groups} * k_.partialsPerGroup() * k_.scalarBytes();
    const size_t scratchBytes = size_t{groups} * k_.workgroupSize * k_.scratchSlots * k_.scalarBytes();
    if (inputs_.bytes() < inputBytes || !inputs_.get()) inputs_ = Buffer(*ctx_, inputBytes, CL_MEM_READ_ONLY);
    if (partials_.bytes() < partialBytes || !partials_.get()) partials_ = Buffer(*ctx_, partialBytes, CL_MEM_WRITE_ONLY);
    if (scratch_.bytes() < scratchBytes || !scratch_.get()) scratch_ = Buffer(*ctx_, scratchBytes);
    return scratchBytes;
  }

  // One dispatch; its group partials land in `host` (blocking read: waits for the kernel).
  void launch(const Dispatch& d, std::vector<unsigned char>& host) {
    const cl_command_queue q = ctx_->queue();
    const cl_mem bufs[3] = {inputs_.get(), partials_.get(), scratch_.get()};
    for (cl_uint i = 0; i < 3; ++i) ocl::check(clSetKernelArg(kernel_, i, sizeof(cl_mem), &bufs[i]), "clSetKernelArg");
    const cl_uint params[7] = {d.params.seedLo, d.params.seedHi, d.params.pathLo,     d.params.pathHi,
                               d.params.count,  d.params.zero,   d.params.invocations};
    for (cl_uint i = 0; i < 7; ++i) ocl::check(clSetKernelArg(kernel_, 3 + i, sizeof(cl_uint), &params[i]), "clSetKernelArg");
    const size_t global = size_t{d.groups} * k_.workgroupSize, local = k_.workgroupSize;
    ocl::check(clEnqueueNDRangeKernel(q, kernel_, 1, nullptr, &global, &local, 0, nullptr, nullptr),
               "clEnqueueNDRangeKernel");
    partials_.read(q, host.data(), size_t{d.groups} * k_.partialsPerGroup() * k_.scalarBytes());
  }

  // Groups per dispatch: the scratch buffer of one dispatch must fit the budget.
  uint32_t maxGroups() const {
    const uint64_t perGroup = uint64_t(k_.workgroupSize) * k_.scratchSlots * k_.scalarBytes();
    if (perGroup == 0) return kMaxGroupsPerDispatch;
    const uint64_t budget = scratchBudget(ctx_->device());
    if (perGroup > budget)
      throw std::runtime_error("OpenCL: one workgroup's scratch (" + std::to_string(perGroup) +
                               " bytes) exceeds the scratch budget of " + std::to_string(budget) + " bytes on " +
                               ctx_->device().deviceName);
    // The kernel indexes scratch with 32-bit unsigned arithmetic (slot * invocations + tid).
    const uint64_t indexCap = (uint64_t{1} << 32) / (uint64_t(k_.workgroupSize) * k_.scratchSlots);
    return static_cast<uint32_t>(std::max<uint64_t>(1, std::min({uint64_t{kMaxGroupsPerDispatch}, budget / perGroup, indexCap})));
  }

  std::shared_ptr<Context> ctx_;
  EmittedKernel k_;
  ocl::ProgramHandle program_;
  cl_kernel kernel_ = nullptr;
  KernelStats stats_;
  Buffer inputs_, partials_, scratch_;
};

class OpenCLEngine final : public Engine {
 public:
  std::string name() const override { return "opencl"; }

  EngineCaps caps() const override {
    EngineCaps c;
    c.defaultPrecision = Precision::F32;
    c.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch};
    c.maxMarkets = 8;
    try {
      const DeviceInfo dev = ocl::chooseDevice(deviceSelector(), kDeviceVariable);
      c.usable = true;
      c.reason = dev.describe();
      c.cpuDevice = !dev.gpu;
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
    EmittedKernel k = emitKernel(tape, options, openclDialect(), emitOptionsFromEnvironment());
    KernelStats stats;
    stats.sourcePath = dumpSource(dumpDirFor(options), "opencl-" + std::string(toString(options.kind)), "cl", k.source);
    // Exactness: no -cl-mad-enable, no -cl-fast-relaxed-math, no -cl-unsafe-math-optimizations;
    // the source's FP_CONTRACT OFF pragma forbids contraction. Single-precision division and
    // sqrt correctly rounded where the device can: OpenCL's default lets them be 2.5-3 ulp,
    // and NVIDIA's compiler then implements one division differently in two kernels (plain
    // and checkpointed differed in the H200 property run; CUDA, IEEE by default, did not).
    std::string buildOptions = "-cl-std=CL1.2";
    if (ctx->device().fp32CorrectlyRounded) buildOptions += " -cl-fp32-correctly-rounded-divide-sqrt";
    const bool nvidia = ctx->device().hasExtension("cl_nv_compiler_options");
    if (nvidia) buildOptions += " -cl-nv-verbose";  // ptxas statistics in the build log
    ocl::Program program = ocl::buildProgram(*ctx, k.source, buildOptions, stats.sourcePath);
    stats.cacheHit = program.cacheHit;
    if (nvidia) parseVerboseLog(program.buildLog, stats);
    return std::make_unique<OpenCLKernel>(ctx, std::move(k), std::move(program), std::move(stats), t0);
  }

 private:

  // One context per engine, made on first compile; kernels share it. compile()
  // may be called from several threads (the sweep builds kernels in parallel).
  std::shared_ptr<Context> context() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ctx_) {
      DeviceInfo dev;
      try {
        dev = ocl::chooseDevice(deviceSelector(), kDeviceVariable);
      } catch (const std::invalid_argument&) {
        throw;
      } catch (const std::exception& e) {
        throw EngineUnavailable(std::string("opencl: ") + e.what());
      }
      ctx_ = std::make_shared<Context>(dev);
    }
    return ctx_;
  }

  std::mutex mu_;
  std::shared_ptr<Context> ctx_;
};

}  // namespace

std::unique_ptr<Engine> makeOpenCLEngine() { return std::make_unique<OpenCLEngine>(); }

}  // namespace tapelab
