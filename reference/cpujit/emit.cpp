#include "reference/cpujit/emit.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "reference/cpujit/abi.h"
#include "tape/philox.h"
#include "tape/spell.h"

namespace tapelab {
namespace {

std::string hexDouble(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

// T(<exact double literal>): the same conversion the interpreter's T(x) does.
std::string lit(double x) { return "T(" + hexDouble(x) + ")"; }

std::string coefficientArray(const char* name, const double* c, int count) {
  std::string s = "constexpr T " + std::string(name) + "[" + std::to_string(count) + "] = {";
  for (int i = 0; i < count; ++i) s += (i ? ", " : "") + lit(c[i]);
  return s + "};\n";
}

// Fixed text shared by every kernel: types, Philox, the normal quantile,
// the opaque identity and the math wrappers. Constants come from tape/philox.h.
std::string prelude(Precision p) {
  const bool f64 = p == Precision::F64;
  std::string s;
  s += "#include <cstddef>\n#include <cstdint>\n#include <type_traits>\n#include <xsimd/xsimd.hpp>\n\n";
  const std::string t = f64 ? "double" : "float", ut = f64 ? "std::uint64_t" : "std::uint32_t";
  // The per-tape functions of a long tape are spread over several translation
  // units: they and their argument live in a named namespace; helpers are
  // internal to each unit.
  s += "namespace tljit {\nstruct Ctx {\n";
  s += "  const xsimd::batch<" + t + ">* in;  // this market's inputs, broadcast\n";
  s += "  const xsimd::batch<" + t + ">* z;   // the batch's draws, by draw index\n";
  s += "  xsimd::batch<" + t + ">* v;         // values shared between functions\n";
  s += "  xsimd::batch<" + t + ">* d;         // adjoints shared between functions\n";
  s += "  " + ut + " opaque;                 // 0 at run time\n};\n}  // namespace tljit\n\n";
  s += "namespace {\nusing tljit::Ctx;\n";
  s += "using T = " + t + ";\n";
  s += "using UT = " + ut + ";  // as wide as T\n";
  s += R"(using B = xsimd::batch<T>;
using BB = xsimd::batch_bool<T>;
using UB = xsimd::batch<UT>;
using U = xsimd::batch<std::uint32_t>;  // Philox lanes, native width
constexpr std::size_t W = B::size;      // paths per batch
constexpr std::size_t P = U::size;      // Philox words per call
static_assert(P % W == 0, "Philox width must be a multiple of the lane count");
#define TL_NOINLINE __attribute__((noinline))
#define TL_EXPORT __attribute__((visibility("default")))


// The identity, bit for bit, that the compiler cannot see through.
inline B tl_opq(const B& x, UT opaque) {
  return xsimd::bitwise_cast<B>(xsimd::bitwise_cast<UB>(x) ^ UB(opaque));
}
// xsimd's exp and log (not libm's; see reference/cpujit/README.md).
)";
  s += "// Out of line: one copy per object, however long the tape.\n";
  if (f64)
    s += R"(// xsimd::exp's own steps (reduction, polynomial, finalize, ldexp, selects),
// except that the integer k of ldexp(c, k) comes from the 1.5*2^52 trick
// instead of xsimd's to_int, which on AVX2 is a scalar loop through memory.
// k is integral and |k| < 2^51 wherever the result is not replaced by the
// selects, so the bits are xsimd::exp's (tested).
static TL_NOINLINE B tl_exp(B a) {
  namespace xd = xsimd::kernel::detail;
  using R = xd::exp_reduction<double, typename B::arch_type, xd::exp_tag>;
  using I = xsimd::batch<std::int64_t>;
  B hi, lo, x;
  const B k = R::reduce(a, hi, lo, x);
  B c = R::approx(x);
  c = R::finalize(x, c, hi, lo);
  const B magic(T(6755399441055744.0));
  const I ki = xsimd::bitwise_cast<I>(k + magic) - xsimd::bitwise_cast<I>(magic);
  c = xsimd::select(a <= R::minlog(), B(T(0)), xsimd::ldexp(c, ki));
  return xsimd::select(a >= R::maxlog(), xsimd::constants::infinity<B>(), c);
}
)";
  else
    s += "static TL_NOINLINE B tl_exp(B a) { return xsimd::exp(a); }\n";
  s += R"(static TL_NOINLINE B tl_log(B x) { return xsimd::log(x); }
)";
  s += "constexpr std::uint32_t kM0 = " + std::to_string(kPhiloxM0) + "u, kM1 = " + std::to_string(kPhiloxM1) +
       "u, kW0 = " + std::to_string(kPhiloxW0) + "u, kW1 = " + std::to_string(kPhiloxW1) + "u;\n";
  s += coefficientArray("kA", kNormalA, 6) + coefficientArray("kB", kNormalB, 5) +
       coefficientArray("kC", kNormalC, 6) + coefficientArray("kD", kNormalD, 4);
  s += "constexpr T kLow = " + lit(kNormalLow) + ";\n";
  s += R"(
// 32x32 -> 64-bit products per lane: hi words from the even/odd 64-bit
// products, lo words from the 32-bit multiply.
template <class V>
inline void tl_mulhilo(std::uint32_t m, const V& a, V& hi, V& lo) {
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
  alignas(64) std::uint32_t av[P], h[P], l[P];
  a.store_aligned(av);
  for (std::size_t e = 0; e < P; ++e) {
    const std::uint64_t prod = std::uint64_t{m} * av[e];
    h[e] = static_cast<std::uint32_t>(prod >> 32);
    l[e] = static_cast<std::uint32_t>(prod);
  }
  hi = V::load_aligned(h);
  lo = V::load_aligned(l);
}

// Philox4x32-10, word 0, of G independent calls at once (the rounds of one
// call are a chain of multiplies; G chains interleaved keep the multipliers
// busy). Call g has counters {c0[g], 0, c2, c3} and key {k0, k1}.
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
  for (std::size_t g = 0; g < G; ++g) out[g] = c0[g];
}

