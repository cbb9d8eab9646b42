#include "gpu/vulkan/device.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "engine/engine.h"
#include "gpu/host/memory.h"
#include "util/files.h"

namespace tapelab::vulkan {

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

std::string lowerCase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Device::~Device() {
  if (*lost) return;  // a stuck queue: vkDeviceWaitIdle would not return; the handles leak
  if (device) {
    vkDeviceWaitIdle(device);
    if (pool) vkDestroyCommandPool(device, pool, nullptr);
    if (cache) vkDestroyPipelineCache(device, cache, nullptr);
    vkDestroyDevice(device, nullptr);
  }
  if (instance) vkDestroyInstance(instance, nullptr);
}

void Device::savePipelineCache() const {
  if (cachePath.empty() || !cache) return;
  // Processes sharing the cache folder (a tuner's or a driver's compile jobs) each hold the file as it was
  // when their device opened: under a lock, what is on disk now is merged into this cache before it is
  // written, so the last writer no longer drops the pipelines the others added. Without the lock (an
  // unwritable folder) the file is written as before, or not at all.
  std::error_code ec;
  std::filesystem::create_directories(cachePath.parent_path(), ec);
  const std::string lockPath = (cachePath.parent_path() / ("lock-" + cachePath.filename().string())).string();
  const int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) ::close(fd);  // releases the lock
    }
  } unlock{fd};
  bool locked = false;
  if (fd >= 0)
    while (!(locked = ::flock(fd, LOCK_EX) == 0) && errno == EINTR) {
    }
  if (locked) {
    const std::string onDisk = readCacheEntry(cachePath, cacheKey).value_or("");  // never a foreign blob
    if (!onDisk.empty()) {
      VkPipelineCacheCreateInfo cci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
      cci.initialDataSize = onDisk.size();
      cci.pInitialData = onDisk.data();
      VkPipelineCache theirs = VK_NULL_HANDLE;
      if (vkCreatePipelineCache(device, &cci, nullptr, &theirs) == VK_SUCCESS) {
        vkMergePipelineCaches(device, cache, 1, &theirs);  // a failed merge leaves this cache as it was
        vkDestroyPipelineCache(device, theirs, nullptr);
      }
    }
  }
  size_t size = 0;
  if (vkGetPipelineCacheData(device, cache, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<char> data(size);
  if (vkGetPipelineCacheData(device, cache, &size, data.data()) != VK_SUCCESS) return;
  writeCacheEntry(cachePath, cacheKey, std::string_view(data.data(), size));  // an unwritable cache is ignored
}

uint32_t Device::memoryType(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) const {
  for (VkMemoryPropertyFlags flags : {want, fallback})
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & flags) == flags) return i;
  throw std::runtime_error("vulkan: no suitable memory type");
}

void Buffer::release() {
  if (!dev) return;
  if (*dev->lost) {  // the stuck work may still use the memory: leak it
    buffer = VK_NULL_HANDLE, memory = VK_NULL_HANDLE, mapped = nullptr, bytes = 0;
    return;
  }
  if (mapped) vkUnmapMemory(dev->device, memory);
  if (buffer) vkDestroyBuffer(dev->device, buffer, nullptr);
  if (memory) vkFreeMemory(dev->device, memory, nullptr);
  buffer = VK_NULL_HANDLE;
  memory = VK_NULL_HANDLE;
  mapped = nullptr;
  bytes = 0;
}

