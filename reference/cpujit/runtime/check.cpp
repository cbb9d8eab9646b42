// The kernel runtime compiled at build time, so that a mistake in it is a
// build error and not a failure at run time: the target
// tapelab_cpujit_runtime_check compiles this file once per precision
// (TAPELAB_RUNTIME_CHECK_T) and SIMD level (-march=...), which instantiates
// every branch the run-time compile can take. Between runtime.h and
// driver.h is a small tape in the shape emit.cpp writes: z = draw 1,
// value = sqrt(log(exp(in0 * z) + in0)), its adjoints in one function.
namespace tljit {
using T = TAPELAB_RUNTIME_CHECK_T;
}  // namespace tljit

#include "reference/cpujit/runtime/runtime.h"

namespace {
constexpr std::size_t NI = 1;
constexpr std::uint32_t K = 2;  // draw cache slots
constexpr bool DENSE = true;
constexpr std::uint32_t KS[K + 1] = {0u};
constexpr std::size_t NV = 1, ND = 2;
constexpr std::size_t OUTV = 0;
constexpr bool GREEKS = true;
constexpr std::size_t OUTD = 1;
constexpr std::size_t IND[NI + 1] = {0, 0};
}  // namespace

namespace tljit {
void sweep0(Ctx& x);
TL_NOINLINE void sweep0([[maybe_unused]] Ctx& x) {
  [[maybe_unused]] const B* __restrict IN = x.in;
  [[maybe_unused]] const B* __restrict Z = x.z;
  [[maybe_unused]] B* __restrict V = x.v;
  [[maybe_unused]] B* __restrict D = x.d;
  [[maybe_unused]] const B tl_zero(T(0));
  const B v0 = tl_opq(IN[0], x.opaque);
  const B v1 = Z[1];
  const B v2 = v0 * v1;
  const B v3 = tl_exp(v2);
  const B v4 = v3 + v0;
  const B v5 = tl_log(v4);
  const B v6 = xsimd::sqrt(xsimd::select(v5 > tl_zero, v5, tl_zero));
  V[0] = v6;
  B d0 = D[0];
  B d2(T(0)), d3(T(0)), d4(T(0)), d5(T(0));
  B d6 = D[1];
  d5 += d6 / (v6 + v6);
  d4 += d5 / v4;
  d3 += d4;
  d0 += d4;
  d2 += d3 * v3;
  d0 += d2 * v1;
  D[0] = d0;
}
}  // namespace tljit

namespace {
inline void tl_forward(Ctx& x) { tljit::sweep0(x); }
inline void tl_reverse([[maybe_unused]] Ctx& x) {}
}  // namespace

#include "reference/cpujit/runtime/driver.h"
