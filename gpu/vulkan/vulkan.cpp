// The Vulkan engine: caps from the device settings pick, kernels on it. The
// device and the pipeline cache: device.h; GLSL to SPIR-V: spirv.h; a kernel
// and its runs: kernel.h.
#include "gpu/vulkan/vulkan.h"

#include <stdexcept>

#include "gpu/vulkan/device.h"
#include "gpu/vulkan/kernel.h"

namespace tapelab {
namespace {

class VulkanEngine final : public Engine {
 public:
  explicit VulkanEngine(EngineSettings settings) : settings_(std::move(settings)) {}
  std::string name() const override { return "vulkan"; }

  EngineCaps caps() const override {
    EngineCaps c;
    c.perValuePlans = true;  // as register kernels (gpu/codegen: kept values at kernel scope)
    c.fp32 = true;
    c.fp64 = false;
    c.defaultPrecision = Precision::F32;
    c.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch, KernelKind::Tangent};
    c.marketOrder = true;
    c.maxMarkets = 8;
    // No bracket limit in glslang, but its and the driver's compile time grow with every level: lavapipe
    // took 1.7 s at 8 levels, 15 s at 100 on a 216-node Asian and 226 s at 64 on a 564-node one (2 busy
    // cores); the deepest built-in strategy (revolve) makes 90.
    c.maxPlanDepth = 96;
    c.maxPlanDepthWhy = "its compile time grows with every level (lavapipe: 226 s at 64 levels of a 564-node tape); "
                        "the built-in strategies nest at most 90";
    try {
      c.reason = device()->description;
      c.cpuDevice = device()->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
      c.gpu = !c.cpuDevice;
      c.usable = true;
    } catch (const std::exception& e) {
      c.usable = false;
      c.reason = e.what();
    }
    return c;
  }

  std::unique_ptr<Kernel> compile(const Tape& tape, const KernelOptions& options) override {
    return vulkan::makeVulkanKernel(device(), tape, options, settings_.cacheDir, settings_.deviceTimeout,
                                     settings_.compileTimeout);
  }

 private:
  std::shared_ptr<vulkan::Device> device() const {
    if (!dev_ && error_.empty()) {
      try {
        dev_ = vulkan::openDevice(settings_);
      } catch (const std::exception& e) {
        const std::string what = e.what();
        error_ = what.rfind("vulkan:", 0) == 0 ? what : "vulkan: " + what;
      }
    }
    if (!dev_) throw EngineUnavailable(error_);
    return dev_;
  }
  EngineSettings settings_;
  mutable std::shared_ptr<vulkan::Device> dev_;
  mutable std::string error_;
};

}  // namespace

std::unique_ptr<Engine> makeVulkanEngine(const EngineSettings& settings) {
  return std::make_unique<VulkanEngine>(settings);
}

}  // namespace tapelab
