#include "gpu/cuda/driver.h"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>

namespace tapelab::cu {
namespace {

#define TAPELAB_CU_STR2(x) #x
#define TAPELAB_CU_STR(x) TAPELAB_CU_STR2(x)  // expands cuda.h's renames first

struct Loaded {
  Driver d;
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded l;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l.why = "compile-only: libcuda.so.1 not found (no NVIDIA driver)";
    return l;
  }
  std::string missing;
#define TAPELAB_CU_RESOLVE(fn)                                               \
  l.d.fn = reinterpret_cast<decltype(l.d.fn)>(dlsym(lib, TAPELAB_CU_STR(fn))); \
  if (!l.d.fn) missing += std::string(missing.empty() ? "" : ", ") + TAPELAB_CU_STR(fn);
  TAPELAB_CU_FUNCTIONS(TAPELAB_CU_RESOLVE)
#undef TAPELAB_CU_RESOLVE
#define TAPELAB_CU_RESOLVE_OPTIONAL(fn) l.d.fn = reinterpret_cast<decltype(l.d.fn)>(dlsym(lib, TAPELAB_CU_STR(fn)));
  TAPELAB_CU_OPTIONAL_FUNCTIONS(TAPELAB_CU_RESOLVE_OPTIONAL)
#undef TAPELAB_CU_RESOLVE_OPTIONAL
  if (!missing.empty()) {
    l.why = "compile-only: libcuda.so.1 lacks " + missing + " (driver too old)";
    return l;
  }
  if (const CUresult rc = l.d.cuInit(0); rc != CUDA_SUCCESS) {
    const char* name = nullptr;
    l.d.cuGetErrorName(rc, &name);
    l.why = std::string("compile-only: cuInit failed: ") + (name ? name : "?") + " (driver present, no usable GPU)";
    return l;
  }
  int count = 0;
  if (l.d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    l.why = "compile-only: the NVIDIA driver reports no CUDA device";
    return l;
  }
  l.ok = true;
  return l;
}

}  // namespace

const Driver* driver(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.ok && why) *why = loaded.why;
  return loaded.ok ? &loaded.d : nullptr;
}

void check(const Driver& d, CUresult rc, const std::string& what) {
  if (rc == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  d.cuGetErrorName(rc, &name);
  d.cuGetErrorString(rc, &text);
  throw std::runtime_error("CUDA: " + what + ": " + (name ? name : "?") + ": " + (text ? text : "?"));
}

}  // namespace tapelab::cu
