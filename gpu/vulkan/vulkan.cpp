// The Vulkan engine. The kernel and its ABI come from gpu/codegen (emit.h,
// host.h); this file is the host plumbing: volk, device choice, shaderc, the
// on-disk SPIR-V and pipeline caches, buffers, chunked dispatches.
#include "gpu/vulkan/vulkan.h"

#include <shaderc/shaderc.h>
#include <unistd.h>
#include <volk.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "gpu/codegen/emit.h"
#include "gpu/codegen/host.h"

namespace tapelab {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// At most this many groups per dispatch (2^20 paths with 64 x 4): no single
// dispatch runs for long. The result does not depend on it (host.h).
constexpr uint32_t kMaxGroupsPerDispatch = 4096;
// Dispatches recorded into one command buffer (one submit, one wait).
constexpr size_t kDispatchesPerSubmit = 64;

const char* resultName(VkResult r) {
  switch (r) {
#define TAPELAB_VK_CASE(x) \
  case x: return #x;
    TAPELAB_VK_CASE(VK_SUCCESS)
    TAPELAB_VK_CASE(VK_NOT_READY)
    TAPELAB_VK_CASE(VK_TIMEOUT)
    TAPELAB_VK_CASE(VK_INCOMPLETE)
    TAPELAB_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    TAPELAB_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TAPELAB_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    TAPELAB_VK_CASE(VK_ERROR_DEVICE_LOST)
    TAPELAB_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    TAPELAB_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    TAPELAB_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    TAPELAB_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    TAPELAB_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    TAPELAB_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    TAPELAB_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TAPELAB_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    TAPELAB_VK_CASE(VK_ERROR_UNKNOWN)
    TAPELAB_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    TAPELAB_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef TAPELAB_VK_CASE
    default: return "VkResult error";
  }
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string("vulkan: ") + what + ": " + resultName(r) + " (" + std::to_string(r) + ")");
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string readFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return "";
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Writes atomically (temp file + rename), so two processes never see half a file.
void writeFileAtomic(const fs::path& p, const void* data, size_t bytes) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  const fs::path tmp = p.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    if (!f) return;  // a cache that cannot be written is not an error
  }
  fs::rename(tmp, p, ec);
  if (ec) fs::remove(tmp, ec);
}

// ------------------------------------------------------------------ device
struct Device {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  bool executableStats = false;   // VK_KHR_pipeline_executable_properties
  bool creationFeedback = false;  // VK_EXT_pipeline_creation_feedback
  VkPipelineCache cache = VK_NULL_HANDLE;
  fs::path cachePath;             // "" = no on-disk pipeline cache
  VkCommandPool pool = VK_NULL_HANDLE;
  std::string description;
  // Vulkan wants the command pool (and the command buffers it made, while they
  // record) and the queue externally synchronized. Kernels of one device may be
  // built and run from several threads (compare builds an engine's kernels in
  // parallel), so those uses take this lock; shaderc and pipeline creation do not.
  std::mutex mu;

  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device() {
    if (device) {
      vkDeviceWaitIdle(device);
      if (pool) vkDestroyCommandPool(device, pool, nullptr);
      if (cache) vkDestroyPipelineCache(device, cache, nullptr);
      vkDestroyDevice(device, nullptr);
    }
    if (instance) vkDestroyInstance(instance, nullptr);
  }

  void savePipelineCache() const {
    if (cachePath.empty() || !cache) return;
    size_t size = 0;
    if (vkGetPipelineCacheData(device, cache, &size, nullptr) != VK_SUCCESS || size == 0) return;
    std::vector<char> data(size);
    if (vkGetPipelineCacheData(device, cache, &size, data.data()) != VK_SUCCESS) return;
    writeFileAtomic(cachePath, data.data(), size);
  }

  uint32_t memoryType(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) const {
    for (VkMemoryPropertyFlags flags : {want, fallback})
      for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
        if ((bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & flags) == flags) return i;
    throw std::runtime_error("vulkan: no suitable memory type");
  }
};

