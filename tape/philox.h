// Philox4x32-10 (Salmon et al., Random123) and tapelab's draw mapping.
//
// A draw is a pure function of (seed, path, k); nothing is stateful, so a
// recomputed checkpoint segment gets the same dice. The mapping (version 3 of
// README's "Random numbers"), used bit-identically by every engine:
//
//   counter = { k / 4, 0, path_lo, path_hi }  (path is 64-bit, k is 32-bit)
//   key     = { seed_lo, seed_hi }            (seed is 64-bit)
//   w       = philox4x32_10(counter, key)[k % 4]
//   u       = ((w >> 9) + 0.5) * 2^-23        exact in float and double, strictly in (0,1)
//   z       = normalQuantile(u)               Acklam's rational approximation (below),
//                                             its polynomials by fused multiply-adds
//
// Draws 4g .. 4g+3 are the four words of one call (group g): an engine that
// needs several of them computes the call once. (Version 1 took word 0 of
// the call with counter {k, 0, path_lo, path_hi}: one call per draw. Version
// 2 evaluated the quantile's polynomials by separate multiplies and adds.)
//
// Using 23 bits makes u (a 24-bit odd multiple of 2^-24) exactly
// representable in fp32, so fp32 and fp64 engines see the *same* uniform;
// |z| is then at most 5.29 (u >= 2^-24). Acklam's
// quantile has relative error below 1.2e-9 in exact arithmetic: good for
// fp32 and for Monte-Carlo in fp64. It needs only log and sqrt (no trig),
// and every engine evaluates the same expression tree in the same order.
#pragma once
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace tapelab {

inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;

using Philox4x32Ctr = std::array<uint32_t, 4>;
using Philox4x32Key = std::array<uint32_t, 2>;

constexpr Philox4x32Ctr philox4x32(Philox4x32Ctr c, Philox4x32Key k, int rounds = 10) {
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) {
      k[0] += kPhiloxW0;
      k[1] += kPhiloxW1;
    }
    const uint64_t p0 = uint64_t{kPhiloxM0} * c[0];
    const uint64_t p1 = uint64_t{kPhiloxM1} * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
  }
  return c;
}

// Draws per Philox call: draw k is word k % kDrawsPerCall of call (group) k / kDrawsPerCall.
inline constexpr uint32_t kDrawsPerCall = 4;

// The four words behind draws 4g .. 4g+3 of `path` under `seed`.
constexpr Philox4x32Ctr drawGroupWords(uint64_t seed, uint64_t path, uint32_t group) {
  return philox4x32({group, 0u, static_cast<uint32_t>(path), static_cast<uint32_t>(path >> 32)},
                    {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

// The 32-bit word behind draw k of `path` under `seed`.
constexpr uint32_t drawWord(uint64_t seed, uint64_t path, uint32_t k) {
  return drawGroupWords(seed, path, k / kDrawsPerCall)[k % kDrawsPerCall];
}

// Acklam's coefficients. Central region |u - 1/2| <= 1/2 - kNormalLow.
inline constexpr double kNormalLow = 0.02425;
inline constexpr double kNormalA[6] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                       -2.759285104469687e+02, 1.383577518672690e+02,
                                       -3.066479806614716e+01, 2.506628277459239e+00};
inline constexpr double kNormalB[5] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                       -1.556989798598866e+02, 6.680131188771972e+01,
                                       -1.328068155288572e+01};
inline constexpr double kNormalC[6] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                       -2.400758277161838e+00, -2.549732539343734e+00,
                                       4.374664141464968e+00,  2.938163982698783e+00};
inline constexpr double kNormalD[4] = {7.784695709041462e-03, 3.224671290700398e-01,
                                       2.445134137142996e+00, 3.754408661907416e+00};

// u from the word, in T (exact for float and double).
template <class T>
T uniformFromWord(uint32_t w) {
  return (static_cast<T>(w >> 9) + T(0.5)) * T(1.1920928955078125e-07);  // 2^-23
}

// Horner's scheme over c[0..N), in x: c[0] x^(N-1) + ... + c[N-1], each step one fused
// multiply-add (one rounding), then "* x + 1" when endsWithOne (version 3 of the draws).
template <class T, std::size_t N>
T hornerFma(const double (&c)[N], T x, bool endsWithOne) {
  using std::fma;
  T h = T(c[0]);
  for (std::size_t i = 1; i < N; ++i) h = fma(h, x, T(c[i]));
  return endsWithOne ? fma(h, x, T(1)) : h;
}

// The standard normal quantile, evaluated in T in exactly the order every
// engine's generated code uses (Horner by fused multiply-adds, then one division).
template <class T>
T normalQuantile(T u) {
  using std::log;
  using std::sqrt;
  const T low = T(kNormalLow);
  const T high = T(1) - low;
  if (u < low || u > high) {
    const T tail = u < low ? u : T(1) - u;
    const T q = sqrt(T(-2) * log(tail));
    const T x = hornerFma(kNormalC, q, false) / hornerFma(kNormalD, q, true);
    return u < low ? x : -x;
  }
  const T q = u - T(0.5);
  const T r = q * q;
  return hornerFma(kNormalA, r, false) * q / hornerFma(kNormalB, r, true);
}

template <class T>
T drawNormal(uint64_t seed, uint64_t path, uint32_t k) {
  return normalQuantile<T>(uniformFromWord<T>(drawWord(seed, path, k)));
}

}  // namespace tapelab