// The P/W batches of uniforms u = ((w >> 9) + 0.5) * 2^-23 in one call's
// words (w >> 9 < 2^23: exact in T); lanes e of call give batch e / W.
template <class BT>  // a template, so the branches for other targets are never instantiated
inline void tl_uniforms(const U& words, BT* u) {
  const U shifted = words >> 9;
  const BT half(T(0.5)), scale(T(1.1920928955078125e-07));
  if constexpr (std::is_same_v<T, float> && P == W) {
    u[0] = (xsimd::batch_cast<T>(xsimd::bitwise_cast<xsimd::batch<std::int32_t>>(shifted)) + half) * scale;
    return;
  }
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_same_v<T, double> && sizeof(U) == 64 && P == 2 * W) {
    const __m512i x = shifted;
    u[0] = (BT(_mm512_cvtepi32_pd(_mm512_castsi512_si256(x))) + half) * scale;
    u[1] = (BT(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(x, 1))) + half) * scale;
    return;
  }
#endif
#if XSIMD_WITH_AVX2
  if constexpr (std::is_same_v<T, double> && sizeof(U) == 32 && P == 2 * W) {
    const __m256i x = shifted;
    u[0] = (BT(_mm256_cvtepi32_pd(_mm256_castsi256_si128(x))) + half) * scale;
    u[1] = (BT(_mm256_cvtepi32_pd(_mm256_extracti128_si256(x, 1))) + half) * scale;
    return;
  }
#endif
  alignas(64) std::uint32_t w[P];
  shifted.store_aligned(w);
  for (std::size_t r = 0; r < P / W; ++r) {
    alignas(64) T t[W];
    for (std::size_t l = 0; l < W; ++l) t[l] = static_cast<T>(static_cast<std::int32_t>(w[r * W + l]));
    u[r] = (BT::load_aligned(t) + half) * scale;
  }
}

// tape/philox.h's normalQuantile, in two halves. The central branch for
// every lane; the tail branch (u < low or u > high) only for lanes that need
// it (each op is lane-wise, so where a lane is computed does not change it).
inline B tl_central(const B& u) {
  const B q = u - B(T(0.5));
  const B r = q * q;
  const B num = (((((B(kA[0]) * r + B(kA[1])) * r + B(kA[2])) * r + B(kA[3])) * r + B(kA[4])) * r + B(kA[5])) * q;
  const B den = ((((B(kB[0]) * r + B(kB[1])) * r + B(kB[2])) * r + B(kB[3])) * r + B(kB[4])) * r + B(T(1));
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
    num[i] = B(kA[0]) * r[i];
    den[i] = B(kB[0]) * r[i];
  }
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    num[i] = (num[i] + B(kA[1])) * r[i];
    den[i] = (den[i] + B(kB[1])) * r[i];
  }
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    num[i] = (num[i] + B(kA[2])) * r[i];
    den[i] = (den[i] + B(kB[2])) * r[i];
  }
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    num[i] = (num[i] + B(kA[3])) * r[i];
    den[i] = (den[i] + B(kB[3])) * r[i];
  }
