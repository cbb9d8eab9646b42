// Philox4x32-10 (Salmon et al., Random123) and tapelab's draw mapping.
//
// A draw is a pure function of (seed, path, k); nothing is stateful, so a
// recomputed checkpoint segment gets the same dice. The mapping (version 4 of
// docs/tape-format.md's "Random numbers"), used bit-identically by every engine
// up to its log and sqrt:
//
//   counter = { k / 4, 0, path_lo, path_hi }  (path is 64-bit, k is 32-bit)
//   key     = { seed_lo, seed_hi }            (seed is 64-bit)
//   w[0..3] = philox4x32_10(counter, key)     the four words of group k / 4
//   draws 2p and 2p+1 (p = k / 2) are the Box-Muller pair of words a = w[2(p % 2)], b = w[2(p % 2) + 1]:
//   u       = ((a >> 9) + 0.5) * 2^-23        exact in float and double, strictly in (0,1)
//   rho     = sqrt(max(-2 log u, 0))          (the max: a log good only to an absolute error near 1)
//   n       = b >> 30                         the quadrant, 0..3
//   f       = ((b >> 9) & (2^21 - 1)) * 2^-21 + (2^-22 - 1/2)    in (-1/2, 1/2), exact
//   theta   = f * pi/2,  t = theta^2
//   s       = theta * S(t),  c = C(t)        Taylor polynomials of sin and cos to degree 11 and 12,
//                                             Horner by fused multiply-adds
//   (x, y)  = n odd ? (s, c) : (c, s)         then cos and sin of theta + n pi/2:
//   z[2p]   = rho * (n == 1 or 2 ? -x : x),   z[2p+1] = rho * (n >= 2 ? -y : y)
//
// Draws 4g .. 4g+3 are the four words of one Philox call (group g): an engine that
// needs several of them computes the call once, and a pair's two draws together.
//
// Using 23 bits makes u (a 24-bit odd multiple of 2^-24) exactly representable
// in fp32, so fp32 and fp64 engines see the *same* uniform and the same angle
// f; |z| is at most sqrt(48 ln 2) = 5.77 (u >= 2^-24). The polynomials are
// within 1e-11 of sin and cos on |theta| <= pi/4, so a draw is within ~1e-11
// of the exact Box-Muller transform of its words, and within a few ulp of
// this formula in exact arithmetic (what engines are compared against). The
// max is a no-op wherever log(u) < 0 for u < 1 (every correctly rounded or
// monotone log); a log promised only an absolute error near 1 (GLSL.std.450,
// CUDA's __logf) could return a positive value there, and the radius would be
// NaN. No branch: every lane of a GPU warp does the same
// work for every draw (version 3's normal quantile, Acklam's rational
// approximation, took a logarithm only in its tails, 4.85% of the draws, and
// so made 80% of a 32-lane warp's draws diverge; docs/tape-format.md has the
// history and the instruction counts behind the change).
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

// The version of the mapping below (docs/tape-format.md, "Random numbers"): what every result's bits
// depend on besides the tape, the inputs, the seed and the engine (caches of measurements key by it).
inline constexpr int kDrawsVersion = 4;

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

// u from the word, in T (exact for float and double).
template <class T>
T uniformFromWord(uint32_t w) {
  return (static_cast<T>(w >> 9) + T(0.5)) * T(1.1920928955078125e-07);  // 2^-23
}

// Horner's scheme over c[0..N), in x: c[0] x^(N-1) + ... + c[N-1], each step one fused
// multiply-add (one rounding), then "* x + 1" when endsWithOne.
template <class T, std::size_t N>
T hornerFma(const double (&c)[N], T x, bool endsWithOne) {
  using std::fma;
  T h = T(c[0]);
  for (std::size_t i = 1; i < N; ++i) h = fma(h, x, T(c[i]));
  return endsWithOne ? fma(h, x, T(1)) : h;
}

// Version 4's constants, doubles rounded to T where used: pi/2, and the Taylor coefficients of
// sin(x)/x and cos(x) in t = x^2, highest degree first, each polynomial ending "* t + 1".
inline constexpr double kHalfPi = 1.5707963267948966;
inline constexpr double kSinTaylor[5] = {-1.0 / 39916800, 1.0 / 362880, -1.0 / 5040, 1.0 / 120, -1.0 / 6};
inline constexpr double kCosTaylor[6] = {1.0 / 479001600, -1.0 / 3628800, 1.0 / 40320, -1.0 / 720, 1.0 / 24, -0.5};
// f's scale and offset: f = fma(T((b >> 9) & kAngleMask), 2^-21, 2^-22 - 1/2), every step exact.
inline constexpr uint32_t kAngleMask = (1u << 21) - 1u;
inline constexpr double kAngleScale = 0x1p-21;
inline constexpr double kAngleOffset = 0x1p-22 - 0.5;

template <class T>
struct NormalPair {
  T even, odd;  // draws 2p and 2p + 1
};

// cos and sin of the pair's angle theta + n pi/2 from its word b (the unit vector the radius scales),
// in T, in the order every engine's code uses.
template <class T>
NormalPair<T> boxMullerAngle(uint32_t b) {
  using std::fma;
  const uint32_t n = b >> 30;
  const T f = fma(static_cast<T>((b >> 9) & kAngleMask), T(kAngleScale), T(kAngleOffset));
  const T theta = f * T(kHalfPi);
  const T t = theta * theta;
  const T s = theta * hornerFma(kSinTaylor, t, true);
  const T c = hornerFma(kCosTaylor, t, true);
  const T x = (n & 1u) ? s : c, y = (n & 1u) ? c : s;
  return {n == 1u || n == 2u ? T(-x) : x, n >= 2u ? T(-y) : y};
}

// The Box-Muller pair of words (a, b): draws 2p and 2p + 1.
template <class T>
NormalPair<T> boxMuller(uint32_t a, uint32_t b) {
  using std::log;
  using std::sqrt;
  const T r2 = T(-2) * log(uniformFromWord<T>(a));
  const T rho = sqrt(r2 > T(0) ? r2 : T(0));
  const NormalPair<T> unit = boxMullerAngle<T>(b);
  return {T(rho * unit.even), T(rho * unit.odd)};
}

// The first of the two words of draw k's pair in its group: 0 for draws 4g and 4g+1, 2 for 4g+2 and 4g+3.
constexpr uint32_t pairFirstWord(uint32_t k) { return k % kDrawsPerCall & 2u; }

// The pair draw k belongs to (draws k & ~1 and k | 1) of `path` under `seed`.
template <class T>
NormalPair<T> drawPair(uint64_t seed, uint64_t path, uint32_t k) {
  const Philox4x32Ctr w = drawGroupWords(seed, path, k / kDrawsPerCall);
  return boxMuller<T>(w[pairFirstWord(k)], w[pairFirstWord(k) + 1]);
}

// Draw k of `path` under `seed`.
template <class T>
T drawNormal(uint64_t seed, uint64_t path, uint32_t k) {
  const NormalPair<T> pair = drawPair<T>(seed, path, k);
  return k % 2 ? pair.odd : pair.even;
}

}  // namespace tapelab
