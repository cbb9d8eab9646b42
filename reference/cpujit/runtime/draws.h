// cpu-jit kernel runtime: the draws. Philox4x32-10 words, W paths x many draw
// indices at a time, turned into uniforms and Box-Muller pairs of normals with
// tape/philox.h's constants and in its order of operations, and the per-batch draw cache.
#pragma once
#include <array>
#include <cmath>

#include "reference/cpujit/runtime/math.h"
#include "tape/philox.h"

namespace {
constexpr std::uint32_t kM0 = tapelab::kPhiloxM0, kM1 = tapelab::kPhiloxM1;  // multipliers
constexpr std::uint32_t kW0 = tapelab::kPhiloxW0, kW1 = tapelab::kPhiloxW1;  // key bumps

// tape/philox.h's version-4 constants in T (the same conversion as the interpreter's T(x)).
template <std::size_t N>
constexpr std::array<T, N> tl_coefficients(const double (&c)[N]) {
  std::array<T, N> r{};
  for (std::size_t i = 0; i < N; ++i) r[i] = T(c[i]);
  return r;
}
constexpr auto kSinT = tl_coefficients(tapelab::kSinTaylor);
constexpr auto kCosT = tl_coefficients(tapelab::kCosTaylor);

// x * y + z with one rounding (tape/philox.h's std::fma): the FMA instruction where the target has
// one, else std::fma per lane (correctly rounded by libm, if slowly). Not xsimd::fma: Debian 12's
// xsimd computes x * y + z, two roundings, on avx512bw and on targets without FMA.
template <class BT>  // a template, so the branches for other targets are never instantiated
inline BT tl_fma(const BT& x, const BT& y, const BT& z) {
  using V = typename BT::value_type;
#if XSIMD_WITH_AVX512F
  if constexpr (sizeof(BT) == 64 && std::is_same_v<V, double>) return BT(_mm512_fmadd_pd(x, y, z));
  if constexpr (sizeof(BT) == 64 && std::is_same_v<V, float>) return BT(_mm512_fmadd_ps(x, y, z));
#endif
#if defined(__FMA__)
  if constexpr (sizeof(BT) == 32 && std::is_same_v<V, double>) return BT(_mm256_fmadd_pd(x, y, z));
  if constexpr (sizeof(BT) == 32 && std::is_same_v<V, float>) return BT(_mm256_fmadd_ps(x, y, z));
  if constexpr (sizeof(BT) == 16 && std::is_same_v<V, double>) return BT(_mm_fmadd_pd(x, y, z));
  if constexpr (sizeof(BT) == 16 && std::is_same_v<V, float>) return BT(_mm_fmadd_ps(x, y, z));
#endif
  alignas(64) V a[BT::size], b[BT::size], c[BT::size];
  x.store_aligned(a);
  y.store_aligned(b);
  z.store_aligned(c);
  for (std::size_t l = 0; l < BT::size; ++l) a[l] = std::fma(a[l], b[l], c[l]);
  return BT::load_aligned(a);
}

// 32x32 -> 64-bit products per lane. 64-bit lanes (fp64): the product of
// the low halves, hi its top half, lo the whole (only its low half counts).
template <class V>
inline void tl_mulhilo(std::uint32_t m, const V& a, V& hi, V& lo) {
  if constexpr (sizeof(typename V::value_type) == 8) {
#if XSIMD_WITH_AVX512F
    if constexpr (sizeof(V) == 64) lo = V(_mm512_mul_epu32(a, _mm512_set1_epi64(m)));
#endif
#if XSIMD_WITH_AVX2
    if constexpr (sizeof(V) == 32) lo = V(_mm256_mul_epu32(a, _mm256_set1_epi64x(m)));
#endif
#if XSIMD_WITH_SSE2
    if constexpr (sizeof(V) == 16) lo = V(_mm_mul_epu32(a, _mm_set1_epi64x(m)));
#endif
    if constexpr (!(XSIMD_WITH_SSE2 && sizeof(V) == 16) && !(XSIMD_WITH_AVX2 && sizeof(V) == 32) &&
                  !(XSIMD_WITH_AVX512F && sizeof(V) == 64))
      lo = (a & V(0xFFFFFFFFu)) * V(m);
    hi = lo >> 32;
    return;
  } else {
#if XSIMD_WITH_AVX512F
    if constexpr (sizeof(V) == 64) {
      const __m512i mm = _mm512_set1_epi64(m), x = a;
      const __m512i pe = _mm512_mul_epu32(x, mm), po = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), mm);
      hi = V(_mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(pe, 32), po));
      lo = V(_mm512_mullo_epi32(x, _mm512_set1_epi32(static_cast<int>(m))));
      return;
    }
