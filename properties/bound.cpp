#include "properties/bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tapelab::props {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEpsF = 1.1920928955078125e-07;  // 2^-23
constexpr double kEpsD = 2.220446049250313e-16;   // 2^-52
constexpr double kTinyF = 1.1754943508222875e-38;  // FLT_MIN
constexpr double kTinyD = 2.2250738585072014e-308;

// A draw (tape/philox.h, version 4) is rho * cos or rho * sin: rho = sqrt(-2 log u) and the angle's
// Taylor polynomials (|theta| <= pi/4, Horner by fma) are each a few roundings from exact, times
// |z| <= 5.77: within 64 eps of the exact draw where log is good to a few ulp (tests/tape
// DrawErrorIsWithinTheBound measures it). A log with an absolute error e inside [0.5, 2] (GLSL.std.450:
// 2^-21) moves rho^2 = max(-2 log u, 0) by up to 2e, so rho by up to 2e / rho (less where the max
// clamps it: then rho itself is below sqrt(2e)), and rho >= sqrt(2 * 2^-24) = 2^-11.5: 2e * 2^11.5 more.
constexpr double kDrawExact = 64, kDrawGpu = 96;
constexpr double kRhoMin = 3.4526698300124393e-04;  // 2^-11.5

// engine, precision, eps, basic, div, sqrt, exp, expSlope, log, logAbs, draw, safety, tiny
std::vector<ErrorModel> buildTable() {
  std::vector<ErrorModel> t;
  auto row = [&](const char* e, Precision p, double basic, double div, double sq, double ex, double exSlope,
                 double lg, double lgAbs, double draw) {
    const bool f = p == Precision::F32;
    const double eps = f ? kEpsF : kEpsD;
    t.push_back({e, p, eps, basic, div, sq, ex, exSlope, lg, lgAbs, draw + 2 * lgAbs / (eps * kRhoMin), 2.0, f ? kTinyF : kTinyD});
  };
  // glibc: + - * / sqrt correctly rounded, exp/log within 1 ulp.
  row("reference", Precision::F64, 0.5, 0.5, 0.5, 1, 0, 1, 0, kDrawExact);
  row("reference-f32", Precision::F32, 0.5, 0.5, 0.5, 1, 0, 1, 0, kDrawExact);
  row("reference-mp", Precision::F64, 0.5, 0.5, 0.5, 1, 0, 1, 0, kDrawExact);
  // xsimd's exp/log: a few ulps.
  row("cpu-jit", Precision::F32, 0.5, 0.5, 0.5, 4, 0, 4, 0, kDrawExact);
  row("cpu-jit", Precision::F64, 0.5, 0.5, 0.5, 4, 0, 4, 0, kDrawExact);
  // Vulkan (SPIR-V precision rules for GLSL.std.450): x/y 2.5 ulp, sqrt as
  // 1/inversesqrt, exp 3+2|x| ulp, log 3 ulp outside [0.5,2] and 2^-21 absolute inside.
  row("vulkan", Precision::F32, 0.5, 2.5, 5, 3, 2, 3, 4.76837158203125e-07, kDrawGpu);
  row("vulkan", Precision::F64, 0.5, 2.5, 5, 3, 2, 3, 4.76837158203125e-07, kDrawGpu);
  // OpenCL C full profile: single x/y and sqrt 3 ulp (2.5 for x/y), exp/log 3 ulp; double: 0.5 / 3.
  // The engine builds with -cl-fp32-correctly-rounded-divide-sqrt where the device can (0.5 ulp);
  // the row keeps the profile's bound for devices that cannot.
  row("opencl", Precision::F32, 0.5, 2.5, 3, 3, 0, 3, 0, kDrawGpu);
  row("opencl", Precision::F64, 0.5, 0.5, 0.5, 3, 0, 3, 0, kDrawGpu);
  // CUDA without fast math (-prec-div, -prec-sqrt): expf 2, logf 1; double 1 ulp.
  row("cuda", Precision::F32, 0.5, 0.5, 0.5, 2, 0, 1, 0, kDrawGpu);
  row("cuda", Precision::F64, 0.5, 0.5, 0.5, 1, 0, 1, 0, kDrawGpu);
  row("hip", Precision::F32, 0.5, 0.5, 0.5, 2, 0, 1, 0, kDrawGpu);
  row("hip", Precision::F64, 0.5, 0.5, 0.5, 1, 0, 1, 0, kDrawGpu);
  // Anything else: the loosest of the above.
  row("*", Precision::F32, 0.5, 3, 5, 4, 2, 4, 4.76837158203125e-07, kDrawGpu);
  row("*", Precision::F64, 0.5, 3, 5, 4, 2, 4, 4.76837158203125e-07, kDrawGpu);
  return t;
}

