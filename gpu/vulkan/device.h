// The Vulkan device under the vulkan engine: volk, the instance, device choice,
// the compute queue and command pool, memory types and buffers, and the
// driver's pipeline cache kept on disk. Nothing here knows about tapes.
#pragma once
#include <volk.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/settings.h"
#include "gpu/host/watchdog.h"

namespace tapelab::vulkan {

const char* resultName(VkResult r);
// Throws std::runtime_error("vulkan: <what>: <result>") unless r == VK_SUCCESS.
void check(VkResult r, const char* what);
std::string lowerCase(std::string s);

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
  std::filesystem::path cachePath;  // "" = no on-disk pipeline cache
  std::string cacheKey;             // what its entry holds and is compared with (util/files.h)
  VkCommandPool pool = VK_NULL_HANDLE;
  std::string description;
  // Set when a wait on this device passed TAPELAB_DEVICE_TIMEOUT (gpu/host/watchdog.h): nothing on it
  // is waited for or destroyed again (its work may never finish), and openDevice opens another.
  DeviceLostFlag lost = makeDeviceLostFlag();
  // Vulkan wants the command pool (and the command buffers it made, while they
  // record) and the queue externally synchronized. Kernels of one device may be
  // built and run from several threads (compare builds an engine's kernels in
  // parallel), so those uses take this lock; shaderc and pipeline creation do not.
  std::mutex mu;

  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();

  // Writes the driver's pipeline cache to its file (when it has one).
  void savePipelineCache() const;
  // The first memory type in `bits` with the `want` flags, else the `fallback` ones.
  uint32_t memoryType(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) const;
};

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
  void release();
  // hostVisible: mapped, coherent (inputs, partials); else device-local (scratch).
  void allocate(const std::shared_ptr<Device>& d, VkDeviceSize size, bool hostVisible);
};

// The device settings.vulkan picks (index or name substring; "" = the first
// discrete GPU, else the first device), with its pipeline cache under
// settings.cacheDir/vulkan. One per process and selection, never destroyed (see
// device.cpp; one that was lost is replaced). Throws EngineUnavailable with the reason when there is none, and
// std::invalid_argument naming TAPELAB_VULKAN_DEVICE when the selector matches none.
std::shared_ptr<Device> openDevice(const EngineSettings& settings);

}  // namespace tapelab::vulkan