#endif
#if XSIMD_WITH_AVX2
    if constexpr (sizeof(V) == 32) {
      const __m256i mm = _mm256_set1_epi64x(m), x = a;
      const __m256i pe = _mm256_mul_epu32(x, mm), po = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), mm);
      hi = V(_mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA));
      lo = V(_mm256_mullo_epi32(x, _mm256_set1_epi32(static_cast<int>(m))));
      return;
    }
#endif
#if XSIMD_WITH_SSE4_1
    if constexpr (sizeof(V) == 16) {
      const __m128i mm = _mm_set1_epi64x(m), x = a;
      const __m128i pe = _mm_mul_epu32(x, mm), po = _mm_mul_epu32(_mm_srli_epi64(x, 32), mm);
      hi = V(_mm_blend_epi16(_mm_srli_epi64(pe, 32), po, 0xCC));
      lo = V(_mm_mullo_epi32(x, _mm_set1_epi32(static_cast<int>(m))));
      return;
    }
#endif
    alignas(64) std::uint32_t av[V::size], h[V::size], l[V::size];
    a.store_aligned(av);
    for (std::size_t e = 0; e < V::size; ++e) {
      const std::uint64_t prod = std::uint64_t{m} * av[e];
      h[e] = static_cast<std::uint32_t>(prod >> 32);
      l[e] = static_cast<std::uint32_t>(prod);
    }
    hi = V::load_aligned(h);
    lo = V::load_aligned(l);
  }
}

// Philox4x32-10, all four words, of G independent calls at once (the rounds
// of one call are a chain of multiplies; G chains interleaved keep the
// multipliers busy). Call g has counters {c0[g], 0, c2, c3} and key {k0, k1};
// its words are out[4g .. 4g+3].
template <std::size_t G>
inline void tl_philox_words(const U* c0in, const U& c2in, const U& c3in, std::uint32_t k0, std::uint32_t k1, U* out) {
  U c0[G], c1[G], c2[G], c3[G];
#pragma GCC unroll 16
  for (std::size_t g = 0; g < G; ++g) {
    c0[g] = c0in[g];
    c1[g] = U(0u);
    c2[g] = c2in;
    c3[g] = c3in;
  }
#pragma GCC unroll 10
  for (int r = 0; r < 10; ++r) {
    const U key0(k0 + static_cast<std::uint32_t>(r) * kW0), key1(k1 + static_cast<std::uint32_t>(r) * kW1);
#pragma GCC unroll 16
    for (std::size_t g = 0; g < G; ++g) {
      U hi0, lo0, hi1, lo1;
      tl_mulhilo(kM0, c0[g], hi0, lo0);
      tl_mulhilo(kM1, c2[g], hi1, lo1);
      c0[g] = hi1 ^ c1[g] ^ key0;
      c1[g] = lo1;
      c2[g] = hi0 ^ c3[g] ^ key1;
      c3[g] = lo0;
    }
  }
#pragma GCC unroll 16
  for (std::size_t g = 0; g < G; ++g) {
    out[4 * g] = c0[g];
    out[4 * g + 1] = c1[g];
    out[4 * g + 2] = c2[g];
    out[4 * g + 3] = c3[g];
  }
}

