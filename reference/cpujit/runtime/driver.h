// cpu-jit kernel runtime: the exported functions (reference/cpujit/abi.h) that
// run a block of paths through the tape. Pasted after the tape (emit.cpp), which defines
//   NI                 inputs
//   K, DENSE, KS       draw cache slots: slot k holds draw k, or draw KS[k] when !DENSE
//   NV, ND             value and adjoint slots shared between functions
//   OUTV, OUTD, IND    the output's value and adjoint slots, the inputs' adjoint slots
//   GREEKS             whether adjoints are swept
//   tl_forward(Ctx&), tl_reverse(Ctx&)
#pragma once
#include "reference/cpujit/abi.h"
#include "reference/cpujit/runtime/runtime.h"

namespace {
// One Kahan step in the lanes that hold a path.
inline void tl_kahan(B& sum, B& comp, const B& x, const BB& live) {
  const B y = x - comp;
  const B t = sum + y;
  comp = xsimd::select(live, (t - sum) - y, comp);
  sum = xsimd::select(live, t, sum);
}
}  // namespace

extern "C" {

TL_EXPORT int tapelab_cpujit_abi() { return tapelab::jitabi::kVersion; }
TL_EXPORT const char* tapelab_cpujit_arch() { return xsimd::default_arch::name(); }
TL_EXPORT int tapelab_cpujit_lanes() { return static_cast<int>(W); }

// Workspace, in batches: inputs, draws, values, adjoints, sums, compensations.
static std::size_t tl_batches(std::size_t markets) {
  return markets * NI + (K + P / W) + NV + ND + 4 * markets * (1 + NI);
}
TL_EXPORT std::size_t tapelab_cpujit_workspace(std::size_t markets) { return (tl_batches(markets) + 1) * sizeof(B); }

TL_EXPORT void tapelab_cpujit_block(const tapelab::jitabi::JitBlockArgs* a) {
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
  B us[TlCounters::D];
  c.uniforms<1>(k / TlCounters::D * TlCounters::R, us);
  const std::uint32_t at = k % TlCounters::D, pair = at & ~1u;
  us[at].store_unaligned(static_cast<T*>(u));
  B even, odd;
  tl_boxMuller(us[pair], us[pair + 1], even, odd);
  (at % 2 ? odd : even).store_unaligned(static_cast<T*>(z));
}

}  // extern "C"
