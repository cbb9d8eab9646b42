// One Vulkan compute kernel: the emitter's GLSL, compiled to SPIR-V
// (spirv.h), a pipeline on the device (device.h), and its runs: chunked
// dispatches recorded several to a command buffer (gpu/host/dispatch.h's loop),
// statistics from the driver where it reports them.
#pragma once
#include <memory>
#include <string>

#include "engine/engine.h"
#include "gpu/vulkan/device.h"
#include "tape/tape.h"

namespace tapelab::vulkan {

// Throws std::invalid_argument for what the engine cannot build (fp64, no plan),
// std::runtime_error naming a file with the GLSL when a compiler refuses it. Its runs wait
// at most `deviceTimeout` seconds per submit (0 = no limit), else throw DeviceTimeout; its compile
// (shaderc, then the driver's pipeline) takes at most `compileTimeout` seconds, else CompileTimeout
// (engine/compile_watch.h) and the device, whose driver may still be compiling, is abandoned.
std::unique_ptr<Kernel> makeVulkanKernel(std::shared_ptr<Device> device, const Tape& tape, const KernelOptions& options,
                                         const std::string& cacheDir, double deviceTimeout, double compileTimeout);

}  // namespace tapelab::vulkan