#pragma GCC unroll 16
  for (std::size_t i = 0; i < N; ++i) {
    num[i] = ((num[i] + B(kA[4])) * r[i] + B(kA[5])) * q[i];
    den[i] = (den[i] + B(kB[4])) * r[i] + B(T(1));
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
  const B tn = ((((B(kC[0]) * qt + B(kC[1])) * qt + B(kC[2])) * qt + B(kC[3])) * qt + B(kC[4])) * qt + B(kC[5]);
  const B td = (((B(kD[0]) * qt + B(kD[1])) * qt + B(kD[2])) * qt + B(kD[3])) * qt + B(T(1));
  const B x = tn / td;
  return xsimd::select(lower, x, -x);
}
inline B tl_quantile(const B& u) { return xsimd::select(tl_tails(u), tl_tail(u), tl_central(u)); }

// Lane l of the mask as bit l.
template <class M>  // a template, so the branches for other targets are never instantiated
inline std::uint64_t tl_bits(const M& m) {
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
// paid per W tail lanes rather than per batch with any tail lane.
struct TlTails {
  alignas(64) T u[W];
  std::size_t at[W];  // T offset of the lane in the draw cache
  std::size_t n = 0;
  void add(const B& uk, BB tails, std::size_t base, T* z) {
    alignas(64) T lanes[W];
    uk.store_aligned(lanes);
    for (std::uint64_t bits = tl_bits(tails); bits != 0; bits &= bits - 1) {
      const std::size_t l = static_cast<std::size_t>(__builtin_ctzll(bits));
      u[n] = lanes[l];
      at[n] = base + l;
      if (++n == W) flush(z);
    }
  }
  void flush(T* z) {
    if (n == 0) return;
    for (std::size_t l = n; l < W; ++l) u[l] = T(0.5);
    alignas(64) T x[W];
    tl_tail(B::load_aligned(u)).store_aligned(x);
    for (std::size_t l = 0; l < n; ++l) z[at[l]] = x[l];
    n = 0;
  }
};

// Counters of Philox calls: lane e is path first + e % W, draw kbase + e / W.
struct TlCounters {
  static constexpr std::uint32_t R = static_cast<std::uint32_t>(P / W);  // draws per call
  U off, plo, phi;
  std::uint32_t k0, k1;
  TlCounters(std::uint64_t seed, std::uint64_t first) {
    alignas(64) std::uint32_t o[P], lo[P], hi[P];
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
  // Uniforms of draws kbase .. kbase + G*R - 1, one batch each.
  template <std::size_t G>
  void uniforms(std::uint32_t kbase, B* u) const {
    U c0[G], w[G];
#pragma GCC unroll 16
    for (std::size_t g = 0; g < G; ++g) c0[g] = U(kbase + static_cast<std::uint32_t>(g) * R) + off;
    tl_philox_words<G>(c0, plo, phi, k0, k1, w);
#pragma GCC unroll 16
    for (std::size_t g = 0; g < G; ++g) tl_uniforms(w[g], u + g * R);
  }
};

// The draw cache: z[k], k < count, of paths first .. first + W - 1. Draws
// past count in the last group are computed and dropped (pure functions).
static TL_NOINLINE void tl_fill_draws(B* z, std::uint64_t seed, std::uint64_t first, std::uint32_t count) {
  constexpr std::size_t G = 4;
  constexpr std::uint32_t R = TlCounters::R;
  const TlCounters c(seed, first);
  T* zs = reinterpret_cast<T*>(z);  // the cache as scalars, for the tail lanes
  TlTails tails;
  B u[G * R];
  for (std::uint32_t kb = 0; kb < count; kb += G * R) {
    c.uniforms<G>(kb, u);
    const std::uint32_t m = count - kb < G * R ? count - kb : G * R;
    B central[G * R];
    tl_central_n<G * R>(u, central);
    for (std::uint32_t r = 0; r < m; ++r) {
      z[kb + r] = central[r];
      const BB t = tl_tails(u[r]);
      if (xsimd::any(t)) tails.add(u[r], t, std::size_t{kb + r} * W, zs);
    }
  }
  tails.flush(zs);
}

// The draw cache for sparse indices: z[s] is draw ks[s], s < count.
static TL_NOINLINE void tl_fill_draw_list(B* z, std::uint64_t seed, std::uint64_t first, const std::uint32_t* ks,
                                          std::uint32_t count) {
  constexpr std::uint32_t R = TlCounters::R;
  const TlCounters c(seed, first);
  T* zs = reinterpret_cast<T*>(z);
  TlTails tails;
  B u[R];
  for (std::uint32_t s = 0; s < count; ++s) {
    const std::uint32_t base = ks[s] / R * R;
    c.uniforms<1>(base, u);
    const B& us = u[ks[s] - base];
    z[s] = tl_central(us);
    const BB t = tl_tails(us);
    if (xsimd::any(t)) tails.add(us, t, std::size_t{s} * W, zs);
  }
  tails.flush(zs);
}

inline void tl_kahan(B& sum, B& comp, const B& x, const BB& live) {
  const B y = x - comp;
  const B t = sum + y;
  comp = xsimd::select(live, (t - sum) - y, comp);
  sum = xsimd::select(live, t, sum);
}
)";
  return s;
}

