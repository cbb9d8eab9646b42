// Whether a driver can be loaded at all: under `ulimit -v` the Vulkan and OpenCL loaders fail to map
// their drivers (hundreds of MiB with LLVM) and report no driver and no device, which sent users looking
// for a GPU problem, or the drivers crash loading (lavapipe at 250 MB, PoCL at 400 MB: SIGSEGV). A runtime
// asks here before it loads a driver, and again when it finds none.
#pragma once
#include <string>

namespace tapelab {

// "" when the address space is not limited or still has room for a driver (384 MiB: lavapipe and PoCL
// loaded and ran the Asian with 500 MB of `ulimit -v`, crashed with 250 and 400); else
// "out of memory: the address-space limit (ulimit -v: N MiB) leaves too little to load the <api>
// driver". Engine caps' reasons starting "out of memory" are a failed run (exit 1), not an engine
// that cannot run here (api/registry.h throwUnusable).
std::string addressSpaceShortfall(const std::string& api);

}  // namespace tapelab
