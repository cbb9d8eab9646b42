#include "gpu/vulkan/kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "gpu/codegen/emit.h"
#include "engine/compile_watch.h"
#include "gpu/host/compile.h"
#include "gpu/host/dispatch.h"
#include "gpu/host/watchdog.h"
#include "gpu/vulkan/spirv.h"

namespace tapelab::vulkan {
namespace {

using Clock = std::chrono::steady_clock;

// At most this many groups per dispatch (2^20 paths with 64 x 4): no single
// dispatch runs for long. The result does not depend on it (gpu/host/dispatch.h).
constexpr uint32_t kMaxGroupsPerDispatch = 4096;
// Dispatches recorded into one command buffer (one submit, one wait).
constexpr size_t kDispatchesPerSubmit = 64;

class VulkanKernel final : public Kernel, DispatchRunner {
 public:
  VulkanKernel(std::shared_ptr<Device> dev, const Tape& tape, const KernelOptions& options, const std::string& cacheDir,
               double deviceTimeout, double compileTimeout)
      : dev_(std::move(dev)), dispatch_(options.dispatch), watch_("vulkan", deviceTimeout, dev_->lost) {
    // A kernel that fails to build gives its handles back (the device lives on: a
    // long property run or `compare` goes on after a refused kernel).
    try {
      build(tape, options, cacheDir, compileTimeout);
    } catch (const CompileTimeout&) {
      // The driver may still be building the pipeline on the abandoned thread: nothing it uses is
      // destroyed (the device is marked lost: its handles leak, the next kernel opens a new one).
      dev_->lost->store(true);
      throw;
    } catch (...) {
      release();
      throw;
    }
  }

  ~VulkanKernel() override { release(); }

  KernelStats stats() const override { return stats_; }

 private:
  void build(const Tape& tape, const KernelOptions& options, const std::string& cacheDir, double compileTimeout) {
    const auto t0 = Clock::now();
    if (options.precision == Precision::F64)
      throw std::invalid_argument("vulkan: fp64 kernels are not supported (GLSL has no double exp/log); use fp32");
    refusePerValuePlan(options, "vulkan");
    emitted_ = emitKernel(tape, options, glslDialect());
    stats_.configUnused = emitted_.configUnused;
    stats_.sourceBytes = static_cast<int64_t>(emitted_.source.size());
    stats_.sourcePath =
        dumpKernel(options.dumpDir, std::string("vulkan-") + toString(options.kind), "comp", emitted_, emitted_.source);
    // shaderc and the driver's compiler, in-process: each on a thread of its own under --compile-timeout.
    CompileWatch compile("vulkan", kernelSubject(tape, options), emitted_.source.size(), compileTimeout);
    const Spirv spirv = compile.run(
        [source = emitted_.source, path = stats_.sourcePath, cacheDir,
         names = emitted_.outlinedDraws ? outlinedDrawHelpers() : std::vector<std::string>{}] {
          return compileGlsl(source, path, cacheDir, names);
        });
    // A request the SPIR-V could not carry is an error, not a kernel with its draws inlined after all (a
    // tape without draws says so in configUnused instead).
    if (emitted_.outlinedDraws && spirv.dontInlineMarked == 0 &&
        std::find(tape.op.begin(), tape.op.end(), Op::Randn) != tape.op.end())
      throw std::logic_error("vulkan: outline_draws=on: no " + outlinedDrawHelpers().front() +
                             " or " + outlinedDrawHelpers().back() + " in the SPIR-V to keep out of line");
    if (const VkResult r = createPipeline(spirv.words, compile); r != VK_SUCCESS) {
      // The driver's own compiler refused the SPIR-V (NVIDIA: VK_ERROR_UNKNOWN for the
      // 8-market register kernel of the 252-step Asian).
      throw std::runtime_error(std::string("vulkan: ") + dev_->props.deviceName +
                               " could not build the kernel (vkCreateComputePipelines: " + resultName(r) +
                               "); its GLSL is in " + sourceForError(stats_.sourcePath, "vulkan", "comp", emitted_.source) +
                               (options.markets > 1 ? "; fewer markets per dispatch make a smaller kernel" : ""));
    }
    stats_.cacheHit = spirv.cacheHit && pipelineCacheHit_;
    stats_.compileSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!stats_.notes.empty()) stats_.notes += "; ";
    stats_.notes += std::string("spirv ") + (spirv.cacheHit ? "cached" : "compiled") + ", pipeline " +
                    (pipelineFeedback_ ? (pipelineCacheHit_ ? "cache hit" : "cache miss") : "cache feedback n/a");
    if (emitted_.kind == KernelKind::Scratch) {
      stats_.scratchBytes = static_cast<int64_t>(emitted_.scratchBytes(maxGroups()));
      stats_.scratchBytesPerPath = static_cast<int64_t>(emitted_.scratchSlots * emitted_.scalarBytes());
    }

    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = dev_->pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    {
      std::lock_guard<std::mutex> lock(dev_->mu);
      check(vkAllocateCommandBuffers(dev_->device, &cai, &cmd_), "vkAllocateCommandBuffers");
    }
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(dev_->device, &fci, nullptr, &fence_), "vkCreateFence");
  }