// Which work a generated function does over nodes [lo, hi).
struct Fn {
  enum Fwd { None, First, Recompute } fwd = None;
  bool rev = false;
  bool storeForReverse = false;  // keep every value an adjoint rule reads (no recompute follows)
  int32_t lo = 0, hi = 0;
  int32_t segStart = 0;          // Recompute: values before it are bookmarks, read through tl_opq
  std::string name;
};

bool isDrawOrConst(Op op) { return op == Op::Const || op == Op::Randn; }

class Emitter {
 public:
  Emitter(const Tape& t, const JitSpec& s) : t_(t), spec_(s), n_(t.size()) {}

  JitSource run() {
    planFunctions();
    analyse();
    std::ostringstream head;
    head << "// Generated by tapelab cpu-jit. Tape \"" << sanitize(t_.name) << "\": " << n_ << " nodes, "
         << t_.numInputs() << " inputs, " << draws_.size() << " draw indices; "
         << (registerKind_ ? "register-checkpointed (" + std::to_string(bounds_.size() - 1) + " segments, " +
                                 sanitize(spec_.plan->strategy) + ")"
                           : std::string("plain"))
         << ", " << (spec_.precision == Precision::F64 ? "fp64" : "fp32") << ", "
         << (spec_.greeks ? "value + adjoints" : "value only") << ", " << fns_.size() << " functions";
    // Functions go to extra translation units of about partNodes nodes each
    // (compiled in parallel) once the tape is longer than that.
    std::vector<int> partOf(fns_.size(), 0);
    int parts = 1;
    if (n_ > spec_.partNodes) {
      int64_t filled = spec_.partNodes;
      for (size_t k = 0; k < fns_.size(); ++k) {
        if (filled >= spec_.partNodes) {
          ++parts;
          filled = 0;
        }
        partOf[k] = parts - 1;
        filled += fns_[k].hi - fns_[k].lo;
      }
    }
    std::vector<std::ostringstream> o(static_cast<size_t>(parts));
    for (int p = 0; p < parts; ++p) {
      o[p] << head.str() << (parts > 1 ? "; part " + std::to_string(p) + " of " + std::to_string(parts) : "")
           << ".\n" << prelude(spec_.precision);
    }
    o[0] << jitabi::kBlockArgsText << "\n";
    o[0] << "constexpr std::size_t NI = " << t_.numInputs() << ";\n";
    // The draw cache: slot k for draw k when the indices are dense enough
    // (those of [0, K) nobody reads are made and dropped), else a list KS.
    o[0] << "constexpr std::uint32_t K = " << drawCacheSize() << ";  // draw cache slots\n";
    o[0] << "constexpr bool DENSE = " << (denseDraws_ ? "true" : "false") << ";\n";
    o[0] << "constexpr std::uint32_t KS[K + 1] = {";
    if (!denseDraws_)
      for (uint32_t k : draws_) o[0] << k << "u, ";
    o[0] << "0u};\n";
    o[0] << "constexpr std::size_t NV = " << std::max(1, nv_) << ", ND = " << std::max(1, nd_) << ";\n";
    o[0] << "constexpr std::size_t OUTV = " << vslot_[t_.output] << ";\n";
    o[0] << "constexpr bool GREEKS = " << (spec_.greeks ? "true" : "false") << ";\n";
    o[0] << "constexpr std::size_t OUTD = " << std::max(0, dslot_[t_.output]) << ";\n";
    o[0] << "constexpr std::size_t IND[NI + 1] = {";
    for (int k = 0; k < t_.numInputs(); ++k) o[0] << std::max(0, dslot_[t_.inputNodes[k]]) << ", ";
    o[0] << "0};\n}  // namespace\n\nnamespace tljit {\n";
    for (const Fn& f : fns_) o[0] << "void " << f.name << "(Ctx& x);\n";
    for (int p = 1; p < parts; ++p) o[p] << "}  // namespace\n\nnamespace tljit {\n";
    for (size_t k = 0; k < fns_.size(); ++k) emitFunction(o[partOf[k]], fns_[k]);
    for (int p = 1; p < parts; ++p) o[p] << "}  // namespace tljit\n";
    o[0] << "}  // namespace tljit\n\nnamespace {\ninline void tl_forward(Ctx& x) {\n";
    for (const Fn& f : fns_)
      if (f.fwd == Fn::First) o[0] << "  tljit::" << f.name << "(x);\n";
    o[0] << "}\ninline void tl_reverse([[maybe_unused]] Ctx& x) {\n";
    for (const Fn& f : fns_)
      if (f.fwd != Fn::First) o[0] << "  tljit::" << f.name << "(x);\n";
    o[0] << "}\n";
    o[0] << driver();
    JitSource src;
    for (auto& part : o) src.parts.push_back(part.str());
    src.functions = static_cast<int>(fns_.size());
    src.valueSlots = nv_;
    src.adjointSlots = nd_;
    return src;
  }