bool hasExtension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

const char* typeName(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

// Creates the instance and device; throws EngineUnavailable with the reason.
std::shared_ptr<Device> openDeviceUncached() {
  static bool volkReady = volkInitialize() == VK_SUCCESS;
  if (!volkReady) throw EngineUnavailable("Vulkan loader (libvulkan.so.1) not found");
  auto dev = std::make_shared<Device>();
  uint32_t loaderVersion = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loaderVersion);
  if (loaderVersion < VK_API_VERSION_1_1) throw EngineUnavailable("Vulkan loader is older than 1.1");

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tapelab";
  app.pEngineName = "tapelab";
  app.apiVersion = std::min<uint32_t>(loaderVersion, VK_API_VERSION_1_3);
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  if (VkResult r = vkCreateInstance(&ici, nullptr, &dev->instance); r != VK_SUCCESS)
    throw EngineUnavailable(std::string("vkCreateInstance failed: ") + resultName(r) + " (no Vulkan driver installed?)");
  volkLoadInstanceOnly(dev->instance);

  uint32_t n = 0;
  vkEnumeratePhysicalDevices(dev->instance, &n, nullptr);
  std::vector<VkPhysicalDevice> phys(n);
  if (n) vkEnumeratePhysicalDevices(dev->instance, &n, phys.data());
  if (n == 0) throw EngineUnavailable("no Vulkan device (the loader found no driver's device)");
  std::vector<VkPhysicalDeviceProperties> props(n);
  std::string list;
  for (uint32_t i = 0; i < n; ++i) {
    vkGetPhysicalDeviceProperties(phys[i], &props[i]);
    list += (i ? ", " : "") + std::to_string(i) + " " + props[i].deviceName;
  }
  int chosen = -1;
  const char* sel = std::getenv("TAPELAB_VULKAN_DEVICE");
  if (sel && *sel) {
    const std::string s = sel;
    if (s.find_first_not_of("0123456789") == std::string::npos) {
      const unsigned long idx = std::strtoul(s.c_str(), nullptr, 10);
      if (idx < n) chosen = static_cast<int>(idx);
    } else {
      for (uint32_t i = 0; i < n && chosen < 0; ++i)
        if (lower(props[i].deviceName).find(lower(s)) != std::string::npos) chosen = static_cast<int>(i);
    }
    if (chosen < 0) throw std::invalid_argument("TAPELAB_VULKAN_DEVICE='" + s + "' matches no device (" + list + ")");
  } else {
    for (VkPhysicalDeviceType want : {VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU})
      for (uint32_t i = 0; i < n && chosen < 0; ++i)
        if (props[i].deviceType == want) chosen = static_cast<int>(i);
    if (chosen < 0) chosen = 0;
  }
  dev->phys = phys[chosen];
  dev->props = props[chosen];
  vkGetPhysicalDeviceMemoryProperties(dev->phys, &dev->memory);
  if (dev->props.apiVersion < VK_API_VERSION_1_1)
    throw EngineUnavailable(std::string(dev->props.deviceName) + " supports only Vulkan 1.0");

  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(dev->phys, &qn, nullptr);
  std::vector<VkQueueFamilyProperties> qf(qn);
  vkGetPhysicalDeviceQueueFamilyProperties(dev->phys, &qn, qf.data());
  int family = -1;
  for (uint32_t i = 0; i < qn && family < 0; ++i)
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = static_cast<int>(i);
  if (family < 0) throw EngineUnavailable(std::string(dev->props.deviceName) + " has no compute queue");
  dev->queueFamily = static_cast<uint32_t>(family);

  uint32_t en = 0;
  vkEnumerateDeviceExtensionProperties(dev->phys, nullptr, &en, nullptr);
  std::vector<VkExtensionProperties> exts(en);
  vkEnumerateDeviceExtensionProperties(dev->phys, nullptr, &en, exts.data());
  std::vector<const char*> enable;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR execFeat{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  if (hasExtension(exts, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
    feats.pNext = &execFeat;
    vkGetPhysicalDeviceFeatures2(dev->phys, &feats);
    if (execFeat.pipelineExecutableInfo) {
      enable.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
      dev->executableStats = true;
    }
  }
  if (hasExtension(exts, VK_EXT_PIPELINE_CREATION_FEEDBACK_EXTENSION_NAME)) {
    enable.push_back(VK_EXT_PIPELINE_CREATION_FEEDBACK_EXTENSION_NAME);
    dev->creationFeedback = true;
  }

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = dev->queueFamily;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(enable.size());
  dci.ppEnabledExtensionNames = enable.data();
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR execOn{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  execOn.pipelineExecutableInfo = VK_TRUE;
  if (dev->executableStats) dci.pNext = &execOn;
  if (VkResult r = vkCreateDevice(dev->phys, &dci, nullptr, &dev->device); r != VK_SUCCESS)
    throw EngineUnavailable(std::string("vkCreateDevice failed on ") + dev->props.deviceName + ": " + resultName(r));
  volkLoadDevice(dev->device);
  vkGetDeviceQueue(dev->device, dev->queueFamily, 0, &dev->queue);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = dev->queueFamily;
  check(vkCreateCommandPool(dev->device, &pci, nullptr, &dev->pool), "vkCreateCommandPool");

  // The pipeline cache file is keyed by device and driver (pipelineCacheUUID).
  std::string blob;
  if (const std::string dir = gpuCacheDir(); !dir.empty()) {
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", dev->props.pipelineCacheUUID[i]);
    char name[128];
    std::snprintf(name, sizeof name, "pipelines-%04x-%04x-%08x-%s.bin", dev->props.vendorID, dev->props.deviceID,
                  dev->props.driverVersion, uuid);
    dev->cachePath = fs::path(dir) / "vulkan" / name;
    blob = readFile(dev->cachePath);
  }
  VkPipelineCacheCreateInfo cci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  cci.initialDataSize = blob.size();
  cci.pInitialData = blob.empty() ? nullptr : blob.data();
  if (vkCreatePipelineCache(dev->device, &cci, nullptr, &dev->cache) != VK_SUCCESS) {
    cci.initialDataSize = 0;  // a stale or foreign blob: start empty
    cci.pInitialData = nullptr;
    check(vkCreatePipelineCache(dev->device, &cci, nullptr, &dev->cache), "vkCreatePipelineCache");
  }
  dev->description = std::string(dev->props.deviceName) + " (" + typeName(dev->props.deviceType) + ", Vulkan " +
                     std::to_string(VK_API_VERSION_MAJOR(dev->props.apiVersion)) + "." +
                     std::to_string(VK_API_VERSION_MINOR(dev->props.apiVersion)) + ")";
  return dev;
}

// ------------------------------------------------------------------ buffers
struct Buffer {
  std::shared_ptr<Device> dev;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize bytes = 0;
  void* mapped = nullptr;

  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { release(); }
  void release() {
    if (!dev) return;
    if (mapped) vkUnmapMemory(dev->device, memory);
    if (buffer) vkDestroyBuffer(dev->device, buffer, nullptr);
    if (memory) vkFreeMemory(dev->device, memory, nullptr);
    buffer = VK_NULL_HANDLE;
    memory = VK_NULL_HANDLE;
    mapped = nullptr;
    bytes = 0;
  }
  // hostVisible: mapped, coherent (inputs, partials); else device-local (scratch).
  void allocate(const std::shared_ptr<Device>& d, VkDeviceSize size, bool hostVisible) {
    release();
    dev = d;
    bytes = std::max<VkDeviceSize>(size, 16);
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = bytes;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(dev->device, &bci, nullptr, &buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev->device, buffer, &req);
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    mai.memoryTypeIndex = hostVisible ? dev->memoryType(req.memoryTypeBits, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, host)
                                      : dev->memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    check(vkAllocateMemory(dev->device, &mai, nullptr, &memory), "vkAllocateMemory");
    check(vkBindBufferMemory(dev->device, buffer, memory, 0), "vkBindBufferMemory");
    if (hostVisible) check(vkMapMemory(dev->device, memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
  }
};

// ------------------------------------------------------------------ compile
struct Spirv {
  std::vector<uint32_t> words;
  bool cacheHit = false;
};

Spirv compileGlsl(const std::string& source, const std::string& sourcePath) {
  static const std::string version = [] {
    unsigned int v = 0, r = 0;
    shaderc_get_spv_version(&v, &r);
    return "shaderc-spv" + std::to_string(v) + "." + std::to_string(r) + "-vk1.1-O0";
  }();
  Spirv out;
  fs::path cached;
  if (const std::string dir = gpuCacheDir(); !dir.empty()) {
    cached = fs::path(dir) / "vulkan" / ("spirv-" + contentHash(version + "\n" + source) + ".spv");
    const std::string blob = readFile(cached);
    if (!blob.empty() && blob.size() % 4 == 0) {
      out.words.resize(blob.size() / 4);
      std::memcpy(out.words.data(), blob.data(), blob.size());
      out.cacheHit = true;
      return out;
    }
  }
  shaderc_compiler_t compiler = shaderc_compiler_initialize();
  shaderc_compile_options_t options = shaderc_compile_options_initialize();
  shaderc_compile_options_set_target_env(options, shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
  // The driver optimises; spirv-opt would only add compile time.
  shaderc_compile_options_set_optimization_level(options, shaderc_optimization_level_zero);
  shaderc_compilation_result_t result = shaderc_compile_into_spv(
      compiler, source.data(), source.size(), shaderc_compute_shader, "tapelab.comp", "main", options);
  const bool ok = shaderc_result_get_compilation_status(result) == shaderc_compilation_status_success;
  std::string message = shaderc_result_get_error_message(result);
  if (ok) {
    const size_t bytes = shaderc_result_get_length(result);
    out.words.resize(bytes / 4);
    std::memcpy(out.words.data(), shaderc_result_get_bytes(result), bytes);
  }
  shaderc_result_release(result);
  shaderc_compile_options_release(options);
  shaderc_compiler_release(compiler);
  if (!ok) {
    const size_t nl = message.find('\n');
    throw std::runtime_error("vulkan: GLSL compile failed: " + message.substr(0, nl) +
                             " (source: " + sourceForError(sourcePath, "vulkan", "comp", source) + ")");
  }
  if (!cached.empty()) writeFileAtomic(cached, out.words.data(), out.words.size() * 4);
  return out;
}

// ------------------------------------------------------------------ kernel
class VulkanKernel final : public Kernel {
 public:
  VulkanKernel(std::shared_ptr<Device> dev, const Tape& tape, const KernelOptions& options) : dev_(std::move(dev)) {
    // A kernel that fails to build gives its handles back (the device lives on: a
    // long property run or `compare` goes on after a refused kernel).
    try {
      build(tape, options);
    } catch (...) {
      release();
      throw;
    }
  }

  ~VulkanKernel() override { release(); }

  KernelStats stats() const override { return stats_; }

 private:
  void build(const Tape& tape, const KernelOptions& options) {
    const auto t0 = Clock::now();
    if (options.precision == Precision::F64)
      throw std::invalid_argument("vulkan: fp64 kernels are not supported (GLSL has no double exp/log); use fp32");
    EmitOptions emit = emitOptionsFromEnvironment();
    // On a CPU device (lavapipe) compile time dominates: keep Philox rolled.
    if (!std::getenv("TAPELAB_UNROLL_DRAWS") && dev_->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
      emit.unrollDraws = false;
    emitted_ = emitKernel(tape, options, glslDialect(), emit);
    std::string dumpDir = dumpDirFor(options);
    stats_.sourcePath = dumpSource(dumpDir, std::string("vulkan-") + toString(options.kind), "comp", emitted_.source);
    const Spirv spirv = compileGlsl(emitted_.source, stats_.sourcePath);
    if (const VkResult r = createPipeline(spirv.words); r != VK_SUCCESS) {
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
    if (emitted_.kind == KernelKind::Scratch)
      stats_.scratchBytes = int64_t(emitted_.scratchSlots) * maxGroups() * emitted_.workgroupSize * int64_t(emitted_.scalarBytes());

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
    const auto t0 = Clock::now();
    const std::vector<unsigned char> in = packInputs(emitted_, inputs);
    const uint64_t first = pathOffsetFromEnvironment();
    const std::vector<Dispatch> dispatches = planDispatches(emitted_, first, paths, seed, maxGroups());
    ensureBuffers(in.size(), dispatches);
    std::memcpy(inputs_.mapped, in.data(), in.size());

    PartialSums sums(emitted_);
    const VkDeviceSize segment = segmentBytes();
    for (size_t lo = 0; lo < dispatches.size(); lo += kDispatchesPerSubmit) {
      const size_t hi = std::min(dispatches.size(), lo + kDispatchesPerSubmit);
      std::unique_lock<std::mutex> lock(dev_->mu);  // recording and submitting; not the wait
      check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
      VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
      vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
      for (size_t i = lo; i < hi; ++i) {
        const uint32_t offset = static_cast<uint32_t>((i - lo) * segment);
        vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 1, &offset);
        vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(KernelParams), &dispatches[i].params);
        vkCmdDispatch(cmd_, dispatches[i].groups, 1, 1);
        if (emitted_.kind == KernelKind::Scratch && i + 1 < hi) {
          // The next dispatch reuses the scratch buffer.
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
      check(vkWaitForFences(dev_->device, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
      check(vkResetFences(dev_->device, 1, &fence_), "vkResetFences");
      for (size_t i = lo; i < hi; ++i)
        sums.add(static_cast<const unsigned char*>(partials_.mapped) + (i - lo) * segment, dispatches[i].groups);
    }
    RunResult r = sums.finish(paths, seed);
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
  }

 private:
  uint32_t maxGroups() const {
    uint64_t g = kMaxGroupsPerDispatch;
    // A descriptor range cannot exceed maxStorageBufferRange.
    const uint64_t range = dev_->props.limits.maxStorageBufferRange;
    const uint64_t perGroupScratch = uint64_t(emitted_.scratchSlots) * emitted_.workgroupSize * 4;
    if (perGroupScratch) g = std::min<uint64_t>(g, std::max<uint64_t>(1, range / perGroupScratch));
    const uint64_t perGroupPartials = uint64_t(emitted_.partialsPerGroup()) * 4;
    g = std::min<uint64_t>(g, std::max<uint64_t>(1, range / perGroupPartials));
    return static_cast<uint32_t>(g);
  }

  VkDeviceSize segmentBytes() const {
    const VkDeviceSize align = std::max<VkDeviceSize>(16, dev_->props.limits.minStorageBufferOffsetAlignment);
    const VkDeviceSize bytes = VkDeviceSize(maxGroups()) * emitted_.partialsPerGroup() * 4;
    return (bytes + align - 1) / align * align;
  }

  void ensureBuffers(size_t inputBytes, const std::vector<Dispatch>& dispatches) {
    bool changed = false;
    if (inputs_.bytes < inputBytes || !inputs_.buffer) {
      inputs_.allocate(dev_, inputBytes, true);
      changed = true;
    }
    const size_t perSubmit = std::min(dispatches.size(), kDispatchesPerSubmit);
    const VkDeviceSize partialBytes = segmentBytes() * std::max<size_t>(1, perSubmit);
    if (partials_.bytes < partialBytes || !partials_.buffer) {
      partials_.allocate(dev_, partialBytes, true);
      changed = true;
    }
    const VkDeviceSize scratchBytes =
        VkDeviceSize(emitted_.scratchSlots) * maxGroups() * emitted_.workgroupSize * emitted_.scalarBytes();
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
  VkResult createPipeline(const std::vector<uint32_t>& words) {
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

    VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = module;
    cpi.stage.pName = "main";
    cpi.layout = layout_;
    if (dev_->executableStats) cpi.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    VkPipelineCreationFeedbackEXT feedback{}, stageFeedback{};
    VkPipelineCreationFeedbackCreateInfoEXT fci{VK_STRUCTURE_TYPE_PIPELINE_CREATION_FEEDBACK_CREATE_INFO_EXT};
    fci.pPipelineCreationFeedback = &feedback;
    fci.pipelineStageCreationFeedbackCount = 1;
    fci.pPipelineStageCreationFeedbacks = &stageFeedback;
    if (dev_->creationFeedback) cpi.pNext = &fci;
    const VkResult r = vkCreateComputePipelines(d, dev_->cache, 1, &cpi, nullptr, &pipeline_);
    vkDestroyShaderModule(d, module, nullptr);
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
        const std::string name = lower(s.name);
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

// ------------------------------------------------------------------ engine
// One instance and device per process (per device selection), shared
// by every engine and kernel: volk keeps its function pointers in globals, so
// a second instance would overwrite the first's, and drivers limit how many
// instances a process may create: NVIDIA 580 answers VK_ERROR_INCOMPATIBLE_DRIVER
// after some thirty create/destroy cycles (the H200 property runs hit it, first
// with one instance per engine, then with one per process that died with the
// last kernel). So the device lives as long as the process: held here, never
// destroyed (process exit releases it).
std::shared_ptr<Device> openDevice() {
  static std::mutex mutex;
  static auto& open = *new std::map<std::string, std::shared_ptr<Device>>;
  std::string key;  // what picks the device: our selector and the loader's driver list
  for (const char* var : {"TAPELAB_VULKAN_DEVICE", "VK_DRIVER_FILES", "VK_ICD_FILENAMES"}) {
    const char* v = std::getenv(var);
    key += std::string(v ? v : "") + '\n';
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (auto d = open[key]) return d;
  auto d = openDeviceUncached();
  open[key] = d;
  return d;
}

class VulkanEngine final : public Engine {
 public:
  std::string name() const override { return "vulkan"; }

  EngineCaps caps() const override {
    EngineCaps c;
    c.fp32 = true;
    c.fp64 = false;
    c.defaultPrecision = Precision::F32;
    c.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch};
    c.maxMarkets = 8;
    try {
      c.reason = device()->description;
      c.cpuDevice = device()->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
      c.usable = true;
    } catch (const std::exception& e) {
      c.usable = false;
      c.reason = e.what();
    }
    return c;
  }

  std::unique_ptr<Kernel> compile(const Tape& tape, const KernelOptions& options) override {
    return std::make_unique<VulkanKernel>(device(), tape, options);
  }

 private:
  std::shared_ptr<Device> device() const {
    if (!dev_ && error_.empty()) {
      try {
        dev_ = openDevice();
      } catch (const std::exception& e) {
        const std::string what = e.what();
        error_ = what.rfind("vulkan:", 0) == 0 ? what : "vulkan: " + what;
      }
    }
    if (!dev_) throw EngineUnavailable(error_);
    return dev_;
  }
  mutable std::shared_ptr<Device> dev_;
  mutable std::string error_;
};

}  // namespace

std::unique_ptr<Engine> makeVulkanEngine() { return std::make_unique<VulkanEngine>(); }

}  // namespace tapelab
