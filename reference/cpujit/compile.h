// Compiling generated C++ into a shared object and loading it, with an
// on-disk cache.
//
// The compiler is EngineSettings::cpuJit.compiler (TAPELAB_CXX; `c++`), run as
//   c++ -O2 -march=native -ffp-contract=off -fno-fast-math -fPIC -std=c++20 -w
//       -fvisibility=hidden -I<xsimd> [-c part.cpp | -shared]
// The cache is the cpujit/ folder of EngineSettings::cacheDir (TAPELAB_CACHE_DIR;
// ~/.cache/tapelab), or $TMPDIR/tapelab-cpujit without one; an object is named
// by a hash of the source, the flags and the compiler's identity (its
// predefined macros under -march=native: version and target features), so a
// second process, or a second Engine, loads it without compiling. The first
// compile also leaves a precompiled xsimd header there (TAPELAB_JIT_PCH=0
// turns that off); it only makes compiles faster.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/settings.h"

namespace tapelab {

struct JitLibrary {
  std::shared_ptr<void> handle;  // dlopen handle; dlclose on release
  std::string sourcePath;        // the source in the cache (the first part)
  std::string libraryPath;
  bool cacheHit = false;
  void* symbol(const char* name) const;  // throws std::runtime_error when missing
};

// The compiler, its options and the folder of compiled objects (created on demand).
struct JitToolchain {
  std::string compiler = "c++";
  bool precompiledHeader = true;
  std::string cacheDir;
  double compileTimeout = 0;  // EngineSettings::compileTimeout: the compiler is ended past it (0 = none)
  std::string subject;        // the kernel in progress lines and errors ("" = "the kernel " + hint)
};
JitToolchain jitToolchain(const EngineSettings& settings);

// Whether `compiler` runs here; reason names it, or says why not.
bool jitCompilerUsable(const std::string& compiler, std::string& reason);

// Finds the translation units `parts` in the cache or compiles them (in
// parallel, one compiler per core) and links them into one shared object;
// loads it. `hint` names the files (letters, digits, '-' kept). Throws
// std::runtime_error with one line (naming the source file) when the compiler
// fails or the object cannot be loaded; CompileTimeout (engine/compile_watch.h) past
// toolchain.compileTimeout, every compiler it started ended and no temporary file left.
JitLibrary loadJit(const std::vector<std::string>& parts, const std::string& hint, const JitToolchain& toolchain);

}  // namespace tapelab
