#include "api/registry.h"

#include <stdexcept>

#include "reference/reference.h"
#ifdef TAPELAB_HAVE_CPUJIT
#include "reference/cpujit/cpujit.h"
#endif
#ifdef TAPELAB_HAVE_VULKAN
#include "gpu/vulkan/vulkan.h"
#endif
#ifdef TAPELAB_HAVE_OPENCL
#include "gpu/opencl/opencl.h"
#endif
#ifdef TAPELAB_HAVE_CUDA
#include "gpu/cuda/cuda.h"
#endif
#ifdef TAPELAB_HAVE_HIP
#include "gpu/hip/hip.h"
#endif

namespace tapelab {

const std::vector<EngineEntry>& engineRegistry() {
  static const std::vector<EngineEntry> entries = [] {
    std::vector<EngineEntry> e;
    e.push_back({"reference", "interpreter, double: the living definition",
                 [](const EngineSettings& s) { return makeReferenceEngine(ReferenceScalar::Double, s); }, ""});
    e.push_back({"reference-f32", "interpreter, float",
                 [](const EngineSettings& s) { return makeReferenceEngine(ReferenceScalar::Float, s); }, ""});
    e.push_back({"reference-mp", "interpreter, Boost.Multiprecision cpp_bin_float_50",
                 [](const EngineSettings& s) { return makeReferenceEngine(ReferenceScalar::Multiprecision, s); }, ""});
#ifdef TAPELAB_HAVE_CPUJIT
    e.push_back({"cpu-jit", "C++ with xsimd, compiled at run time, one SIMD lane per path", makeCpuJitEngine, ""});
#else
    e.push_back({"cpu-jit", "C++ with xsimd, compiled at run time", nullptr, "built without cpu-jit (xsimd not found at configure time)"});
#endif
#ifdef TAPELAB_HAVE_VULKAN
    e.push_back({"vulkan", "GLSL compute via shaderc, run through volk", makeVulkanEngine, ""});
#else
    e.push_back({"vulkan", "GLSL compute via shaderc", nullptr, "built without Vulkan (libvulkan-dev, libvulkan-volk-dev or libshaderc-dev missing at configure time)"});
#endif
#ifdef TAPELAB_HAVE_OPENCL
    e.push_back({"opencl", "OpenCL C through the ICD loader", makeOpenCLEngine, ""});
#else
    e.push_back({"opencl", "OpenCL C through the ICD loader", nullptr, "built without OpenCL (ocl-icd-opencl-dev missing at configure time)"});
#endif
#ifdef TAPELAB_HAVE_CUDA
    e.push_back({"cuda", "CUDA C via NVRTC and the driver API", makeCudaEngine, ""});
#else
    e.push_back({"cuda", "CUDA C via NVRTC and the driver API", nullptr, "built without CUDA (NVRTC not found under /usr/local/cuda at configure time)"});
#endif
#ifdef TAPELAB_HAVE_HIP
    e.push_back({"hip", "HIP C via hipcc to AMD code objects, HIP runtime loaded at run time", makeHipEngine, ""});
#else
    e.push_back({"hip", "HIP C via hipcc to AMD code objects", nullptr, "built without HIP"});
#endif
    return e;
  }();
  return entries;
}

std::vector<std::string> engineNames() {
  std::vector<std::string> names;
  for (const EngineEntry& e : engineRegistry()) names.push_back(e.name);
  return names;
}

const EngineEntry& findEngine(const std::string& name) {
  std::string known;
  for (const auto& e : engineRegistry()) {
    if (e.name == name) return e;
    known += (known.empty() ? "" : ", ") + e.name;
  }
  throw std::invalid_argument("unknown engine '" + name + "' (known: " + known + ")");
}

EngineCaps engineCaps(const EngineEntry& entry, const EngineSettings& settings) {
  if (!entry.make) {
    EngineCaps c;
    c.usable = false;
    c.reason = entry.notBuiltReason;
    return c;
  }
  try {
    return entry.make(settings)->caps();
  } catch (const std::exception& ex) {
    EngineCaps c;
    c.usable = false;
    c.reason = ex.what();
    return c;
  }
}

void throwUnusable(const std::string& name, const EngineCaps& caps) {
  const std::string line = "engine '" + name + "' is not usable here: " + caps.reason;
  if (caps.reason.find("out of memory") != std::string::npos) throw std::runtime_error(line);
  throw EngineUnavailable(line);
}

std::unique_ptr<Engine> makeEngine(const std::string& name, const EngineSettings& settings) {
  const EngineEntry& entry = findEngine(name);
  if (!entry.make) throw EngineUnavailable("engine '" + name + "' is not usable here: " + entry.notBuiltReason);
  return entry.make(settings);
}

}  // namespace tapelab