Bound unbounded() { return {-kInf, kInf, kInf}; }

// Rounding of a result with magnitude `mag`, `ulps` ulps, plus subnormal flushing.
double rounding(double ulps, double mag, const ErrorModel& m) {
  return m.eps == 0 ? 0.0 : ulps * m.eps * mag + m.tiny;
}

// The model the operators below use; set by ModelScope around an evaluation.
thread_local const ErrorModel* gModel = nullptr;
struct ModelScope {
  explicit ModelScope(const ErrorModel& m) : saved(gModel) { gModel = &m; }
  ~ModelScope() { gModel = saved; }
  const ErrorModel* saved;
};

// Tri-state comparison outcome: the op table's sel() on Bounds takes the hull
// when the outcome is uncertain.
enum class Tri { False, True, Unknown };

Tri compare(bool surelyTrue, bool surelyFalse) {
  return surelyTrue ? Tri::True : surelyFalse ? Tri::False : Tri::Unknown;
}
Tri operator>=(const Bound& a, const Bound& b) {
  return compare(a.lo - a.err >= b.hi + b.err, a.hi + a.err < b.lo - b.err);
}
Tri operator<=(const Bound& a, const Bound& b) { return b >= a; }
Tri operator>(const Bound& a, const Bound& b) {
  return compare(a.lo - a.err > b.hi + b.err, a.hi + a.err <= b.lo - b.err);
}
Tri operator<(const Bound& a, const Bound& b) {
  return compare(a.hi + a.err < b.lo - b.err, a.lo - a.err >= b.hi + b.err);
}

// Where the comparison is uncertain the value is continuous (max, min, abs are
// 1-Lipschitz), so the error is the larger one; adjoints of such nodes may
// jump, and are not compared (TapeBounds::hasKinks).
Bound sel(Tri c, const Bound& x, const Bound& y) {
  if (c == Tri::True) return x;
  if (c == Tri::False) return y;
  return {std::min(x.lo, y.lo), std::max(x.hi, y.hi), std::max(x.err, y.err)};
}

Bound operator-(const Bound& a) { return {-a.hi, -a.lo, a.err}; }

Bound operator+(const Bound& a, const Bound& b) {
  if (!a.bounded() || !b.bounded()) return unbounded();
  Bound r{a.lo + b.lo, a.hi + b.hi, 0};
  r.err = a.err + b.err + rounding(gModel->basic, r.mag(), *gModel);
  return r;
}

Bound operator-(const Bound& a, const Bound& b) { return a + (-b); }

Bound operator*(const Bound& a, const Bound& b) {
  if (!a.bounded() || !b.bounded()) return unbounded();
  const double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  Bound r{*std::min_element(p, p + 4), *std::max_element(p, p + 4), 0};
  r.err = b.mag() * a.err + a.mag() * b.err + a.err * b.err + rounding(gModel->basic, r.mag(), *gModel);
  return r;
}

Bound square(const Bound& a) {
  if (!a.bounded()) return unbounded();
  Bound r{a.mig() * a.mig(), a.mag() * a.mag(), 0};
  r.err = 2 * a.mag() * a.err + a.err * a.err + rounding(gModel->basic, r.mag(), *gModel);
  return r;
}

