// cpu-jit kernel runtime: the kernel's types, the function context and the opaque identity.
// Kernel code, not host code: see runtime.h for how it is compiled and embedded.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <xsimd/xsimd.hpp>

// The per-tape functions of a long tape are spread over several translation
// units: they and their argument live in a named namespace; helpers are
// internal to each unit.
namespace tljit {
static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>, "declare tljit::T (double or float) first");
using UT = std::conditional_t<std::is_same_v<T, double>, std::uint64_t, std::uint32_t>;  // as wide as T

struct Ctx {
  const xsimd::batch<T>* in;  // this market's inputs, broadcast
  const xsimd::batch<T>* z;   // the batch's draws, by draw index
  xsimd::batch<T>* v;         // values shared between functions
  xsimd::batch<T>* d;         // adjoints shared between functions
  UT opaque;                  // 0 at run time
};
}  // namespace tljit

namespace {
using tljit::Ctx;
using tljit::T;
using tljit::UT;
using B = xsimd::batch<T>;
using BB = xsimd::batch_bool<T>;
using UB = xsimd::batch<UT>;
// Philox lanes: a 32-bit word per lane; for fp64 in 64-bit lanes (the high
// halves are don't-care), one path per lane as in B, so a 32x32 -> 64-bit
// product is one multiply and the words convert to T without a shuffle.
using U = xsimd::batch<std::conditional_t<std::is_same_v<T, double>, std::uint64_t, std::uint32_t>>;
using UV = typename U::value_type;
constexpr std::size_t W = B::size;      // paths per batch
constexpr std::size_t P = U::size;      // Philox words per call
static_assert(P % W == 0, "Philox width must be a multiple of the lane count");
#define TL_NOINLINE __attribute__((noinline))
#define TL_EXPORT __attribute__((visibility("default")))

// The identity, bit for bit, that the compiler cannot see through.
inline B tl_opq(const B& x, UT opaque) {
  return xsimd::bitwise_cast<B>(xsimd::bitwise_cast<UB>(x) ^ UB(opaque));
}
}  // namespace