 private:
  static std::string sanitize(const std::string& s) {
    std::string r;
    for (char c : s) r += (c >= 32 && c < 127 && c != '\\') ? c : '?';
    return r;
  }

  std::vector<std::pair<int32_t, int32_t>> chunks(int32_t b, int32_t e) const {
    const int32_t len = e - b, N = std::max(1, spec_.chunkNodes);
    const int32_t count = (len + N - 1) / N;
    std::vector<std::pair<int32_t, int32_t>> r;
    for (int32_t c = 0; c < count; ++c)
      r.emplace_back(b + static_cast<int32_t>(int64_t{len} * c / count),
                     b + static_cast<int32_t>(int64_t{len} * (c + 1) / count));
    return r;
  }

  void add(Fn f, const char* prefix) {
    f.name = prefix + std::to_string(fns_.size());
    fns_.push_back(std::move(f));
  }

  void planFunctions() {
    const Plan* plan = spec_.plan;
    if (plan && plan->segments() > 1) {
      if (plan->bounds.front() != 0 || plan->bounds.back() != n_ ||
          plan->isPersistent.size() != static_cast<size_t>(n_))
        throw std::invalid_argument("cpu-jit: the plan does not belong to this tape");
      registerKind_ = true;
      bounds_ = plan->bounds;
    } else {
      bounds_ = {0, n_};
    }
    const int N = std::max(1, spec_.chunkNodes);
    if (!spec_.greeks) {  // value only: the kind changes nothing
      for (auto [lo, hi] : chunks(0, n_)) add({Fn::First, false, false, lo, hi, 0, ""}, "fwd");
      return;
    }
    if (!registerKind_) {
      if (n_ <= N) {
        add({Fn::First, true, false, 0, n_, 0, ""}, "sweep");
        return;
      }
      const auto cs = chunks(0, n_);
      for (auto [lo, hi] : cs) add({Fn::First, false, true, lo, hi, 0, ""}, "fwd");
      for (auto it = cs.rbegin(); it != cs.rend(); ++it) add({Fn::None, true, false, it->first, it->second, 0, ""}, "rev");
      return;
    }
    const int S = static_cast<int>(bounds_.size()) - 1;
    for (int s = 0; s < S; ++s)
      for (auto [lo, hi] : chunks(bounds_[s], bounds_[s + 1])) add({Fn::First, false, false, lo, hi, 0, ""}, "fwd");
    for (int s = S - 1; s >= 0; --s) {
      const int32_t b = bounds_[s], e = bounds_[s + 1];
      if (e - b <= N) {
        add({Fn::Recompute, true, false, b, e, b, ""}, "seg");
        continue;
      }
      const auto cs = chunks(b, e);
      for (auto [lo, hi] : cs) add({Fn::Recompute, false, true, lo, hi, b, ""}, "rec");
      for (auto it = cs.rbegin(); it != cs.rend(); ++it) add({Fn::None, true, false, it->first, it->second, b, ""}, "rev");
    }
  }