  void release() noexcept {
    // After a timeout the command buffer may never complete: waiting for the queue would hang, and
    // destroying what it uses is undefined. The handles leak (and the buffers: Buffer::release).
    if (watch_.lost()) return;
    VkDevice d = dev_->device;
    {
      std::lock_guard<std::mutex> lock(dev_->mu);
      vkQueueWaitIdle(dev_->queue);
      if (cmd_) vkFreeCommandBuffers(d, dev_->pool, 1, &cmd_);
    }
    if (fence_) vkDestroyFence(d, fence_, nullptr);
    if (pipeline_) vkDestroyPipeline(d, pipeline_, nullptr);
    if (descPool_) vkDestroyDescriptorPool(d, descPool_, nullptr);
    if (layout_) vkDestroyPipelineLayout(d, layout_, nullptr);
    if (setLayout_) vkDestroyDescriptorSetLayout(d, setLayout_, nullptr);
    cmd_ = VK_NULL_HANDLE, fence_ = VK_NULL_HANDLE, pipeline_ = VK_NULL_HANDLE;
    descPool_ = VK_NULL_HANDLE, layout_ = VK_NULL_HANDLE, setLayout_ = VK_NULL_HANDLE;
  }

 public:
  RunResult run(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) override {
    return runDispatches(emitted_, dispatch_, maxGroups(), inputs, paths, seed, *this);
  }
  uint64_t blockPaths() const override { return emitted_.pathsPerGroup(); }
  double runBlocks(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
                   BlockSink& sink) override {
    return runDispatchBlocks(emitted_, dispatch_, maxGroups(), inputs, first, paths, seed, *this, sink);
  }

 private:
  void upload(const std::vector<unsigned char>& in, uint32_t, size_t dispatches) override {
    watch_.checkAlive();  // a stuck dispatch may still read the inputs
    ensureBuffers(in.size(), dispatches);
    std::memcpy(inputs_.mapped, in.data(), in.size());
  }

  size_t dispatchesPerLaunch() const override { return kDispatchesPerSubmit; }

