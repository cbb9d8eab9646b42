#include "gpu/cuda/cuda.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>
#include <stdexcept>

#include "engine/compile_watch.h"
#include "gpu/codegen/emit.h"
#include "gpu/cuda/driver.h"
#include "gpu/host/compile.h"
#include "gpu/host/dispatch.h"
#include "gpu/host/watchdog.h"
#include "gpu/cuda/nvrtc.h"

namespace tapelab {
namespace {

// The reduction appended to every CUDA kernel's module: adds one dispatch's group partials (T: the
// kernel's precision) to the run's sums in double, each column's groups in order, as
// PartialSums::addColumns does on the host: the same bits. One block per column (the additions of a
// column are one chain): its lanes fetch the next kRowsPerStep groups' values into shared memory
// (cp.async from sm_80: no lane waits for them) while lane 0 adds the current ones, a batch loaded
// into registers ahead of its additions, so the chain waits on each addition only (~18 cycles a
// double addition on the H200: 0.146 ms per 15,840 groups, as with 128 lanes adding from shared
// memory). Four warps of at most 32 registers and 2-4 KB of shared memory: one warp per scheduler,
// each the 1,024 registers a scheduler has left beside a kernel of 10 blocks of 64 lanes x 96
// registers (the H200's ladder kernels, 5 warps of 3,072 per scheduler), so that a reduction can run
// beside the next kernel (config cuda.reduce=beside) without taking a kernel block's room; there one
// warp and four ran alike (H200 2026-12-01g call 4).
// `fresh`: the run's first dispatch (the sums start from 0).
constexpr unsigned kReduceLanes = 128;
constexpr unsigned kReduceMinBlocks = 16;  // __launch_bounds__: 65,536 / (128 x 16) -> 32 registers
constexpr unsigned kRowsPerStep = 256;  // groups a step: kRowsPerStep / kReduceLanes copies per lane
constexpr unsigned kChainBatch = 8;     // values lane 0 loads into registers before adding them

std::string reductionSource(Precision precision) {
  const bool f32 = precision == Precision::F32;
  const std::string t = f32 ? "float" : "double", bytes = f32 ? "4" : "8";
  const std::string lanes = std::to_string(kReduceLanes) + "u", rows = std::to_string(kRowsPerStep) + "u",
                    batch = std::to_string(kChainBatch);
  return "\n// The run's sums on the device (gpu/cuda/cuda.cpp reductionSource): a block per column, groups in order.\n"
         "// Copies rows [from, from + " + rows + ") of one column (rows `per` values apart) into dst, asynchronously from sm_80.\n"
         "static __device__ __forceinline__ void tl_fetch(" + t + "* dst, const " + t +
         "* col, unsigned int from, unsigned int groups, unsigned int per, unsigned int lane) {\n"
         "  for (unsigned int k = lane; k < " + rows + " && from + k < groups; k += " + lanes + ") {\n"
         "#if __CUDA_ARCH__ >= 800\n"
         "    const unsigned int d = (unsigned int)__cvta_generic_to_shared(dst + k);\n"
         "    asm volatile(\"cp.async.ca.shared.global [%0], [%1], " + bytes + ";\" :: \"r\"(d), \"l\"(col + (size_t)(from + k) * per) : \"memory\");\n"
         "#else\n"
         "    dst[k] = col[(size_t)(from + k) * per];\n"
         "#endif\n"
         "  }\n"
         "#if __CUDA_ARCH__ >= 800\n"
         "  asm volatile(\"cp.async.commit_group;\" ::: \"memory\");\n"
         "#endif\n"
         "}\n"
         "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kReduceLanes) + ", " + std::to_string(kReduceMinBlocks) +
         ") tapelab_reduce(const " + t +
         "* __restrict__ partials, double* __restrict__ totals, unsigned int groups, unsigned int per, unsigned int fresh) {\n"
         "  __shared__ " + t + " tl_rows[2][" + rows + "];\n"
         "  const unsigned int c = blockIdx.x, lane = threadIdx.x;\n"
         "  const " + t + "* col = partials + c;\n"
         "  tl_fetch(tl_rows[0], col, 0u, groups, per, lane);\n"
         "  double s = fresh ? 0.0 : totals[c];\n"
         "  unsigned int b = 0;\n"
         "  for (unsigned int base = 0; base < groups; base += " + rows + ", b ^= 1u) {\n"
         "    tl_fetch(tl_rows[b ^ 1u], col, base + " + rows + ", groups, per, lane);\n"
         "#if __CUDA_ARCH__ >= 800\n"
         "    asm volatile(\"cp.async.wait_group 1;\" ::: \"memory\");  // this step's rows landed, the next may not have\n"
         "#endif\n"
         "    __syncthreads();\n"
         "    if (lane == 0) {\n"
         "      const " + t + "* r = tl_rows[b];\n"
         "      const unsigned int n = groups - base < " + rows + " ? groups - base : " + rows + ";\n"
         "      unsigned int k = 0;\n"
         "      for (; k + " + batch + "u <= n; k += " + batch + "u) {\n"
         "        double x[" + batch + "];\n"
         "        #pragma unroll\n"
         "        for (int i = 0; i < " + batch + "; ++i) x[i] = (double)r[k + i];\n"
         "        #pragma unroll\n"
         "        for (int i = 0; i < " + batch + "; ++i) s = __dadd_rn(s, x[i]);\n"
         "      }\n"
         "      for (; k < n; ++k) s = __dadd_rn(s, (double)r[k]);\n"
         "    }\n"
         "    __syncthreads();  // before the next step's copies overwrite these rows\n"
         "  }\n"
         "  if (lane == 0) totals[c] = s;\n"
         "}\n";
}

// Longest dispatch, in groups: bounds one dispatch's run time and its slice of the partials buffers.
constexpr uint32_t kMaxGroupsPerDispatch = 1u << 16;
// Dispatches in flight: each writes its own slice of the partials buffer, copied back asynchronously
// behind it, so the host adds one dispatch's partials while the next ones run. The most a run is cut
// into is config cuda.dispatches, at most this.
constexpr size_t kPipelineDepth = 4;
// A run is cut into up to cuda.dispatches dispatches only where each still fills this many waves
// (groups resident on all SMs at once): the partly filled last wave of each then costs little.
constexpr uint64_t kMinWavesPerDispatch = 4;

// The device and its primary context, retained for as long as an engine or a kernel uses it.
class Device {
 public:
  Device(const cu::Driver& d, std::optional<unsigned> given, unsigned slot) : d_(d) {
    int count = 0;
    cu::check(d_, d_.cuDeviceGetCount(&count), "cuDeviceGetCount");
    const unsigned index = given ? *given : count > 0 ? slot % static_cast<unsigned>(count) : 0;
    if (index >= static_cast<unsigned>(count))
      throw std::invalid_argument("TAPELAB_CUDA_DEVICE: no CUDA device " + std::to_string(index) + " (" +
                                  std::to_string(count) + " found)");
    cu::check(d_, d_.cuDeviceGet(&dev_, static_cast<int>(index)), "cuDeviceGet");
    char name[256] = {};
    cu::check(d_, d_.cuDeviceGetName(name, sizeof name, dev_), "cuDeviceGetName");
    name_ = name;
    cu::check(d_, d_.cuDeviceGetAttribute(&major_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_), "cuDeviceGetAttribute");
    cu::check(d_, d_.cuDeviceGetAttribute(&minor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_), "cuDeviceGetAttribute");
    cu::check(d_, d_.cuDeviceGetAttribute(&sms_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev_), "cuDeviceGetAttribute");
    cu::check(d_, d_.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
    d_.cuDriverGetVersion(&driverVersion_);
  }
  // After a timeout the context's work may never finish: releasing it could wait for it, so it leaks.
  ~Device() {
    if (!*lost) d_.cuDevicePrimaryCtxRelease(dev_);
  }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // Set when a wait on the device passed TAPELAB_DEVICE_TIMEOUT (gpu/host/watchdog.h).
  DeviceLostFlag lost = makeDeviceLostFlag();

  // Makes the context current on the calling thread.
  void bind() const { cu::check(d_, d_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }
  const cu::Driver& driver() const { return d_; }
  int major() const { return major_; }
  int multiprocessors() const { return sms_; }
  CUdevice device() const { return dev_; }
  int minor() const { return minor_; }
  const std::string& name() const { return name_; }
  std::string describe() const {
    return name_ + " (sm_" + std::to_string(major_) + std::to_string(minor_) + ", CUDA driver " +
           std::to_string(driverVersion_ / 1000) + "." + std::to_string(driverVersion_ % 1000 / 10) + ", NVRTC " +
           cu::nvrtcVersionString() + ")";
  }

 private:
  const cu::Driver& d_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  std::string name_;
  int major_ = 0, minor_ = 0, sms_ = 0, driverVersion_ = 0;
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
    cu::check(dev.driver(), dev.driver().cuMemAlloc(&ptr_, std::max<size_t>(bytes, 1)),
              "cuMemAlloc of " + std::to_string(bytes) + " bytes");
    bytes_ = bytes;
  }
  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void reset() {
    if (ptr_ && !*dev_->lost) dev_->driver().cuMemFree(ptr_);  // cuMemFree may wait for a stuck kernel: leak
    ptr_ = 0;
    bytes_ = 0;
  }
  const Device* dev_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// Page-locked host memory for a dispatch's partials: the copy back runs at the bus's speed (a
// pageable copy is staged by the driver; with one path per lane at 7 markets a 4M-path dispatch reads
// back 21 MB). Falls back to ordinary memory when the driver cannot pin it.
class HostBuffer {
 public:
  HostBuffer() = default;
  ~HostBuffer() { reset(); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void ensure(const Device& dev, size_t bytes) {
    if (bytes <= bytes_) return;
    reset();
    dev_ = &dev;
    void* p = nullptr;
    if (dev.driver().cuMemAllocHost(&p, std::max<size_t>(bytes, 1)) == CUDA_SUCCESS) {
      pinned_ = p;
    } else {
      fallback_.resize(bytes);
    }
    bytes_ = bytes;
  }
  unsigned char* data() { return pinned_ ? static_cast<unsigned char*>(pinned_) : fallback_.data(); }
  // Page-locked: an asynchronous copy into it returns at once (into the fallback it would block).
  bool pinned() const { return pinned_ != nullptr; }

 private:
  void reset() {
    if (pinned_ && !*dev_->lost) dev_->driver().cuMemFreeHost(pinned_);  // as DeviceBuffer: leak after a lost device
    pinned_ = nullptr;
    fallback_.clear();
    bytes_ = 0;
  }
  const Device* dev_ = nullptr;
  void* pinned_ = nullptr;
  std::vector<unsigned char> fallback_;
  size_t bytes_ = 0;
};

// Statistics from NVRTC's ptxas log (registers, stack frame, spills).
KernelStats statsFrom(const cu::NvrtcOutput& out, const std::string& sourcePath, double seconds) {
  KernelStats s;
  s.registers = out.registers;
  s.spillBytes = out.stackBytes;  // local memory per thread: spills and call frames (the emitter makes no local arrays)
  s.spillStoreBytes = out.spillStoreBytes;
  s.instructions = out.ptxInstructions;
  s.compileSeconds = seconds;
  s.sourcePath = sourcePath;
  if (!out.statsLine().empty()) s.notes = "ptxas " + out.arch + ": " + out.statsLine() + "; ";
  return s;
}

// One line: NVRTC's first log lines and a file holding the source (the dump,
// else one written now to $TMPDIR/tapelab-failed/).
std::string failureMessage(const cu::NvrtcOutput& out, const std::string& source, const std::string& sourcePath) {
  return "NVRTC failed for " + out.arch + " [source: " + sourceForError(sourcePath, "cuda", "cu", source) +
         "]: " + logHead(out.log, 8);
}

class CudaKernel final : public Kernel, DispatchRunner {
 public:
  CudaKernel(std::shared_ptr<Device> dev, EmittedKernel k, DispatchOptions dispatch, const KernelConfig& config,
             const cu::NvrtcOutput& out, KernelStats stats, double deviceTimeout)
      : dev_(std::move(dev)), k_(std::move(k)), dispatch_(dispatch), sumsPlace_(config.cudaSums),
        depth_(std::clamp<size_t>(static_cast<size_t>(std::max(config.cudaDispatches, 1)), 1, kPipelineDepth)),
        stats_(std::move(stats)),
        watch_("cuda", deviceTimeout, dev_->lost) {
    const cu::Driver& d = dev_->driver();
    dev_->bind();
    // The cubin NVRTC made for this device; the PTX through the driver's JIT if that fails.
    CUresult rc = out.cubin.empty() ? CUDA_ERROR_INVALID_IMAGE
                                    : d.cuModuleLoadDataEx(&module_, out.cubin.data(), 0, nullptr, nullptr);
    if (rc != CUDA_SUCCESS) {
      rc = d.cuModuleLoadDataEx(&module_, out.ptx.c_str(), 0, nullptr, nullptr);
      stats_.notes += "loaded from PTX (cubin refused); ";
    }
    cu::check(d, rc, "cuModuleLoadDataEx");
    cu::check(d, d.cuModuleGetFunction(&fn_, module_, k_.entry.c_str()), "cuModuleGetFunction " + k_.entry);
    cu::check(d, d.cuModuleGetFunction(&reduceFn_, module_, "tapelab_reduce"), "cuModuleGetFunction tapelab_reduce");
    // config cuda.carveout: a percentage, or the least that keeps the blocks (fit); before the occupancy below
    if (config.cudaCarveout >= 0)
      cu::check(d, d.cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, config.cudaCarveout),
                "cuFuncSetAttribute (config cuda.carveout=" + std::to_string(config.cudaCarveout) + ")");
    else if (config.cudaCarveout == kCarveoutFit)
      fitCarveout(d);
    int regs = -1, local = -1;
    if (d.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn_) == CUDA_SUCCESS) stats_.registers = regs;
    if (d.cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn_) == CUDA_SUCCESS) stats_.spillBytes = local;
    int maxThreads = 0;
    if (d.cuFuncGetAttribute(&maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn_) == CUDA_SUCCESS &&
        maxThreads < k_.workgroupSize) {
      d.cuModuleUnload(module_);
      throw std::runtime_error("CUDA: kernel allows " + std::to_string(maxThreads) + " threads per block, needs " +
                               std::to_string(k_.workgroupSize));
    }
    stats_.notes += "driver: " + std::to_string(regs) + " registers, " + std::to_string(local) + " bytes local; ";
    int perSm = 0;
    if (d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, fn_, k_.workgroupSize, 0) == CUDA_SUCCESS && perSm > 0)
      wave_ = static_cast<uint64_t>(perSm) * static_cast<uint64_t>(std::max(1, dev_->multiprocessors()));
    timed_ = dispatch_.timeline && d.cuEventElapsedTime;
    if (dispatch_.timeline && !timed_) stats_.notes += "timeline: the driver lacks cuEventElapsedTime; ";
    const unsigned endFlags = timed_ ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
    // The copies back: the lowest priority. The reductions beside the kernels (config cuda.reduce=beside):
    // the greatest, so that the block scheduler places a reduction's blocks as soon as its kernel ends,
    // beside the next kernel's; at the kernels' priority or below it holds them until that kernel's
    // last blocks have started (H200 2026-12-01f calls 3 and 5, 2026-12-01g call 1).
    int least = 0, greatest = 0;
    CUresult made = d.cuCtxGetStreamPriorityRange(&least, &greatest);
    if (made == CUDA_SUCCESS) made = d.cuStreamCreateWithPriority(&copy_, CU_STREAM_NON_BLOCKING, least);
    if (made == CUDA_SUCCESS) made = d.cuStreamCreateWithPriority(&sums_, CU_STREAM_NON_BLOCKING, greatest);
    for (size_t i = 0; i < kPipelineDepth && made == CUDA_SUCCESS; ++i) {
      made = d.cuEventCreate(&done_[i], CU_EVENT_DISABLE_TIMING);
      if (made == CUDA_SUCCESS) made = d.cuEventCreate(&kernelEnd_[i], endFlags);
      if (made == CUDA_SUCCESS && timed_) made = d.cuEventCreate(&kernelBegin_[i], CU_EVENT_DEFAULT);
    }
    if (made != CUDA_SUCCESS) {
      release();
      cu::check(d, made, "cuStreamCreate / cuEventCreate");
    }
  }
  ~CudaKernel() override {
    if (module_ && !watch_.lost()) {  // unloading may wait for a stuck kernel: leak it
      dev_->bind();
      release();
    }
  }