  // Operands of node i as a list (0, 1 or 2 entries, possibly equal).
  template <class F>
  void forOperands(int32_t i, F f) const {
    const int ar = arity(t_.op[i]);
    if (ar >= 1) f(t_.a[i]);
    if (ar >= 2) f(t_.b[i]);
  }

  bool needsStore(const Fn& f, int32_t j) const {
    if (j == t_.output && f.fwd == Fn::First) return true;
    if (!(f.fwd == Fn::Recompute && f.rev) && maxConsumer_[j] >= f.hi) return true;
    return f.storeForReverse && revRead_[j];
  }

  void analyse() {
    for (int32_t i = 0; i < n_; ++i)
      if (t_.op[i] == Op::Randn) draws_.push_back(static_cast<uint32_t>(t_.imm[i]));
    std::sort(draws_.begin(), draws_.end());
    draws_.erase(std::unique(draws_.begin(), draws_.end()), draws_.end());
    denseDraws_ = draws_.empty() || uint64_t{draws_.back()} + 1 <= 2 * uint64_t{draws_.size()};
    maxConsumer_.assign(n_, -1);
    revRead_.assign(n_, 0);
    for (int32_t i = 0; i < n_; ++i) {
      forOperands(i, [&](int32_t j) { maxConsumer_[j] = std::max(maxConsumer_[j], i); });
      const Op op = t_.op[i];
      if (arity(op) == 0) continue;
      const AdjointReads r = adjointReads(op);
      if (r.a) revRead_[t_.a[i]] = 1;
      if (r.b) revRead_[t_.b[i]] = 1;
      if (r.r) revRead_[i] = 1;
    }
    // Value slots: every value some function stores.
    vslot_.assign(n_, -1);
    std::vector<uint8_t> stored(n_, 0);
    for (const Fn& f : fns_)
      if (f.fwd != Fn::None)
        for (int32_t j = f.lo; j < f.hi; ++j)
          if (needsStore(f, j)) stored[j] = 1;
    for (int32_t j = 0; j < n_; ++j)
      if (stored[j]) vslot_[j] = nv_++;
    // Adjoint slots: inputs, the output, and adjoints touched by two functions.
    dslot_.assign(n_, -1);
    if (!spec_.greeks) return;
    std::vector<int> revFn(n_, -1);
    for (size_t k = 0; k < fns_.size(); ++k)
      if (fns_[k].rev)
        for (int32_t i = fns_[k].lo; i < fns_[k].hi; ++i) revFn[i] = static_cast<int>(k);
    std::vector<uint8_t> shared(n_, 0);
    for (int32_t i = 0; i < n_; ++i)
      forOperands(i, [&](int32_t j) {
        if (revFn[j] != revFn[i]) shared[j] = 1;
      });
    for (int32_t j : t_.inputNodes) shared[j] = 1;
    shared[t_.output] = 1;
    for (int32_t j = 0; j < n_; ++j)
      if (shared[j] && (!isDrawOrConst(t_.op[j]) || j == t_.output)) dslot_[j] = nd_++;
  }

  static std::string named(char prefix, int32_t j) {
    std::string s(1, prefix);
    s += std::to_string(j);
    return s;
  }
  uint64_t drawCacheSize() const { return denseDraws_ ? (draws_.empty() ? 0 : uint64_t{draws_.back()} + 1) : draws_.size(); }
  uint64_t drawSlot(uint32_t k) const {
    return denseDraws_ ? k : static_cast<uint64_t>(std::lower_bound(draws_.begin(), draws_.end(), k) - draws_.begin());
  }

  std::string v(int32_t j) const { return named('v', j); }
  std::string d(int32_t j) const { return named('d', j); }

  std::string spellFor(std::string_view expr, int32_t i) const {
    return spell(expr, [&](std::string_view id) -> std::string {
      if (id == "a") return v(t_.a[i]);
      if (id == "b") return v(t_.b[i]);
      if (id == "r") return v(i);
      if (id == "d") return d(i);
      if (id == "zero") return "tl_zero";
      if (id == "exp") return "tl_exp";
      if (id == "log") return "tl_log";
      if (id == "sqrt") return "xsimd::sqrt";
      if (id == "sel") return "xsimd::select";
      throw std::logic_error("cpu-jit: ops.def uses an identifier the emitter cannot spell: " + std::string(id));
    });
  }

