// Interval + error-bound analysis of a tape, and the one tolerance table.
//
// A Bound is an interval [lo, hi] that holds a value for every input in the
// conditioned input range and every draw, plus `err`, a bound on the absolute
// error of the value an engine computes for it. Evaluating the op table's own
// forward and adjoint expressions (tape/ops.def) on Bounds gives, per tape and
// engine, a first-order-plus error bound for the value and for every adjoint:
// the accuracy properties compare an engine with reference-mp against it.
// The generator of well-conditioned tapes (gen.h) uses the same intervals,
// with no error model, to keep values in a moderate range by construction.
#pragma once
#include <string>
#include <vector>

#include "engine/engine.h"
#include "tape/tape.h"

namespace tapelab::props {

// One row of the tolerance table: how accurate an engine's arithmetic is, in
// ulps (units of `eps`, the machine epsilon of the kernel precision, times the
// magnitude of the result), plus absolute terms.
struct ErrorModel {
  std::string engine;  // "*" = any engine not listed
  Precision precision;
  double eps;          // 2^-23 (fp32) or 2^-52 (fp64); 0 = exact (the generator's intervals)
  double basic;        // + - * (0.5 = correctly rounded)
  double div, sqrt;
  double exp, expSlope;  // ulps of exp(x): exp + expSlope*|x| (GLSL: 3 + 2|x|)
  double log, logAbs;    // ulps of log, plus an absolute error (GLSL: 2^-21 in [0.5, 2])
  double draw;           // absolute error of a normal draw, in units of eps
  double safety;         // multiplies the whole bound
  double tiny;           // absolute error per op from flushing subnormals (smallest normal)
};

// The table (documented in properties/README.md); never empty for a precision.
const std::vector<ErrorModel>& toleranceTable();
const ErrorModel& errorModel(const std::string& engine, Precision precision);

struct Bound {
  double lo = 0, hi = 0;  // the value lies in [lo, hi]
  double err = 0;         // |computed - exact| <= err; +inf when unbounded
  Bound() = default;
  explicit Bound(double v) : lo(v), hi(v) {}
  Bound(double l, double h, double e) : lo(l), hi(h), err(e) {}
  bool bounded() const;
  double mag() const;  // max |x| over the interval
  double mig() const;  // min |x| over the interval
};

// Conditioned input range the generator and the analysis assume, and the
// range of a draw (|z| <= sqrt(48 ln 2) = 5.77, tape/philox.h).
inline constexpr double kInputLo = -2.0, kInputHi = 2.0;
inline constexpr double kDrawMag = 5.78;

// The forward Bound of node `op` from its argument bounds (`same`: a and b are
// the same node, so a*a is a square; c: select's third). The error terms use `model`.
Bound forwardBound(Op op, const Bound& a, const Bound& b, const Bound& c, bool same, const ErrorModel& model);
Bound leafBound(const Tape& tape, int32_t node, const ErrorModel& model);

struct TapeBounds {
  Bound value;                 // the output node
  std::vector<Bound> adjoint;  // per input
  bool hasKinks = false;       // a max/min/abs node or a step: adjoints may jump, compare values only
};

// Analyses `tape` for one engine's error model, inputs in [kInputLo, kInputHi].
TapeBounds analyse(const Tape& tape, const ErrorModel& model);

// The tolerance for comparing an engine's mean over paths with reference-mp's:
// safety * (err + kernel-precision reduction error) + reference-mp's own rounding.
double tolerance(const Bound& b, const ErrorModel& model);

}  // namespace tapelab::props