  RunResult run(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) override {
    dev_->bind();
    return runDispatches(k_, dispatch_, pipelinedLimit(paths), inputs, paths, seed, *this);
  }
  uint64_t blockPaths() const override { return k_.pathsPerGroup(); }
  double runBlocks(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
                   BlockSink& sink) override {
    dev_->bind();
    return runDispatchBlocks(k_, dispatch_, pipelinedLimit(paths), inputs, first, paths, seed, *this, sink);
  }

  KernelStats stats() const override { return stats_; }

 private:
  // config cuda.carveout=fit: the least workgroup memory that keeps the blocks a multiprocessor holds under the
  // driver's split (its registers' and workgroup memory's limits), each block's static and reserved bytes, as a
  // percentage of the most; the rest of the 256 KB is L1 for local memory (said in the stats' notes). Left to the
  // driver where a query fails or the blocks would drop, and listed as not used.
  void fitCarveout(const cu::Driver& d) {
    const CUdevice dev = dev_->device();
    int blocks = 0, shared = 0, reserved = 0, most = 0;
    if (d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn_, k_.workgroupSize, 0) != CUDA_SUCCESS || blocks <= 0 ||
        d.cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn_) != CUDA_SUCCESS ||
        d.cuDeviceGetAttribute(&reserved, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, dev) != CUDA_SUCCESS ||
        d.cuDeviceGetAttribute(&most, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, dev) != CUDA_SUCCESS ||
        most <= 0) {
      stats_.configUnused.push_back("cuda.carveout=fit: a driver query failed, the driver's split");
      return;
    }
    const int64_t need = static_cast<int64_t>(blocks) * (shared + reserved);
    const int percent = static_cast<int>(std::min<int64_t>(100, (need * 100 + most - 1) / most));
    int after = 0;
    if (d.cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent) != CUDA_SUCCESS ||
        d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&after, fn_, k_.workgroupSize, 0) != CUDA_SUCCESS || after < blocks) {
      d.cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1);
      stats_.configUnused.push_back("cuda.carveout=fit: " + std::to_string(percent) + "% would hold " +
                                    std::to_string(after) + " of " + std::to_string(blocks) + " blocks, the driver's split");
      return;
    }
    stats_.notes += "cuda.carveout=fit: " + std::to_string(percent) + "% (" + std::to_string(blocks) + " blocks of " +
                    std::to_string(shared + reserved) + " B); ";
  }

  void upload(const std::vector<unsigned char>& in, uint32_t groups, size_t dispatches) override {
    const cu::Driver& d = dev_->driver();
    watch_.checkAlive();  // the copy below would queue behind a stuck kernel
    inputs_.ensure(*dev_, in.size());
    cu::check(d, d.cuMemcpyHtoD(inputs_.get(), in.data(), in.size()), "cuMemcpyHtoD");
    slices_ = std::clamp<size_t>(dispatches, 1, kPipelineDepth);
    slice_ = k_.partialBytes(groups);
    const size_t scratchBytes = k_.scratchBytes(groups);
    partials_.ensure(*dev_, slice_ * slices_);
    scratch_.ensure(*dev_, scratchBytes);
    totals_.ensure(*dev_, columns() * sizeof(double));
    deviceTimes_.clear();
    launched_ = 0;
    stats_.scratchBytes = k_.kind == KernelKind::Scratch ? static_cast<int64_t>(scratchBytes) : 0;
    if (k_.kind == KernelKind::Scratch) stats_.scratchBytesPerPath = static_cast<int64_t>(k_.scratchSlots * k_.scalarBytes());
  }

  size_t dispatchesPerLaunch() const override { return kPipelineDepth; }

  // The batch's kernels one after another on the default stream (dispatches that share the scratch
  // buffer so never overlap), each writing its own slice of partials, which the reduction kernel adds
  // to the run's sums on the device: behind its kernel on the kernels' stream (the default), or on the
  // sums stream beside the next kernel once its own has ended (config cuda.reduce=beside). Its chain
  // takes ~0.15 ms per 15,840 groups at 7 markets on the H200, where the host took ~1 ms after the last
  // kernel. Beside, only the last dispatch's is not hidden, yet on the H200 the 7-market ladder ran 2%
  // faster beside at 1M paths (dispatches of 4 waves) and 4-9% slower at 4M (12 waves; why is not measured:
  // 2026-12-01g calls 2-4), so behind stays the default. A run whose partials are
  // wanted as they are (Kernel::runBlocks, config cuda.reduce=host) copies each slice back on a second
  // stream once its kernel ends and adds it on the host while the later dispatches run; without
  // page-locked memory a copy would block the host before the device timeout could bound it: there
  // each dispatch runs, is waited for, then copied, one at a time.
  void launch(std::span<const Dispatch> batch, PartialSums& sums) override {
    const cu::Driver& d = dev_->driver();
    const bool onDevice = sumsOnDevice(sums);
    if (!onDevice) host_.ensure(*dev_, slice_ * slices_);
    const bool pipelined = onDevice || host_.pinned();
    auto start = [&](size_t i) {
      const Dispatch& x = batch[i];
      const size_t at = pipelined ? i * slice_ : 0;
      CUdeviceptr bufs[3] = {inputs_.get(), partials_.get() + at, scratch_.get()};
      std::array<uint32_t, 7> p = x.params.words();
      void* args[10] = {&bufs[0], &bufs[1], &bufs[2], &p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &p[6]};
      if (timed_) cu::check(d, d.cuEventRecord(kernelBegin_[i], nullptr), "cuEventRecord");
      cu::check(d,
                d.cuLaunchKernel(fn_, x.groups, 1, 1, static_cast<unsigned>(k_.workgroupSize), 1, 1, 0, nullptr, args,
                                 nullptr),
                "cuLaunchKernel");
      // Beside: the copy back on the copy stream, or the reduction on the sums stream; behind: the
      // reduction on the kernels' stream.
      const bool beside = pipelined && (!onDevice || sumsPlace_ == SumsPlace::Beside);
      if (timed_ || beside) cu::check(d, d.cuEventRecord(kernelEnd_[i], nullptr), "cuEventRecord");
      const bool fresh = launched_++ == 0;
      if (!pipelined) {
        cu::check(d, d.cuEventRecord(done_[i], nullptr), "cuEventRecord");
        return;
      }
      if (!beside) {
        launchReduction(at, x.groups, fresh, nullptr);
        cu::check(d, d.cuEventRecord(done_[i], nullptr), "cuEventRecord");
        return;
      }
      if (onDevice) {
        cu::check(d, d.cuStreamWaitEvent(sums_, kernelEnd_[i], 0), "cuStreamWaitEvent");
        launchReduction(at, x.groups, fresh, sums_);
        cu::check(d, d.cuEventRecord(done_[i], sums_), "cuEventRecord");
        return;
      }
      cu::check(d, d.cuStreamWaitEvent(copy_, kernelEnd_[i], 0), "cuStreamWaitEvent");
      cu::check(d, d.cuMemcpyDtoHAsync(host_.data() + at, partials_.get() + at, k_.partialBytes(x.groups), copy_),
                "cuMemcpyDtoHAsync");
      cu::check(d, d.cuEventRecord(done_[i], copy_), "cuEventRecord");
    };
    // Polled within the device timeout (CUDA has no timed wait); with no limit, a blocking wait.
    // Either surfaces the kernel's errors. Then, with the timeline on, the kernel's device times.
    auto await = [&](size_t i) {
      auto finished = [&] {
        const CUresult rc = d.cuEventQuery(done_[i]);
        if (rc == CUDA_ERROR_NOT_READY) return false;
        cu::check(d, rc, "cuEventQuery (kernel execution)");
        return true;
      };
      watch_.wait("a dispatch of " + std::to_string(batch[i].groups) + " groups on " + dev_->name(), finished,
                  [&] { cu::check(d, d.cuEventSynchronize(done_[i]), "cuEventSynchronize (kernel execution)"); });
      if (!timed_) return;
      float kernelMs = -1, gapMs = -1;
      cu::check(d, d.cuEventElapsedTime(&kernelMs, kernelBegin_[i], kernelEnd_[i]), "cuEventElapsedTime");
      if (i > 0) cu::check(d, d.cuEventElapsedTime(&gapMs, kernelEnd_[i - 1], kernelBegin_[i]), "cuEventElapsedTime");
      deviceTimes_.push_back({kernelMs * 1e-3, i > 0 ? gapMs * 1e-3 : -1.0});
    };
    if (!pipelined) {
      for (size_t i = 0; i < batch.size(); ++i) {
        start(i);
        await(i);
        cu::check(d, d.cuMemcpyDtoH(host_.data(), partials_.get(), k_.partialBytes(batch[i].groups)), "cuMemcpyDtoH");
        sums.add(host_.data(), batch[i].groups);
      }
      return;
    }
    size_t started = 0, i = 0;
    try {
      for (; started < batch.size(); ++started) start(started);
      for (; i < batch.size(); ++i) {
        await(i);
        if (onDevice) sums.addedOnDevice(batch[i].groups);
        else sums.add(host_.data() + i * slice_, batch[i].groups);
      }
    } catch (...) {
      // The copies still in flight write into host_: let them land before anything frees or reuses it
      // (not on a lost device, where they may never finish and host_ leaks instead).
      if (!watch_.lost())
        for (size_t j = i; j < started; ++j) d.cuEventSynchronize(done_[j]);
      throw;
    }
  }

  // tapelab_reduce over the slice at byte `at` of partials_, `groups` rows, on `stream`.
  void launchReduction(size_t at, uint32_t groups, bool fresh, CUstream stream) {
    CUdeviceptr slice = partials_.get() + at, totals = totals_.get();
    unsigned rows = groups, per = static_cast<unsigned>(columns()), first = fresh ? 1u : 0u;
    void* args[5] = {&slice, &totals, &rows, &per, &first};
    cu::check(dev_->driver(), dev_->driver().cuLaunchKernel(reduceFn_, per, 1, 1, kReduceLanes, 1, 1, 0, stream, args, nullptr),
              "cuLaunchKernel (reduction)");
  }

  // Whether this run's partials are added on the device (config cuda.reduce, unless runBlocks wants them).
  bool sumsOnDevice(const PartialSums& sums) const { return sumsPlace_ != SumsPlace::Host && !sums.wantsBlocks(); }

  // The run's sums, added on the device (launch waited for every reduction).
  void collect(PartialSums& sums) override {
    if (!sumsOnDevice(sums)) return;
    std::vector<double> totals(columns());
    cu::check(dev_->driver(), dev_->driver().cuMemcpyDtoH(totals.data(), totals_.get(), totals.size() * sizeof(double)),
              "cuMemcpyDtoH (sums)");
    sums.setTotals(totals);
  }

  size_t columns() const { return static_cast<size_t>(k_.partialsPerGroup()); }

  void deviceTimes(std::vector<DispatchTiming>& dispatches) const override {
    for (size_t i = 0; i < dispatches.size() && i < deviceTimes_.size(); ++i) {
      dispatches[i].kernelSeconds = deviceTimes_[i].first;
      dispatches[i].gapSeconds = deviceTimes_[i].second;
    }
  }

  void release() {
    const cu::Driver& d = dev_->driver();
    for (auto* events : {&done_, &kernelEnd_, &kernelBegin_})
      for (CUevent& e : *events)
        if (e) d.cuEventDestroy(std::exchange(e, nullptr));
    if (copy_) d.cuStreamDestroy(std::exchange(copy_, nullptr));
    if (sums_) d.cuStreamDestroy(std::exchange(sums_, nullptr));
    if (module_) d.cuModuleUnload(std::exchange(module_, nullptr));
  }

  // Groups per dispatch for a run of `paths`: groupLimit(), lowered so that the run makes up to
  // depth_ dispatches of at least kMinWavesPerDispatch waves each, whole waves but the last
  // dispatch (a partly filled last wave idles SMs once per run, not once per dispatch); results do
  // not depend on it: the blocks stay where they are. Unknown occupancy: groupLimit().
  uint32_t pipelinedLimit(uint64_t paths) const {
    const uint32_t limit = groupLimit();
    const uint64_t groups = (paths + k_.pathsPerGroup() - 1) / k_.pathsPerGroup();
    if (wave_ == 0 || groups < 2 * kMinWavesPerDispatch * wave_) return limit;
    const uint64_t waves = (groups + wave_ - 1) / wave_;
    const uint64_t per = std::max((waves + depth_ - 1) / depth_, kMinWavesPerDispatch) * wave_;
    return static_cast<uint32_t>(std::min<uint64_t>(limit, per));
  }

  // Groups per dispatch: one dispatch's scratch must fit the budget, by default
  // free device memory (with headroom).
  uint32_t groupLimit() const {
    size_t freeBytes = 0, total = 0;
    if (dispatch_.scratchBudget == 0 && k_.scratchSlots > 0)
      cu::check(dev_->driver(), dev_->driver().cuMemGetInfo(&freeBytes, &total), "cuMemGetInfo");
    const uint64_t budget = scratchBudgetFromFree(dispatch_.scratchBudget, freeBytes, scratch_.bytes());
    return scratchGroupCap(k_, kMaxGroupsPerDispatch, budget, "CUDA");
  }

  std::shared_ptr<Device> dev_;
  EmittedKernel k_;
  DispatchOptions dispatch_;
  SumsPlace sumsPlace_;  // config cuda.reduce
  size_t depth_;         // config cuda.dispatches: the most dispatches a run is cut into
  KernelStats stats_;
  DeviceWatch watch_;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
  DeviceBuffer inputs_, partials_, scratch_;
  DeviceBuffer totals_;  // the run's sums, in double, when added on the device
  HostBuffer host_;  // a batch's partials, read back when the run wants them (declared after dev_: freed before the device)
  size_t slice_ = 0;  // bytes of one dispatch's partials in partials_ and host_
  size_t slices_ = 1;  // slices in partials_ (and host_)
  uint64_t launched_ = 0;  // dispatches started since upload(): the first reduction starts the sums from 0
  CUfunction reduceFn_ = nullptr;  // tapelab_reduce (reductionSource)
  uint64_t wave_ = 0;  // groups resident on the whole device at once (0: unknown)
  std::array<CUevent, kPipelineDepth> done_{};  // each dispatch's sums done on the device, or its copy back
  std::array<CUevent, kPipelineDepth> kernelEnd_{};  // each dispatch's kernel finished (the copy or sums stream waits; the timeline)
  std::array<CUevent, kPipelineDepth> kernelBegin_{};  // with the timeline: each kernel's start
  CUstream copy_ = nullptr;  // the copies back (config cuda.reduce=host, runBlocks), lowest priority
  CUstream sums_ = nullptr;  // the reductions beside the kernels (config cuda.reduce=beside), greatest priority
  bool timed_ = false;  // DispatchOptions::timeline, and the driver can time events
  std::vector<std::pair<double, double>> deviceTimes_;  // per dispatch since upload(): kernel, gap seconds
};

