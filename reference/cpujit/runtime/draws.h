// cpu-jit kernel runtime: the draws. Philox4x32-10 words, W paths x many draw
// indices at a time, turned into uniforms and normals with tape/philox.h's
// constants and in its order of operations, and the per-batch draw cache.
#pragma once
#include <array>
#include <cmath>

#include "reference/cpujit/runtime/math.h"
#include "tape/philox.h"

namespace {
constexpr std::uint32_t kM0 = tapelab::kPhiloxM0, kM1 = tapelab::kPhiloxM1;  // multipliers
constexpr std::uint32_t kW0 = tapelab::kPhiloxW0, kW1 = tapelab::kPhiloxW1;  // key bumps

// Acklam's coefficients in T (the same conversion as the interpreter's T(x)).
template <std::size_t N>
constexpr std::array<T, N> tl_coefficients(const double (&c)[N]) {
  std::array<T, N> r{};
  for (std::size_t i = 0; i < N; ++i) r[i] = T(c[i]);
  return r;
}
constexpr auto kA = tl_coefficients(tapelab::kNormalA);
constexpr auto kB = tl_coefficients(tapelab::kNormalB);
constexpr auto kC = tl_coefficients(tapelab::kNormalC);
constexpr auto kD = tl_coefficients(tapelab::kNormalD);
constexpr T kLow = T(tapelab::kNormalLow);

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

// tape/philox.h's normalQuantile, in two halves. The central branch for
// every lane; the tail branch (u < low or u > high) only for lanes that need
// it (each op is lane-wise, so where a lane is computed does not change it).
inline B tl_central(const B& u) {
  const B q = u - B(T(0.5));
  const B r = q * q;
  const B num =
      tl_fma(tl_fma(tl_fma(tl_fma(tl_fma(B(kA[0]), r, B(kA[1])), r, B(kA[2])), r, B(kA[3])), r, B(kA[4])), r, B(kA[5])) * q;
  const B den =
      tl_fma(tl_fma(tl_fma(tl_fma(tl_fma(B(kB[0]), r, B(kB[1])), r, B(kB[2])), r, B(kB[3])), r, B(kB[4])), r, B(T(1)));
  return num / den;
}
// tl_central of N batches, step by step across the batches: N independent
// chains in flight instead of one (the same operations on every lane).
template <std::size_t N>
inline void tl_central_n(const B* u, B* z) {
  B q[N], r[N], num[N], den[N];
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    q[i] = u[i] - B(T(0.5));
    r[i] = q[i] * q[i];
    num[i] = tl_fma(B(kA[0]), r[i], B(kA[1]));
    den[i] = tl_fma(B(kB[0]), r[i], B(kB[1]));
  }
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    num[i] = tl_fma(num[i], r[i], B(kA[2]));
    den[i] = tl_fma(den[i], r[i], B(kB[2]));
  }
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    num[i] = tl_fma(num[i], r[i], B(kA[3]));
    den[i] = tl_fma(den[i], r[i], B(kB[3]));
  }
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    num[i] = tl_fma(tl_fma(num[i], r[i], B(kA[4])), r[i], B(kA[5])) * q[i];
    den[i] = tl_fma(tl_fma(den[i], r[i], B(kB[4])), r[i], B(T(1)));
    z[i] = num[i] / den[i];
  }
}
inline BB tl_tails(const B& u) {
  const B low(kLow);
  const B high = B(T(1)) - low;
  return (u < low) | (u > high);
}
inline B tl_tail(const B& u) {
  const BB lower = u < B(kLow);
  const B tail = xsimd::select(lower, u, B(T(1)) - u);
  const B qt = xsimd::sqrt(B(T(-2)) * tl_log(tail));
  const B tn =
      tl_fma(tl_fma(tl_fma(tl_fma(tl_fma(B(kC[0]), qt, B(kC[1])), qt, B(kC[2])), qt, B(kC[3])), qt, B(kC[4])), qt, B(kC[5]));
  const B td = tl_fma(tl_fma(tl_fma(tl_fma(B(kD[0]), qt, B(kD[1])), qt, B(kD[2])), qt, B(kD[3])), qt, B(T(1)));
  const B x = tn / td;
  return xsimd::select(lower, x, -x);
}
inline B tl_quantile(const B& u) { return xsimd::select(tl_tails(u), tl_tail(u), tl_central(u)); }