Bound operator/(const Bound& a, const Bound& b) {
  if (!a.bounded() || !b.bounded()) return unbounded();
  const double low = b.mig() - b.err;  // smallest |b| an engine may see
  if (!(b.lo > 0 || b.hi < 0) || low <= 0) return unbounded();
  const Bound inv{1 / b.hi, 1 / b.lo, 0};
  const double p[4] = {a.lo * inv.lo, a.lo * inv.hi, a.hi * inv.lo, a.hi * inv.hi};
  Bound r{*std::min_element(p, p + 4), *std::max_element(p, p + 4), 0};
  r.err = a.err / low + a.mag() * b.err / (b.mig() * low) + rounding(gModel->div, r.mag(), *gModel);
  return r;
}

Bound exp(const Bound& a) {
  if (!a.bounded() || a.hi + a.err > 700) return unbounded();
  Bound r{std::exp(a.lo), std::exp(a.hi), 0};
  r.err = r.hi * std::expm1(a.err) +
          rounding(gModel->exp + gModel->expSlope * (a.mag() + a.err), r.mag(), *gModel);
  return r;
}

Bound log(const Bound& a) {
  if (!a.bounded() || !(a.lo - a.err > 0)) return unbounded();
  Bound r{std::log(a.lo), std::log(a.hi), 0};
  r.err = -std::log1p(-a.err / a.lo) + rounding(gModel->log, r.mag(), *gModel) +
          (gModel->eps == 0 ? 0.0 : gModel->logAbs);
  return r;
}

Bound sqrt(const Bound& a) {
  if (!a.bounded() || a.lo < 0) return unbounded();
  Bound r{std::sqrt(a.lo), std::sqrt(a.hi), 0};
  const double prop = a.lo >= a.err ? std::sqrt(a.lo) - std::sqrt(a.lo - a.err) : std::sqrt(a.err);
  r.err = prop + rounding(gModel->sqrt, r.mag(), *gModel);
  return r;
}

// pow as exp(b log a): its error bound covers pow's own rounding (GLSL spells it so).
Bound pow(const Bound& a, const Bound& b) { return exp(b * log(a)); }

// tanh is 1-Lipschitz and within 1: the absolute error of its argument, plus an
// exp-like rounding (engines build it from exp) at magnitude 1.
Bound tanh(const Bound& a) {
  if (!a.bounded()) return unbounded();
  Bound r{std::tanh(a.lo), std::tanh(a.hi), 0};
  r.err = a.err + rounding(gModel->exp + gModel->expSlope * (a.mag() + a.err), 1.0, *gModel);
  return r;
}

// A step's value where its comparison is uncertain: either side, wrong by the jump
// between them when an engine's rounding decides the other way.
Bound jump(Tri c, const Bound& x, const Bound& y) {
  if (c != Tri::Unknown) return sel(c, x, y);
  const double lo = std::min(x.lo, y.lo), hi = std::max(x.hi, y.hi);
  return {lo, hi, std::max(x.err, y.err) + (hi - lo)};
}

Bound forwardOp(Op op, const Bound& a, const Bound& b, const Bound& c, bool same) {
  [[maybe_unused]] const Bound zero(0.0), one(1.0);
  // Tighter intervals than the hull sel() gives, for the same values.
  if (op == Op::Mul && same) return square(a);
  if (op == Op::Abs) return {a.mig(), a.mag(), a.err};
  if (op == Op::Max) return {std::max(a.lo, b.lo), std::max(a.hi, b.hi), std::max(a.err, b.err)};
  if (op == Op::Min) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi), std::max(a.err, b.err)};
  // Steps are not continuous: sel's hull would understate their error.
  if (op == Op::Lt) return jump(a < b, one, zero);
  if (op == Op::Le) return jump(a <= b, one, zero);
  if (op == Op::Select) return jump(a > zero, b, c);
  switch (op) {
#define TAPELAB_OP(Name, text, arity, group, fwd, adjA, adjB, adjC) \
  case Op::Name: return fwd;
#include "tape/ops.def"
    default: return unbounded();
  }
}

}  // namespace

bool Bound::bounded() const { return std::isfinite(lo) && std::isfinite(hi) && std::isfinite(err); }
double Bound::mag() const { return std::max(std::fabs(lo), std::fabs(hi)); }
double Bound::mig() const { return lo > 0 ? lo : hi < 0 ? -hi : 0.0; }