class CudaEngine final : public Engine {
 public:
  explicit CudaEngine(EngineSettings settings) : settings_(std::move(settings)) {}
  std::string name() const override { return "cuda"; }

  EngineCaps caps() const override {
    EngineCaps c;
    c.perValuePlans = true;  // as register kernels (gpu/codegen: kept values at kernel scope)
    c.defaultPrecision = Precision::F32;
    c.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch, KernelKind::Tangent};
    c.marketOrder = true;
    c.maxMarkets = 8;
    std::string why;
    if (!cu::nvrtcAvailable(&why)) {
      c.usable = false;
      c.compileOnly = false;
      c.reason = why;
      return c;
    }
    if (!cu::driver(&why)) {
      c.usable = false;
      c.compileOnly = true;
      c.reason = why;
      return c;
    }
    try {
      c.reason = device()->describe();
      c.usable = true;
      c.gpu = true;
    } catch (const std::exception& e) {
      c.usable = false;
      c.compileOnly = true;
      c.reason = std::string("compile-only: ") + e.what();
    }
    return c;
  }

  std::unique_ptr<Kernel> compile(const Tape& tape, const KernelOptions& options) override {
    const auto t0 = std::chrono::steady_clock::now();
    std::string why;
    if (!cu::nvrtcAvailable(&why)) throw EngineUnavailable("cuda: " + why);
    const cu::Driver* d = cu::driver(&why);
    std::shared_ptr<Device> dev = d ? device() : nullptr;
    const auto [major, minor] = dev ? std::pair<int, int>{dev->major(), dev->minor()}
                                    : std::pair<int, int>{settings_.cuda.archMajor, settings_.cuda.archMinor};

    refusePerValuePlan(options, "cuda");

    EmittedKernel k = emitKernel(tape, options, cudaDialect());
    k.source += reductionSource(k.precision);
    const std::string sourcePath =
        dumpKernel(options.dumpDir, "cuda-" + std::string(toString(options.kind)), "cu", k, k.source);
    // NVRTC in-process, on a thread of its own under --compile-timeout (engine/compile_watch.h).
    CompileWatch watch("cuda", kernelSubject(tape, options), k.source.size(), settings_.compileTimeout);
    const auto [out, cacheHit] = watch.run([source = k.source, major = major, minor = minor, dir = settings_.cacheDir] {
      bool hit = false;
      cu::NvrtcOutput o = cu::compileCudaCached(source, "tapelab_kernel.cu", major, minor, dir, &hit);
      return std::pair<cu::NvrtcOutput, bool>(std::move(o), hit);
    });
    if (!out.ok) throw std::runtime_error(failureMessage(out, k.source, sourcePath));
    KernelStats stats =
        statsFrom(out, sourcePath, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    stats.cacheHit = cacheHit;
    stats.configUnused = k.configUnused;
    stats.sourceBytes = static_cast<int64_t>(k.source.size());
    if (k.kind == KernelKind::Scratch) stats.scratchBytesPerPath = static_cast<int64_t>(k.scratchSlots * k.scalarBytes());
    if (!dev) return std::make_unique<CompileOnlyKernel>(std::move(stats), "cuda: " + why);
    return std::make_unique<CudaKernel>(dev, std::move(k), options.dispatch, options.config, out, std::move(stats),
                                        settings_.deviceTimeout);
  }

 private:
  std::shared_ptr<Device> device() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!dev_) {
      std::string why;
      const cu::Driver* d = cu::driver(&why);
      if (!d) throw EngineUnavailable("cuda: " + why);
      dev_ = std::make_shared<Device>(*d, settings_.cuda.device, settings_.deviceSlot);
    }
    return dev_;
  }

  EngineSettings settings_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<Device> dev_;
};

}  // namespace

std::unique_ptr<Engine> makeCudaEngine(const EngineSettings& settings) { return std::make_unique<CudaEngine>(settings); }

std::string compilePtx(const std::string& source) {
  const cu::NvrtcOutput out = cu::compilePtxOnly(source, "tapelab_kernel.cu", 9, 0);
  if (!out.ok) throw std::runtime_error(failureMessage(out, source, ""));
  return out.ptx;
}

}  // namespace tapelab