  void emitFunction(std::ostringstream& o, const Fn& f) {
    o << "TL_NOINLINE void " << f.name << "([[maybe_unused]] Ctx& x) {\n";
    o << "  [[maybe_unused]] const B* __restrict IN = x.in;\n  [[maybe_unused]] const B* __restrict Z = x.z;\n"
         "  [[maybe_unused]] B* __restrict V = x.v;\n  [[maybe_unused]] B* __restrict D = x.d;\n"
         "  [[maybe_unused]] const B tl_zero(T(0));\n";
    // Values read here but computed elsewhere.
    std::vector<int32_t> imports;
    auto importIfOutside = [&](int32_t j) {
      if (f.fwd == Fn::None || j < f.lo) imports.push_back(j);
    };
    for (int32_t i = f.lo; i < f.hi; ++i) {
      if (f.fwd != Fn::None) forOperands(i, importIfOutside);
      if (f.fwd == Fn::None && arity(t_.op[i]) > 0) {
        const AdjointReads r = adjointReads(t_.op[i]);
        if (r.a) imports.push_back(t_.a[i]);
        if (r.b) imports.push_back(t_.b[i]);
        if (r.r) imports.push_back(i);
      }
    }
    std::sort(imports.begin(), imports.end());
    imports.erase(std::unique(imports.begin(), imports.end()), imports.end());
    for (int32_t j : imports) {
      if (vslot_[j] < 0) throw std::logic_error("cpu-jit: value " + std::to_string(j) + " was not kept");
      const std::string slot = "V[" + std::to_string(vslot_[j]) + "]";
      const bool bookmark = f.fwd == Fn::Recompute && j < f.segStart;
      o << "  const B " << v(j) << " = " << (bookmark ? "tl_opq(" + slot + ", x.opaque)" : slot) << ";\n";
    }
    if (f.fwd != Fn::None) {
      for (int32_t i = f.lo; i < f.hi; ++i) {
        o << "  const B " << v(i);
        switch (t_.op[i]) {
          case Op::Const: o << "(" << lit(t_.imm[i]) << ");\n"; break;
          case Op::Input: o << " = IN[" << static_cast<int>(t_.imm[i]) << "];\n"; break;
          case Op::Randn: o << " = Z[" << drawSlot(static_cast<uint32_t>(t_.imm[i])) << "];\n"; break;
          default: o << " = " << spellFor(info(t_.op[i]).forward, i) << ";\n"; break;
        }
        if (needsStore(f, i)) o << "  V[" << vslot_[i] << "] = " << v(i) << ";\n";
      }
    }
    if (f.rev) emitReverse(o, f);
    o << "}\n\n";
  }

