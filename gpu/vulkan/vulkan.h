// The Vulkan engine: GLSL from gpu/codegen compiled by shaderc at run time,
// run through volk on the device TAPELAB_VULKAN_DEVICE names (index or name
// substring; default the first discrete GPU, else the first device).
#pragma once
#include <memory>

#include "api/engine.h"

namespace tapelab {

std::unique_ptr<Engine> makeVulkanEngine();

}  // namespace tapelab
