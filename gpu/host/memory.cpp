#include "gpu/host/memory.h"

#include <sys/mman.h>
#include <sys/resource.h>

namespace tapelab {

std::string addressSpaceShortfall(const std::string& api) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return "";
  constexpr size_t kDriverBytes = size_t{384} << 20;  // free for a driver with its LLVM (memory.h says why)
  void* probe = ::mmap(nullptr, kDriverBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (probe != MAP_FAILED) {
    ::munmap(probe, kDriverBytes);
    return "";
  }
  return "out of memory: the address-space limit (ulimit -v: " + std::to_string(limit.rlim_cur >> 20) +
         " MiB) leaves too little to load the " + api + " driver";
}

}  // namespace tapelab