// The P/W batches of uniforms u = ((w >> 9) + 0.5) * 2^-23 in one vector of
// words (w >> 9 < 2^23: exact in T); lanes e give batch e / W, stored at
// u[(e / W) * stride].
template <class BT>  // a template, so the branches for other targets are never instantiated
inline void tl_uniforms(const U& words, BT* u, std::size_t stride) {
  const BT half(T(0.5)), scale(T(1.1920928955078125e-07));
  if constexpr (sizeof(UV) == 8) {
    // (w >> 9) + 0.5 exactly: the 23 bits under 2^52's exponent are 2^52 + (w >> 9), and
    // 2^52 - 0.5 is a double; the difference is exact. Then the same multiply.
    const U bits = ((words >> 9) & U(0x7FFFFFu)) | U(0x4330000000000000u);
    u[0] = (xsimd::bitwise_cast<BT>(bits) - BT(T(4503599627370495.5))) * scale;
    return;
  }
  const U shifted = words >> 9;
  if constexpr (std::is_same_v<T, float> && P == W) {
    u[0] = (xsimd::batch_cast<T>(xsimd::bitwise_cast<xsimd::batch<std::int32_t>>(shifted)) + half) * scale;
    return;
  }
  alignas(64) UV w[P];
  shifted.store_aligned(w);
  for (std::size_t r = 0; r < P / W; ++r) {
    alignas(64) T t[W];
    for (std::size_t l = 0; l < W; ++l) t[l] = static_cast<T>(static_cast<std::int32_t>(w[r * W + l]));
    u[r * stride] = (BT::load_aligned(t) + half) * scale;
  }
}

// Horner's scheme over c by tl_fma, then "* x + 1" (tape/philox.h's hornerFma).
template <std::size_t N>
inline B tl_horner1(const std::array<T, N>& c, const B& x) {
  B h(c[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i < N; ++i) h = tl_fma(h, x, B(c[i]));
  return tl_fma(h, x, B(T(1)));
}

// tape/philox.h's boxMuller of N pairs from their uniforms, step by step across them: N independent chains in
// flight instead of one (the log, out of line in tl_log, is a chain of some forty dependent steps). u and z
// hold 2N batches in draw order: each pair's first uniform gives the radius, its second the angle, whose
// quadrant n and offset f the word gives as floor(4 u) and 4 u - n - 1/2 (every step exact: the same n and
// f as philox.h's integer form, u being (b >> 9) * 2^-23 + 2^-24). The same operations in the same order on
// every lane; only the log is xsimd's (not libm's), a few ulp apart (xsimd::log inline here is tl_log's own
// function: the same bits).
template <std::size_t N>
[[gnu::flatten]] inline void tl_boxMuller_n(const B* u, B* z) {  // flatten: xsimd::log inline, interleaved
  B rho[N];
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) rho[i] = xsimd::log(u[2 * i]);
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    const B r2 = B(T(-2)) * rho[i];
    rho[i] = xsimd::sqrt(xsimd::select(r2 > B(T(0)), r2, B(T(0))));  // philox.h's max(r2, 0)
  }
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    const B a = B(T(4)) * u[2 * i + 1];
    const B n = xsimd::floor(a);
    const B f = (a - n) - B(T(0.5));
    const B theta = f * B(T(tapelab::kHalfPi));
    const B t = theta * theta;
    const B s = theta * tl_horner1(kSinT, t);
    const B c = tl_horner1(kCosT, t);
    const BB isOdd = (n == B(T(1))) | (n == B(T(3)));
    const B x = xsimd::select(isOdd, s, c), y = xsimd::select(isOdd, c, s);
    z[2 * i] = rho[i] * xsimd::select((n == B(T(1))) | (n == B(T(2))), -x, x);
    z[2 * i + 1] = rho[i] * xsimd::select(n >= B(T(2)), -y, y);
  }
}

// One pair: tl_boxMuller_n's operations for N = 1.
inline void tl_boxMuller(const B& ua, const B& ub, B& even, B& odd) {
  const B u[2] = {ua, ub};
  B z[2];
  tl_boxMuller_n<1>(u, z);
  even = z[0];
  odd = z[1];
}

