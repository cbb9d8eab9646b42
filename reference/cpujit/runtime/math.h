// cpu-jit kernel runtime: exp, log, pow and tanh, xsimd's (not libm's; see reference/cpujit/README.md).
// Out of line: one copy per object, however long the tape.
#pragma once
#include "reference/cpujit/runtime/types.h"

namespace {
// fp64: xsimd::exp's own steps (reduction, polynomial, finalize, ldexp, selects),
// except that the integer k of ldexp(c, k) comes from the 1.5*2^52 trick
// instead of xsimd's to_int, which on AVX2 is a scalar loop through memory.
// k is integral and |k| < 2^51 wherever the result is not replaced by the
// selects, so the bits are xsimd::exp's (tested).
[[maybe_unused]] static TL_NOINLINE xsimd::batch<double> tl_exp(xsimd::batch<double> a) {
  namespace xd = xsimd::kernel::detail;
  using D = xsimd::batch<double>;
  using R = xd::exp_reduction<double, typename D::arch_type, xd::exp_tag>;
  using I = xsimd::batch<std::int64_t>;
  D hi, lo, x;
  const D k = R::reduce(a, hi, lo, x);
  D c = R::approx(x);
  c = R::finalize(x, c, hi, lo);
  const D magic(6755399441055744.0);
  const I ki = xsimd::bitwise_cast<I>(k + magic) - xsimd::bitwise_cast<I>(magic);
  c = xsimd::select(a <= R::minlog(), D(0.0), xsimd::ldexp(c, ki));
  return xsimd::select(a >= R::maxlog(), xsimd::constants::infinity<D>(), c);
}
// fp32: xsimd::exp itself.
[[maybe_unused]] static TL_NOINLINE xsimd::batch<float> tl_exp(xsimd::batch<float> a) { return xsimd::exp(a); }

static TL_NOINLINE B tl_log(B x) { return xsimd::log(x); }
[[maybe_unused]] static TL_NOINLINE B tl_pow(B x, B y) { return xsimd::pow(x, y); }
[[maybe_unused]] static TL_NOINLINE B tl_tanh(B x) { return xsimd::tanh(x); }
}  // namespace
