// The kernel runtime as text, embedded at build time (reference/cpujit/CMakeLists.txt
// runs cmake/EmbedHeaders.cmake): runtime/runtime.h and runtime/driver.h, each
// with its in-tree includes inlined once, so a kernel needs only xsimd and the
// standard library where it is compiled.
#pragma once

namespace tapelab::cpujit {

extern const char kRuntimeText[];  // runtime/runtime.h (with tape/philox.h): starts every translation unit
extern const char kDriverText[];   // runtime/driver.h (with abi.h): ends the first one, after the tape

}  // namespace tapelab::cpujit
