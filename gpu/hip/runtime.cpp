#include "gpu/hip/runtime.h"

#include <dlfcn.h>

#include <stdexcept>
#include <type_traits>

namespace tapelab::hip {
namespace {

struct Loaded {
  Runtime rt;
  bool ok = false;
  std::string why;
};

std::string errorName(const Runtime& rt, hipError_t rc) {
  const char* name = rt.hipGetErrorName ? rt.hipGetErrorName(rc) : nullptr;
  return name ? name : "hipError " + std::to_string(rc);
}

Loaded load() {
  Loaded l;
  void* lib = nullptr;
  for (const char* name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
      l.rt.library = name;
      break;
    }
  if (!lib) {
    l.why = "libamdhip64.so not found (no HIP runtime)";
    return l;
  }
  std::string missing;
  auto resolve = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
    if (!fn) missing += std::string(missing.empty() ? "" : ", ") + symbol;
  };
  Runtime& r = l.rt;
  resolve(r.hipInit, "hipInit");
  resolve(r.hipRuntimeGetVersion, "hipRuntimeGetVersion");
  resolve(r.hipGetDeviceCount, "hipGetDeviceCount");
  resolve(r.hipSetDevice, "hipSetDevice");
  resolve(r.hipDeviceGetName, "hipDeviceGetName");
  resolve(r.hipGetErrorName, "hipGetErrorName");
  resolve(r.hipGetErrorString, "hipGetErrorString");
  resolve(r.hipMemGetInfo, "hipMemGetInfo");
  resolve(r.hipMalloc, "hipMalloc");
  resolve(r.hipFree, "hipFree");
  resolve(r.hipMemcpyHtoD, "hipMemcpyHtoD");
  resolve(r.hipMemcpyDtoH, "hipMemcpyDtoH");
  resolve(r.hipDeviceSynchronize, "hipDeviceSynchronize");
  resolve(r.hipStreamQuery, "hipStreamQuery");
  resolve(r.hipModuleLoadData, "hipModuleLoadData");
  resolve(r.hipModuleUnload, "hipModuleUnload");
  resolve(r.hipModuleGetFunction, "hipModuleGetFunction");
  resolve(r.hipModuleLaunchKernel, "hipModuleLaunchKernel");
  if (!missing.empty()) {
    l.why = l.rt.library + " lacks " + missing;
    return l;
  }
  if (const hipError_t rc = r.hipInit(0); rc != 0) {
    l.why = "hipInit failed: " + errorName(r, rc) + " (no AMD GPU)";
    return l;
  }
  if (r.hipGetDeviceCount(&r.devices) != 0 || r.devices == 0) {
    l.why = "the HIP runtime reports no AMD GPU";
    return l;
  }
  l.ok = true;
  return l;
}

}  // namespace

const Runtime* runtime(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.ok && why) *why = loaded.why;
  return loaded.ok ? &loaded.rt : nullptr;
}

void check(const Runtime& rt, hipError_t rc, const std::string& what) {
  if (rc == 0) return;
  const char* text = rt.hipGetErrorString(rc);
  throw std::runtime_error("HIP: " + what + ": " + errorName(rt, rc) + ": " + (text ? text : "?"));
}

}  // namespace tapelab::hip