// Lane l of the mask as bit l.
template <class M>  // a template, so the branches for other targets are never instantiated
inline std::uint64_t tl_bits(const M& m) {
#if XSIMD_WITH_AVX512F
  // An AVX-512 mask is an integer already (__mmask8, __mmask16); the generic
  // loop below goes through memory a lane at a time, which cost half the
  // draw cache's time.
  if constexpr (sizeof(M) <= 2) return static_cast<std::uint64_t>(static_cast<typename M::register_type>(m));
#endif
#if XSIMD_WITH_AVX
  if constexpr (sizeof(M) == 32 && std::is_same_v<T, float>) return static_cast<std::uint32_t>(_mm256_movemask_ps(m));
  if constexpr (sizeof(M) == 32 && std::is_same_v<T, double>) return static_cast<std::uint32_t>(_mm256_movemask_pd(m));
#endif
#if XSIMD_WITH_SSE2
  if constexpr (sizeof(M) == 16 && std::is_same_v<T, float>) return static_cast<std::uint32_t>(_mm_movemask_ps(m));
  if constexpr (sizeof(M) == 16 && std::is_same_v<T, double>) return static_cast<std::uint32_t>(_mm_movemask_pd(m));
#endif
  std::uint64_t bits = 0;
  for (std::size_t l = 0; l < W; ++l) bits |= std::uint64_t{m.get(l)} << l;
  return bits;
}

// Tail lanes gathered from many draws, W at a time, so the tail's log is
// paid per W tail lanes rather than per batch with any tail lane. A third of
// the batches have a tail lane, at random: with AVX-512 the lanes are
// compressed onto the list without a branch per batch (a branch mispredicted
// that often cost more than the compress), and for fp64 the list stays in
// two registers: a list in memory, written lane by lane or by a compress at
// a varying offset and read back as one vector, stalled every flush on a
// failed store-to-load forward (a tenth of the whole kernel's time).
struct TlTails {
#if XSIMD_WITH_AVX512F
  static constexpr bool kInRegisters = std::is_same_v<T, double> && sizeof(BB) == 1;
  __m512d pu = _mm512_set1_pd(0.5);      // kInRegisters: the pending lanes' u, lanes [0, n)
  __m512i pat = _mm512_setzero_si512();  // and their offsets in the draw cache
#else
  static constexpr bool kInRegisters = false;
#endif
  alignas(64) T u[2 * W];
  alignas(64) std::size_t at[2 * W];  // T offset of the lane in the draw cache
  std::size_t n = 0;                  // < W between calls
  template <class BT>  // a template, so the branches for other targets are never instantiated
  void add(const BT& uk, const BB& tails, std::size_t base, T* z) {
#if XSIMD_WITH_AVX512F
    if constexpr (kInRegisters) {
      const auto m = static_cast<__mmask8>(static_cast<typename BB::register_type>(tails));
      const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
      const __m512i idx = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(base)), iota);
      const __m512d nu = _mm512_maskz_compress_pd(m, uk);
      const __m512i nat = _mm512_maskz_compress_epi64(m, idx);
      // Lane i of the list: pending lane i below n, else new lane i - n (index 8 + i - n);
      // new lanes that do not fit move down by 8 - n.
      const __m512i shift = _mm512_set1_epi64(static_cast<long long>(W - n));
      const __m512i join = _mm512_mask_add_epi64(iota, _mm512_cmpge_epu64_mask(iota, _mm512_set1_epi64(static_cast<long long>(n))), iota, shift);
      const __m512d ju = _mm512_permutex2var_pd(pu, join, nu);
      const __m512i jat = _mm512_permutex2var_epi64(pat, join, nat);
      n += static_cast<std::size_t>(__builtin_popcount(m));
      if (n < W) {
        pu = ju;
        pat = jat;
        return;
      }
      const __m512i rest = _mm512_add_epi64(iota, shift);
      pu = _mm512_permutexvar_pd(rest, nu);
      pat = _mm512_permutexvar_epi64(rest, nat);
      n -= W;
      _mm512_i64scatter_pd(z, jat, tl_tail(BT(ju)), 8);
      return;
    }
    if constexpr (sizeof(BB) <= 2) {  // the mask is an integer (__mmask8, __mmask16)
      const auto m = static_cast<typename BB::register_type>(tails);
      const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
      const __m512i idx = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(base)), iota);
      if constexpr (std::is_same_v<T, double>) {
        _mm512_storeu_pd(u + n, _mm512_maskz_compress_pd(m, uk));
        _mm512_storeu_si512(at + n, _mm512_maskz_compress_epi64(m, idx));
      } else {
        _mm512_storeu_ps(u + n, _mm512_maskz_compress_ps(m, uk));
        const __mmask8 lo = static_cast<__mmask8>(m), hi = static_cast<__mmask8>(m >> 8);
        _mm512_storeu_si512(at + n, _mm512_maskz_compress_epi64(lo, idx));
        const __m512i idx8 = _mm512_add_epi64(idx, _mm512_set1_epi64(8));
        _mm512_storeu_si512(at + n + static_cast<std::size_t>(__builtin_popcount(lo)),
                            _mm512_maskz_compress_epi64(hi, idx8));
      }
      n += static_cast<std::size_t>(__builtin_popcount(m));
      if (n >= W) flushFull(z);
      return;
    }