  // One command buffer: the batch's dispatches, each writing its own segment of
  // the partials buffer; one submit, one wait.
  void launch(std::span<const Dispatch> batch, PartialSums& sums) override {
    watch_.checkAlive();
    const VkDeviceSize segment = segmentBytes();
    std::unique_lock<std::mutex> lock(dev_->mu);  // recording and submitting; not the wait
    check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    for (size_t i = 0; i < batch.size(); ++i) {
      const uint32_t offset = static_cast<uint32_t>(i * segment);
      vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 1, &offset);
      vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(KernelParams), &batch[i].params);
      vkCmdDispatch(cmd_, batch[i].groups, 1, 1);
      if (emitted_.scratchSlots > 0 && i + 1 < batch.size()) {
        // The next dispatch reuses the scratch buffer (the scratch kind's values, stored draws, Kahan
        // slots: any kernel with scratch slots; without the barrier NVIDIA overlaps the dispatches).
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                             &mb, 0, nullptr, 0, nullptr);
      }
    }
    VkMemoryBarrier toHost{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    toHost.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &toHost, 0,
                         nullptr, 0, nullptr);
    check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd_;
    check(vkQueueSubmit(dev_->queue, 1, &si, fence_), "vkQueueSubmit");
    lock.unlock();
    const VkResult waited = vkWaitForFences(dev_->device, 1, &fence_, VK_TRUE, watch_.timeoutNanoseconds());
    if (waited == VK_TIMEOUT)
      watch_.timedOut("vkWaitForFences on a submit of " + std::to_string(batch.size()) +
                      (batch.size() == 1 ? " dispatch on " : " dispatches on ") +
                      dev_->props.deviceName);
    check(waited, "vkWaitForFences");
    check(vkResetFences(dev_->device, 1, &fence_), "vkResetFences");
    for (size_t i = 0; i < batch.size(); ++i)
      sums.add(static_cast<const unsigned char*>(partials_.mapped) + i * segment, batch[i].groups);
  }

  uint32_t maxGroups() const {
    uint64_t g = kMaxGroupsPerDispatch;
    // A descriptor range cannot exceed maxStorageBufferRange.
    const uint64_t range = dev_->props.limits.maxStorageBufferRange;
    const uint64_t perGroupScratch = emitted_.scratchBytes(1);
    if (perGroupScratch) g = std::min<uint64_t>(g, std::max<uint64_t>(1, range / perGroupScratch));
    const uint64_t perGroupPartials = emitted_.partialBytes(1);
    g = std::min<uint64_t>(g, std::max<uint64_t>(1, range / perGroupPartials));
    return static_cast<uint32_t>(g);
  }

  VkDeviceSize segmentBytes() const {
    const VkDeviceSize align = std::max<VkDeviceSize>(16, dev_->props.limits.minStorageBufferOffsetAlignment);
    const VkDeviceSize bytes = emitted_.partialBytes(maxGroups());
    return (bytes + align - 1) / align * align;
  }

  void ensureBuffers(size_t inputBytes, size_t dispatches) {
    bool changed = false;
    if (inputs_.bytes < inputBytes || !inputs_.buffer) {
      inputs_.allocate(dev_, inputBytes, true);
      changed = true;
    }
    const size_t perSubmit = std::min(dispatches, kDispatchesPerSubmit);
    const VkDeviceSize partialBytes = segmentBytes() * std::max<size_t>(1, perSubmit);
    if (partials_.bytes < partialBytes || !partials_.buffer) {
      partials_.allocate(dev_, partialBytes, true);
      changed = true;
    }
    const VkDeviceSize scratchBytes = emitted_.scratchBytes(maxGroups());
    if (!scratch_.buffer || scratch_.bytes < scratchBytes) {
      scratch_.allocate(dev_, scratchBytes, false);
      changed = true;
    }
    if (!changed) return;
    VkDescriptorBufferInfo infos[3] = {{inputs_.buffer, 0, VK_WHOLE_SIZE},
                                       {partials_.buffer, 0, segmentBytes()},
                                       {scratch_.buffer, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet writes[3];
    for (uint32_t b = 0; b < 3; ++b) {
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[b].dstSet = set_;
      writes[b].dstBinding = b;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = b == 1 ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    vkUpdateDescriptorSets(dev_->device, 3, writes, 0, nullptr);
  }

  // Builds the layout, descriptors and pipeline; returns vkCreateComputePipelines'
  // result (the driver compiles there), throws for any other failure.
  VkResult createPipeline(const std::vector<uint32_t>& words, CompileWatch& compile) {
    VkDevice d = dev_->device;
    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = words.size() * 4;
    smi.pCode = words.data();
    VkShaderModule module;
    check(vkCreateShaderModule(d, &smi, nullptr, &module), "vkCreateShaderModule");

    VkDescriptorSetLayoutBinding bindings[3];
    for (uint32_t b = 0; b < 3; ++b) {
      bindings[b] = {};
      bindings[b].binding = b;
      bindings[b].descriptorType = b == 1 ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      bindings[b].descriptorCount = 1;
      bindings[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.bindingCount = 3;
    dli.pBindings = bindings;
    check(vkCreateDescriptorSetLayout(d, &dli, nullptr, &setLayout_), "vkCreateDescriptorSetLayout");
    VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(KernelParams)};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &setLayout_;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pcr;
    check(vkCreatePipelineLayout(d, &pli, nullptr, &layout_), "vkCreatePipelineLayout");

    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2}, {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC, 1}};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = 1;
    dpi.poolSizeCount = 2;
    dpi.pPoolSizes = sizes;
    check(vkCreateDescriptorPool(d, &dpi, nullptr, &descPool_), "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo dsa{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dsa.descriptorPool = descPool_;
    dsa.descriptorSetCount = 1;
    dsa.pSetLayouts = &setLayout_;
    check(vkAllocateDescriptorSets(d, &dsa, &set_), "vkAllocateDescriptorSets");

    // The driver compiles here: on a thread of the watch's, given handles and flags by value (past the
    // deadline it may finish after this kernel is gone; the constructor then marks the device lost).
    struct Built {
      VkResult result = VK_ERROR_UNKNOWN;
      VkPipeline pipeline = VK_NULL_HANDLE;
      VkPipelineCreationFeedbackFlags feedback = 0;
    };
    const Built built = compile.run([d, cache = dev_->cache, module, layout = layout_, stats = dev_->executableStats,
                                     withFeedback = dev_->creationFeedback] {
      VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
      cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
      cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
      cpi.stage.module = module;
      cpi.stage.pName = "main";
      cpi.layout = layout;
      if (stats) cpi.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
      VkPipelineCreationFeedbackEXT feedback{}, stageFeedback{};
      VkPipelineCreationFeedbackCreateInfoEXT fci{VK_STRUCTURE_TYPE_PIPELINE_CREATION_FEEDBACK_CREATE_INFO_EXT};
      fci.pPipelineCreationFeedback = &feedback;
      fci.pipelineStageCreationFeedbackCount = 1;
      fci.pPipelineStageCreationFeedbacks = &stageFeedback;
      if (withFeedback) cpi.pNext = &fci;
      Built b;
      b.result = vkCreateComputePipelines(d, cache, 1, &cpi, nullptr, &b.pipeline);
      b.feedback = feedback.flags;
      vkDestroyShaderModule(d, module, nullptr);
      return b;
    });
    const VkResult r = built.result;
    pipeline_ = built.pipeline;
    const VkPipelineCreationFeedbackEXT feedback{built.feedback, 0};
    if (r != VK_SUCCESS) {
      pipeline_ = VK_NULL_HANDLE;
      return r;
    }
    if (dev_->creationFeedback && (feedback.flags & VK_PIPELINE_CREATION_FEEDBACK_VALID_BIT_EXT)) {
      pipelineFeedback_ = true;
      pipelineCacheHit_ = (feedback.flags & VK_PIPELINE_CREATION_FEEDBACK_APPLICATION_PIPELINE_CACHE_HIT_BIT_EXT) != 0;
    }
    if (!pipelineCacheHit_) dev_->savePipelineCache();
    if (dev_->executableStats) readExecutableStats();
    return VK_SUCCESS;
  }

  // Registers, spills and scratch as the driver names them; every statistic in notes.
  void readExecutableStats() {
    VkDevice d = dev_->device;
    VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pi.pipeline = pipeline_;
    uint32_t n = 0;
    if (vkGetPipelineExecutablePropertiesKHR(d, &pi, &n, nullptr) != VK_SUCCESS) return;
    std::vector<VkPipelineExecutablePropertiesKHR> props(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
    vkGetPipelineExecutablePropertiesKHR(d, &pi, &n, props.data());
    for (uint32_t e = 0; e < n; ++e) {
      VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
      ei.pipeline = pipeline_;
      ei.executableIndex = e;
      uint32_t sn = 0;
      if (vkGetPipelineExecutableStatisticsKHR(d, &ei, &sn, nullptr) != VK_SUCCESS) continue;
      std::vector<VkPipelineExecutableStatisticKHR> st(sn, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
      vkGetPipelineExecutableStatisticsKHR(d, &ei, &sn, st.data());
      for (const auto& s : st) {
        double v = 0;
        switch (s.format) {
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: v = s.value.b32; break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: v = double(s.value.i64); break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: v = double(s.value.u64); break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: v = s.value.f64; break;
          default: break;
        }
        const std::string name = lowerCase(s.name);
        char text[64];
        std::snprintf(text, sizeof text, "%.15g", v);
        if (!stats_.notes.empty()) stats_.notes += "; ";
        stats_.notes += std::string(s.name) + "=" + text;
        const bool spill = name.find("spill") != std::string::npos;
        if (!spill && (name.find("register") != std::string::npos || name == "vgprs" || name == "gprs"))
          stats_.registers = std::max(stats_.registers, static_cast<int>(v));
        if (spill || name.find("scratch") != std::string::npos || name.find("local memory") != std::string::npos) {
          // NVIDIA 580 reports "Local Memory Size" with bit 36 set; its low 32 bits
          // match ptxas's stack frame for the same kernel (H200: 2160 B plain, 0 B
          // register vs CUDA's 2224 B and 0 B), so keep those.
          int64_t bytes = static_cast<int64_t>(v);
          if (bytes >= (int64_t{1} << 32)) bytes &= 0xFFFFFFFFll;
          stats_.spillBytes = std::max<int64_t>(stats_.spillBytes, bytes);
        }
      }
    }
  }

  std::shared_ptr<Device> dev_;
  DispatchOptions dispatch_;
  DeviceWatch watch_;
  EmittedKernel emitted_;
  KernelStats stats_;
  bool pipelineFeedback_ = false, pipelineCacheHit_ = false;
  VkDescriptorSetLayout setLayout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkDescriptorPool descPool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  Buffer inputs_, partials_, scratch_;
};

}  // namespace

std::unique_ptr<Kernel> makeVulkanKernel(std::shared_ptr<Device> device, const Tape& tape, const KernelOptions& options,
                                         const std::string& cacheDir, double deviceTimeout, double compileTimeout) {
  return std::make_unique<VulkanKernel>(std::move(device), tape, options, cacheDir, deviceTimeout, compileTimeout);
}

}  // namespace tapelab::vulkan