const std::vector<ErrorModel>& toleranceTable() {
  static const std::vector<ErrorModel> t = buildTable();
  return t;
}

const ErrorModel& errorModel(const std::string& engine, Precision precision) {
  for (const ErrorModel& m : toleranceTable())
    if (m.engine == engine && m.precision == precision) return m;
  for (const ErrorModel& m : toleranceTable())
    if (m.engine == "*" && m.precision == precision) return m;
  return toleranceTable().back();
}

Bound forwardBound(Op op, const Bound& a, const Bound& b, const Bound& c, bool same, const ErrorModel& model) {
  ModelScope scope(model);
  return forwardOp(op, a, b, c, same);
}

Bound leafBound(const Tape& t, int32_t i, const ErrorModel& m) {
  switch (t.op[i]) {
    case Op::Const: return {t.imm[i], t.imm[i], m.eps == 0 ? 0.0 : 0.5 * m.eps * std::fabs(t.imm[i]) + m.tiny};
    case Op::Input: return {kInputLo, kInputHi, 0.5 * m.eps * std::max(-kInputLo, kInputHi)};
    case Op::Randn: return {-kDrawMag, kDrawMag, m.draw * m.eps};
    default: return unbounded();
  }
}

TapeBounds analyse(const Tape& t, const ErrorModel& m) {
  ModelScope scope(m);
  const int32_t n = t.size();
  std::vector<Bound> v(n), adj(n, Bound(0.0));
  TapeBounds out;
  for (int32_t i = 0; i < n; ++i) {
    const Op op = t.op[i];
    if (info(op).group == OpGroup::Kink || info(op).group == OpGroup::Step) out.hasKinks = true;
    if (arity(op) == 0) {
      v[i] = leafBound(t, i, m);
    } else {
      const Bound& a = v[t.a[i]];
      const Bound& b = arity(op) >= 2 ? v[t.b[i]] : v[t.a[i]];
      const Bound& c = arity(op) >= 3 ? v[t.c[i]] : v[t.a[i]];
      v[i] = forwardOp(op, a, b, c, arity(op) == 2 && t.a[i] == t.b[i]);
    }
  }
  out.value = v[t.output];
  // The reverse sweep, as every engine does it: d_a += adjA; d_b += adjB; d_c += adjC.
  adj[t.output] = Bound(1.0);
  for (int32_t i = n - 1; i >= 0; --i) {
    switch (t.op[i]) {
#define TAPELAB_OP(Name, text, arity, group, fwd, adjA, adjB, adjC)                              \
  case Op::Name: {                                                                              \
    [[maybe_unused]] const Bound zero(0.0), one(1.0);                                           \
    [[maybe_unused]] const Bound a = v[t.a[i]];                                                 \
    [[maybe_unused]] const Bound b = arity >= 2 ? v[t.b[i]] : zero;                             \
    [[maybe_unused]] const Bound c = arity >= 3 ? v[t.c[i]] : zero;                             \
    [[maybe_unused]] const Bound r = v[i];                                                      \
    [[maybe_unused]] const Bound d = adj[i];                                                    \
    if constexpr (contributes(#adjA)) adj[t.a[i]] = adj[t.a[i]] + (adjA);                       \
    if constexpr (arity >= 2 && contributes(#adjB)) adj[t.b[i]] = adj[t.b[i]] + (adjB);         \
    if constexpr (arity >= 3 && contributes(#adjC)) adj[t.c[i]] = adj[t.c[i]] + (adjC);         \
  } break;
#include "tape/ops.def"
      default: break;
    }
  }
  for (int k = 0; k < t.numInputs(); ++k) out.adjoint.push_back(adj[t.inputNodes[k]]);
  return out;
}

double tolerance(const Bound& b, const ErrorModel& m) {
  if (!b.bounded()) return kInf;
  // Kahan sums in the kernel precision (<= 2 eps relative), the host's double
  // sums, and reference-mp's rounding of each path to double.
  return m.safety * (b.err + 2 * m.eps * b.mag()) + 8 * kEpsD * b.mag();
}

}  // namespace tapelab::props
