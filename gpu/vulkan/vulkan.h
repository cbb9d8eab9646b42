// The Vulkan engine: GLSL from gpu/codegen compiled by shaderc at run time,
// run through volk on the device settings.vulkan.device names (index or name
// substring; default the first discrete GPU, else the first device); SPIR-V and
// pipeline caches under settings.cacheDir.
#pragma once
#include <memory>

#include "engine/engine.h"
#include "engine/settings.h"

namespace tapelab {

std::unique_ptr<Engine> makeVulkanEngine(const EngineSettings& settings);

}  // namespace tapelab