void Buffer::allocate(const std::shared_ptr<Device>& d, VkDeviceSize size, bool hostVisible) {
  release();
  dev = d;
  bytes = std::max<VkDeviceSize>(size, 16);
  // Before any allocation: a buffer larger than every heap is one line with the bytes, not a driver error.
  VkDeviceSize largestHeap = 0;
  for (uint32_t h = 0; h < d->memory.memoryHeapCount; ++h)
    largestHeap = std::max(largestHeap, d->memory.memoryHeaps[h].size);
  auto tooLarge = [&](VkDeviceSize need, VkDeviceSize have) {
    release();
    throw std::runtime_error("vulkan: a " + std::string(hostVisible ? "host-visible" : "device-local") + " buffer of " +
                             std::to_string(need) + " bytes exceeds the device's memory heap of " +
                             std::to_string(have) + " bytes (" + d->description + ")");
  };
  if (bytes > largestHeap) tooLarge(bytes, largestHeap);
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
  const VkDeviceSize heap = dev->memory.memoryHeaps[dev->memory.memoryTypes[mai.memoryTypeIndex].heapIndex].size;
  if (req.size > heap) tooLarge(req.size, heap);
  check(vkAllocateMemory(dev->device, &mai, nullptr, &memory), "vkAllocateMemory");
  check(vkBindBufferMemory(dev->device, buffer, memory, 0), "vkBindBufferMemory");
  if (hostVisible) check(vkMapMemory(dev->device, memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
}

namespace {

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
std::shared_ptr<Device> openDeviceUncached(const EngineSettings& settings) {
  // Under `ulimit -v` a driver may fail to load, or crash loading: memory is said, before any of it.
  if (const std::string memory = addressSpaceShortfall("Vulkan"); !memory.empty()) throw EngineUnavailable(memory);
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
  if (VkResult r = vkCreateInstance(&ici, nullptr, &dev->instance); r != VK_SUCCESS) {
    const std::string memory = addressSpaceShortfall("Vulkan");  // ulimit -v: not a missing driver
    throw EngineUnavailable(memory.empty() ? std::string("vkCreateInstance failed: ") + resultName(r) +
                                                 " (no Vulkan driver installed?)"
                                           : memory + " (vkCreateInstance: " + resultName(r) + ")");
  }
  volkLoadInstanceOnly(dev->instance);

  uint32_t n = 0;
  vkEnumeratePhysicalDevices(dev->instance, &n, nullptr);
  std::vector<VkPhysicalDevice> phys(n);
  if (n) vkEnumeratePhysicalDevices(dev->instance, &n, phys.data());
  if (n == 0) {
    const std::string memory = addressSpaceShortfall("Vulkan");  // ulimit -v: the loader could not map a driver
    throw EngineUnavailable(memory.empty() ? "no Vulkan device (the loader found no driver's device)" : memory);
  }
  std::vector<VkPhysicalDeviceProperties> props(n);
  std::string list;
  for (uint32_t i = 0; i < n; ++i) {
    vkGetPhysicalDeviceProperties(phys[i], &props[i]);
    list += (i ? ", " : "") + std::to_string(i) + " " + props[i].deviceName;
  }
  int chosen = -1;
  if (const std::string& s = settings.vulkan.device; !s.empty()) {
    if (s.find_first_not_of("0123456789") == std::string::npos) {
      const unsigned long idx = std::strtoul(s.c_str(), nullptr, 10);
      if (idx < n) chosen = static_cast<int>(idx);
    } else {
      for (uint32_t i = 0; i < n && chosen < 0; ++i)
        if (lowerCase(props[i].deviceName).find(lowerCase(s)) != std::string::npos) chosen = static_cast<int>(i);
    }
    if (chosen < 0) throw std::invalid_argument("TAPELAB_VULKAN_DEVICE='" + s + "' matches no device (" + list + ")");
  } else {
    // The discrete GPUs, else the integrated ones, else every device; the deviceSlot-th of them.
    std::vector<int> candidates;
    for (VkPhysicalDeviceType want : {VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU})
      for (uint32_t i = 0; i < n && candidates.empty(); ++i)
        if (props[i].deviceType == want)
          for (uint32_t j = i; j < n; ++j)
            if (props[j].deviceType == want) candidates.push_back(static_cast<int>(j));
    if (candidates.empty())
      for (uint32_t i = 0; i < n; ++i) candidates.push_back(static_cast<int>(i));
    chosen = candidates[settings.deviceSlot % candidates.size()];
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
  if (const std::string& dir = settings.cacheDir; !dir.empty()) {
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", dev->props.pipelineCacheUUID[i]);
    char name[128];
    std::snprintf(name, sizeof name, "pipelines-%04x-%04x-%08x-%s.bin", dev->props.vendorID, dev->props.deviceID,
                  dev->props.driverVersion, uuid);
    dev->cachePath = std::filesystem::path(dir) / "vulkan" / name;
    dev->cacheKey = std::string("tapelab-vulkan-pipelines-v2|") + name + "|" + dev->props.deviceName;
    blob = readCacheEntry(dev->cachePath, dev->cacheKey).value_or("");  // never a damaged or foreign blob to the driver
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

}  // namespace

// One instance and device per process (per device selection), shared
// by every engine and kernel: volk keeps its function pointers in globals, so
// a second instance would overwrite the first's, and drivers limit how many
// instances a process may create: NVIDIA 580 answers VK_ERROR_INCOMPATIBLE_DRIVER
// after some thirty create/destroy cycles (the H200 property runs hit it, first
// with one instance per engine, then with one per process that died with the
// last kernel). So the device lives as long as the process: held here, never
// destroyed (process exit releases it).
std::shared_ptr<Device> openDevice(const EngineSettings& settings) {
  static std::mutex mutex;
  static auto& open = *new std::map<std::string, std::shared_ptr<Device>>;
  // What picks the device: our selector and the loader's driver list.
  const std::string key =
      settings.vulkan.device + '\n' + settings.vulkan.loaderKey + '\n' + std::to_string(settings.deviceSlot);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto d = open[key]; d && !*d->lost) return d;
  auto d = openDeviceUncached(settings);
  open[key] = d;
  return d;
}

}  // namespace tapelab::vulkan