#endif
    if (!xsimd::any(tails)) return;
    alignas(64) T lanes[W];
    uk.store_aligned(lanes);
    for (std::uint64_t bits = tl_bits(tails); bits != 0; bits &= bits - 1) {
      const std::size_t l = static_cast<std::size_t>(__builtin_ctzll(bits));
      u[n] = lanes[l];
      at[n] = base + l;
      if (++n == W) flushFull(z);
    }
  }
  // kInRegisters: one lane, u of the draw cache's entry `at`.
  template <class BT = B>  // a template, so the branches for other targets are never instantiated
  void push([[maybe_unused]] T uk, [[maybe_unused]] std::size_t at, [[maybe_unused]] T* z) {
#if XSIMD_WITH_AVX512F
    if constexpr (kInRegisters) {
      const auto k = static_cast<__mmask8>(1u << n);
      pu = _mm512_mask_broadcastsd_pd(pu, k, _mm_set_sd(uk));
      pat = _mm512_mask_set1_epi64(pat, k, static_cast<long long>(at));
      if (++n == W) {
        _mm512_i64scatter_pd(z, pat, tl_tail(BT(pu)), 8);
        n = 0;
      }
    }
#endif
  }
  // The first W lanes of the list; the rest move to its front.
  void flushFull(T* z) {
    alignas(64) T x[W];
    tl_tail(B::load_aligned(u)).store_aligned(x);
    for (std::size_t l = 0; l < W; ++l) z[at[l]] = x[l];
    n -= W;
    for (std::size_t l = 0; l < n; ++l) {
      u[l] = u[W + l];
      at[l] = at[W + l];
    }
  }
  // What is left, at the end.
  template <class BT = B>  // a template, so the branches for other targets are never instantiated
  void flush(T* z) {
    if (n == 0) return;
#if XSIMD_WITH_AVX512F
    if constexpr (kInRegisters) {
      const auto live = static_cast<__mmask8>((1u << n) - 1u);
      _mm512_mask_i64scatter_pd(z, live, pat, tl_tail(BT(_mm512_mask_blend_pd(live, _mm512_set1_pd(0.5), pu))), 8);
      n = 0;
      return;
    }
#endif
    for (std::size_t l = n; l < W; ++l) u[l] = T(0.5);
    alignas(64) T x[W];
    tl_tail(B::load_aligned(u)).store_aligned(x);
    for (std::size_t l = 0; l < n; ++l) z[at[l]] = x[l];
    n = 0;
  }
};

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
// past count in the last step are computed and dropped (pure functions).
static TL_NOINLINE void tl_fill_draws(B* z, std::uint64_t seed, std::uint64_t first, std::uint32_t count) {
  constexpr std::size_t G = 4;
  constexpr std::uint32_t D = TlCounters::D, N = G * D;  // draws per call vector, per step
  constexpr std::size_t C = 8;                           // quantiles in flight (more spill)
  static_assert(N % C == 0);
  const TlCounters c(seed, first);
  T* zs = reinterpret_cast<T*>(z);  // the cache as scalars, for the tail lanes
  TlTails tails;
  B u[N];
  for (std::uint32_t kb = 0; kb < count; kb += N) {
    c.uniforms<G>(kb / tapelab::kDrawsPerCall, u);
    const std::uint32_t m = count - kb < N ? count - kb : N;
    B central[N];
    for (std::uint32_t r = 0; r < m; r += C) tl_central_n<C>(u + r, central + r);
    for (std::uint32_t r = 0; r < m; ++r) z[kb + r] = central[r];
    if constexpr (TlTails::kInRegisters) {
      // One bit per lane of the step, then the ~5% set ones lane by lane: cheaper than
      // compressing every batch, of which two thirds have no tail lane.
      constexpr std::size_t L = (N * W + 63) / 64;
      std::uint64_t bits[L] = {};
      for (std::uint32_t r = 0; r < m; ++r) bits[r * W / 64] |= tl_bits(tl_tails(u[r])) << (r * W % 64);
      const T* us = reinterpret_cast<const T*>(u);
      for (std::size_t q = 0; q < L; ++q)
        for (std::uint64_t b = bits[q]; b != 0; b &= b - 1) {
          const std::size_t e = q * 64 + static_cast<std::size_t>(__builtin_ctzll(b));
          tails.push(us[e], std::size_t{kb} * W + e, zs);
        }
    } else {
      for (std::uint32_t r = 0; r < m; ++r) tails.add(u[r], tl_tails(u[r]), std::size_t{kb + r} * W, zs);
    }
  }
  tails.flush(zs);
}

// The draw cache for sparse indices: z[s] is draw ks[s], s < count (ks
// ascending, so the draws of one group are neighbours). One call vector
// serves R groups; each group's call is computed once.
static TL_NOINLINE void tl_fill_draw_list(B* z, std::uint64_t seed, std::uint64_t first, const std::uint32_t* ks,
                                          std::uint32_t count) {
  constexpr std::uint32_t R = TlCounters::R, D = TlCounters::D, per = tapelab::kDrawsPerCall;
  const TlCounters c(seed, first);
  T* zs = reinterpret_cast<T*>(z);
  TlTails tails;
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
        const B& us = u[r * per + ks[s] % per];
        z[s] = tl_central(us);
        tails.add(us, tl_tails(us), std::size_t{s} * W, zs);
      }
  }
  tails.flush(zs);
}
}  // namespace