// Counters of Philox calls: lane e is path first + e % W, group gbase + e / W
// (draws 4(gbase + e / W) .. +3, one per word: tape/philox.h).
struct TlCounters {
  static constexpr std::uint32_t R = static_cast<std::uint32_t>(P / W);  // groups per call vector
  static constexpr std::uint32_t D = tapelab::kDrawsPerCall * R;          // draws per call vector
  U off, plo, phi;
  std::uint32_t k0, k1;
  TlCounters(std::uint64_t seed, std::uint64_t first) {
    alignas(64) UV o[P], lo[P], hi[P];
    for (std::size_t e = 0; e < P; ++e) {
      const std::uint64_t path = first + e % W;
      o[e] = static_cast<std::uint32_t>(e / W);
      lo[e] = static_cast<std::uint32_t>(path);
      hi[e] = static_cast<std::uint32_t>(path >> 32);
    }
    off = U::load_aligned(o);
    plo = U::load_aligned(lo);
    phi = U::load_aligned(hi);
    k0 = static_cast<std::uint32_t>(seed);
    k1 = static_cast<std::uint32_t>(seed >> 32);
  }
  // Uniforms of calls c0[0 .. G-1]: u[(g*R + r)*4 + j] is word j of lanes
  // r*W .. r*W + W-1 of call g, one batch each.
  template <std::size_t G>
  void uniformsOf(const U* c0, B* u) const {
    U w[4 * G];
    tl_philox_words<G>(c0, plo, phi, k0, k1, w);
#pragma GCC unroll 16
    for (std::size_t g = 0; g < G; ++g)
#pragma GCC unroll 4
      for (std::size_t j = 0; j < 4; ++j) tl_uniforms(w[4 * g + j], u + g * D + j, 4);
  }
  // Uniforms of draws 4*gbase .. 4*gbase + G*D - 1, one batch each, in draw order.
  template <std::size_t G>
  void uniforms(std::uint32_t gbase, B* u) const {
    U c0[G];
#pragma GCC unroll 16
    for (std::size_t g = 0; g < G; ++g) c0[g] = U(gbase + static_cast<std::uint32_t>(g) * R) + off;
    uniformsOf<G>(c0, u);
  }
};

// The draw cache: z[k], k < count, of paths first .. first + W - 1. Draws
// past count in the last step (and a last pair's second draw) are computed and
// dropped (pure functions; the cache has room for them).
static TL_NOINLINE void tl_fill_draws(B* z, std::uint64_t seed, std::uint64_t first, std::uint32_t count) {
  constexpr std::size_t G = 4;
  constexpr std::uint32_t D = TlCounters::D, N = G * D;  // draws per call vector, per step
  constexpr std::uint32_t C = 4;                         // pairs in flight
  static_assert(N % (2 * C) == 0);
  const TlCounters c(seed, first);
  B u[N];
  for (std::uint32_t kb = 0; kb < count; kb += N) {
    c.uniforms<G>(kb / tapelab::kDrawsPerCall, u);
    const std::uint32_t m = count - kb < N ? count - kb : N;
    std::uint32_t r = 0;
    for (; r + 2 * C <= m; r += 2 * C) tl_boxMuller_n<C>(u + r, z + kb + r);
    for (; r < m; r += 2) tl_boxMuller(u[r], u[r + 1], z[kb + r], z[kb + r + 1]);
  }
}

// The draw cache for sparse indices: z[s] is draw ks[s], s < count (ks
// ascending, so the draws of one group are neighbours, and a pair's too:
// its two draws computed once). One call vector serves R groups; each group's call is computed once.
static TL_NOINLINE void tl_fill_draw_list(B* z, std::uint64_t seed, std::uint64_t first, const std::uint32_t* ks,
                                          std::uint32_t count) {
  constexpr std::uint32_t R = TlCounters::R, D = TlCounters::D, per = tapelab::kDrawsPerCall;
  const TlCounters c(seed, first);
  B u[D];
  for (std::uint32_t s = 0; s < count;) {
    // The next R groups the list reads (the last one again where fewer are left).
    alignas(64) UV groups[P];
    std::uint32_t ends[R], n = 0, t = s;
    while (t < count && n < R) {
      const std::uint32_t g = ks[t] / per;
      while (t < count && ks[t] / per == g) ++t;
      for (std::size_t l = 0; l < W; ++l) groups[n * W + l] = g;
      ends[n++] = t;
    }
    for (std::size_t e = n * W; e < P; ++e) groups[e] = groups[e - W];
    const U c0 = U::load_aligned(groups);
    c.uniformsOf<1>(&c0, u);
    for (std::uint32_t r = 0; r < n; ++r)
      for (; s < ends[r]; ++s) {
        const std::uint32_t k = ks[s], at = r * per + tapelab::pairFirstWord(k);
        B even, odd;
        tl_boxMuller(u[at], u[at + 1], even, odd);
        z[s] = k % 2 ? odd : even;
        if (k % 2 == 0 && s + 1 < ends[r] && ks[s + 1] == k + 1) z[++s] = odd;  // the pair's other draw, next
      }
  }
}
}  // namespace
