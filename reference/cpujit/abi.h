// The interface between cpu-jit's host code and a generated shared object.
// Both sides compile this header: the host includes it, and its text is
// embedded in every kernel (runtime/driver.h includes it), so they always
// agree on the argument struct's layout.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tapelab::jitabi {

struct JitBlockArgs {
  const void* inputs;     // markets x inputs values, already in the kernel's precision
  std::uint64_t markets;
  std::uint64_t seed;
  std::uint64_t lo, hi;   // the block's paths [lo, hi)
  std::uint64_t opaque;   // 0 at run time; unknown to the compiler
  void* workspace;        // tapelab_cpujit_workspace(markets) bytes
  double* partial;        // markets x 2 x (1 + inputs): sums, then sums of squares
};

inline constexpr int kVersion = 1;

// Exported by every generated object (extern "C"):
using AbiFn = int (*)();                                   // tapelab_cpujit_abi: kVersion
using NameFn = const char* (*)();                          // tapelab_cpujit_arch: xsimd arch name
using LanesFn = int (*)();                                 // tapelab_cpujit_lanes: paths per batch
using WorkspaceFn = std::size_t (*)(std::size_t markets);  // tapelab_cpujit_workspace
using BlockFn = void (*)(const JitBlockArgs*);             // tapelab_cpujit_block
// tapelab_cpujit_draw(seed, firstPath, k, u, z): uniforms and normals of draw k
// for paths firstPath .. firstPath+lanes-1 (u, z point to `lanes` values of T).
using DrawFn = void (*)(std::uint64_t, std::uint64_t, std::uint32_t, void*, void*);

}  // namespace tapelab::jitabi