  void emitReverse(std::ostringstream& o, const Fn& f) {
    // Adjoints this function touches: its nodes' own, and their operands'.
    std::vector<int32_t> touched;
    std::vector<uint8_t> written(n_, 0);
    for (int32_t i = f.lo; i < f.hi; ++i) {
      if (!isDrawOrConst(t_.op[i]) && arity(t_.op[i]) > 0) touched.push_back(i);
      forOperands(i, [&](int32_t j) {
        if (!isDrawOrConst(t_.op[j])) {
          touched.push_back(j);
          written[j] = 1;
        }
      });
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (int32_t j : touched) {
      if (dslot_[j] >= 0)
        o << "  B " << d(j) << " = D[" << dslot_[j] << "];\n";
      else
        o << "  B " << d(j) << "(T(0));\n";
    }
    for (int32_t i = f.hi - 1; i >= f.lo; --i) {
      const Op op = t_.op[i];
      if (arity(op) == 0) continue;
      if (!isDrawOrConst(t_.op[t_.a[i]])) o << "  " << d(t_.a[i]) << " += " << spellFor(info(op).adjointA, i) << ";\n";
      if (arity(op) == 2 && !isDrawOrConst(t_.op[t_.b[i]]))
        o << "  " << d(t_.b[i]) << " += " << spellFor(info(op).adjointB, i) << ";\n";
    }
    for (int32_t j : touched)
      if (dslot_[j] >= 0 && written[j]) o << "  D[" << dslot_[j] << "] = " << d(j) << ";\n";
  }

  static std::string driver() {
    return R"(
}  // namespace

extern "C" {

TL_EXPORT int tapelab_cpujit_abi() { return )" +
           std::to_string(jitabi::kVersion) + R"(; }
TL_EXPORT const char* tapelab_cpujit_arch() { return xsimd::default_arch::name(); }
TL_EXPORT int tapelab_cpujit_lanes() { return static_cast<int>(W); }

// Workspace, in batches: inputs, draws, values, adjoints, sums, compensations.
static std::size_t tl_batches(std::size_t markets) {
  return markets * NI + (K + P / W) + NV + ND + 4 * markets * (1 + NI);
}
TL_EXPORT std::size_t tapelab_cpujit_workspace(std::size_t markets) { return (tl_batches(markets) + 1) * sizeof(B); }

TL_EXPORT void tapelab_cpujit_block(const JitBlockArgs* a) {
  constexpr std::size_t NW = 1 + NI;
  const std::size_t M = a->markets;
  const std::uintptr_t raw = reinterpret_cast<std::uintptr_t>(a->workspace);
  B* in = reinterpret_cast<B*>((raw + sizeof(B) - 1) / sizeof(B) * sizeof(B));
  B* z = in + M * NI;
  B* v = z + (K + P / W);
  B* d = v + NV;
  B* S = d + ND;
  B* C = S + 2 * M * NW;
  const T* inputs = static_cast<const T*>(a->inputs);
  for (std::size_t i = 0; i < M * NI; ++i) in[i] = B(inputs[i]);
  for (std::size_t i = 0; i < 2 * M * NW; ++i) S[i] = C[i] = B(T(0));
  alignas(64) T lanes[W];
  for (std::size_t l = 0; l < W; ++l) lanes[l] = T(l);
  const B iota = B::load_aligned(lanes);
  for (std::uint64_t first = a->lo; first < a->hi; first += W) {
    const std::uint64_t left = a->hi - first;
    const BB live = iota < B(T(left < W ? left : W));
    if constexpr (DENSE)
      tl_fill_draws(z, a->seed, first, K);
    else
      tl_fill_draw_list(z, a->seed, first, KS, K);
    for (std::size_t m = 0; m < M; ++m) {
      Ctx x{in + m * NI, z, v, d, static_cast<UT>(a->opaque)};
      B* s = S + 2 * m * NW;
      B* c = C + 2 * m * NW;
      if constexpr (GREEKS) {  // before the forward pass: a one-function plain kernel sweeps both ways
        for (std::size_t j = 0; j < ND; ++j) d[j] = B(T(0));
        d[OUTD] = B(T(1));
      }
      tl_forward(x);
      const B value = v[OUTV];
      tl_kahan(s[0], c[0], value, live);
      tl_kahan(s[NW], c[NW], value * value, live);
      if constexpr (GREEKS) {
        tl_reverse(x);
        for (std::size_t k = 0; k < NI; ++k) {
          const B g = d[IND[k]];
          tl_kahan(s[1 + k], c[1 + k], g, live);
          tl_kahan(s[NW + 1 + k], c[NW + 1 + k], g * g, live);
        }
      }
    }
  }
  alignas(64) T sl[W], cl[W];
  for (std::size_t i = 0; i < 2 * M * NW; ++i) {
    S[i].store_aligned(sl);
    C[i].store_aligned(cl);
    double acc = 0;
    for (std::size_t l = 0; l < W; ++l) acc += static_cast<double>(sl[l]) - static_cast<double>(cl[l]);
    a->partial[i] = acc;
  }
}

TL_EXPORT void tapelab_cpujit_draw(std::uint64_t seed, std::uint64_t first, std::uint32_t k, void* u, void* z) {
  const TlCounters c(seed, first);
  B us[TlCounters::R];
  const std::uint32_t base = k / TlCounters::R * TlCounters::R;
  c.uniforms<1>(base, us);
  const B uk = us[k - base];
  uk.store_unaligned(static_cast<T*>(u));
  tl_quantile(uk).store_unaligned(static_cast<T*>(z));
}

}  // extern "C"
)";
  }

  const Tape& t_;
  const JitSpec& spec_;
  const int32_t n_;
  bool registerKind_ = false;
  std::vector<int32_t> bounds_;
  std::vector<Fn> fns_;
  std::vector<int32_t> maxConsumer_;
  std::vector<uint8_t> revRead_;
  std::vector<int32_t> vslot_, dslot_;
  int nv_ = 0, nd_ = 0;
  std::vector<uint32_t> draws_;  // draw indices read, sorted
  bool denseDraws_ = true;
};

}  // namespace

JitSource emitCpuJit(const Tape& tape, const JitSpec& spec) { return Emitter(tape, spec).run(); }

std::string cpuJitPrelude(Precision precision) { return prelude(precision); }

}  // namespace tapelab
