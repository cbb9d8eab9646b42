// Every op of the op table as a one-op tape: its value, and its adjoint
// against a central finite difference (Taylor) on the reference engine;
// kink ops on both sides of the kink and at the tie; the three leaves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>
#include <map>
#include <string>
#include <vector>

#include "reference/interpreter.h"
#include "tape/op.h"
#include "tape/philox.h"
#include "tape/tape.h"
#include "tests/common/reference_engines.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

using testutil::g17;
using testutil::PlainRun;
using testutil::runPlainOnReference;

// inputs x (y, z for a binary or ternary op); node = op(x[, y[, z]]); output = node.
Tape oneOpTape(Op op) {
  Tape t;
  t.name = "one-" + std::string(name(op));
  const int32_t x = t.addInput("x", 1.0);
  if (arity(op) == 3) {
    const int32_t y = t.addInput("y", 1.0);
    const int32_t z = t.addInput("z", 1.0);
    t.output = t.push3(op, x, y, z);
  } else if (arity(op) == 2) {
    const int32_t y = t.addInput("y", 1.0);
    t.output = t.push(op, x, y);
  } else {
    t.output = t.push(op, x);
  }
  return t;
}

struct Eval {
  double value;
  std::vector<double> greeks;  // d value / d x, d value / d y
};

// The reference engine ("reference", double) on 2 paths: a tape without draws
// gives the same value on every path, so the mean is that value exactly.
Eval onReference(const Tape& t, const std::vector<double>& in) {
  const PlainRun r = runPlainOnReference(t, 2, 7, in);
  return {r.price(), r.run.markets[0].greeks};
}

// One path through the interpreter directly (for the finite differences).
double valueAt(const Tape& t, const std::vector<double>& in) {
  PathInterpreter<double> interp(t, nullptr, false);
  PathResult<double> out;
  interp.run(in, 7, 0, out);
  return out.value;
}

// The op's forward in plain C++, as ops.def documents it.
double forwardOf(Op op, double a, double b, double c) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Neg: return -a;
    case Op::Exp: return std::exp(a);
    case Op::Log: return std::log(a);
    case Op::Sqrt: return std::sqrt(a);
    case Op::Max: return a >= b ? a : b;
    case Op::Min: return a <= b ? a : b;
    case Op::Abs: return a < 0 ? -a : a;
    case Op::Pow: return std::pow(a, b);
    case Op::Tanh: return std::tanh(a);
    case Op::Lt: return a < b ? 1.0 : 0.0;
    case Op::Le: return a <= b ? 1.0 : 0.0;
    case Op::Select: return a > 0 ? b : c;
    default: ADD_FAILURE() << "no forward for " << name(op); return 0;
  }
}

// Points away from every kink and singularity, per op. Kink ops get points on
// both sides of the kink (the tie is tested separately, below).
const std::map<Op, std::vector<std::vector<double>>>& smoothPoints() {
  static const std::map<Op, std::vector<std::vector<double>>> pts = {
      {Op::Add, {{1.3, -0.7}, {0.25, 2.5}, {-3.0, 0.4}}},
      {Op::Sub, {{1.3, -0.7}, {0.25, 2.5}, {-3.0, 0.4}}},
      {Op::Mul, {{1.3, -0.7}, {0.25, 2.5}, {-3.0, 0.4}}},
      {Op::Div, {{1.3, -0.7}, {0.25, 2.5}, {-3.0, 0.4}}},
      {Op::Neg, {{1.3}, {-0.7}, {250.0}}},
      {Op::Exp, {{0.3}, {-2.0}, {4.0}}},
      {Op::Log, {{0.05}, {1.7}, {300.0}}},
      {Op::Sqrt, {{0.04}, {2.0}, {900.0}}},
      {Op::Max, {{2.0, 1.0}, {1.0, 2.0}, {-1.0, -3.0}, {-3.0, -1.0}}},
      {Op::Min, {{2.0, 1.0}, {1.0, 2.0}, {-1.0, -3.0}, {-3.0, -1.0}}},
      {Op::Abs, {{1.5}, {-1.5}, {-0.02}, {0.02}}},
      {Op::Pow, {{1.3, 0.7}, {0.25, 2.5}, {3.0, -0.4}, {2.0, 3.0}}},
      {Op::Tanh, {{0.3}, {-2.0}, {1.25}}},
      {Op::Lt, {{2.0, 1.0}, {1.0, 2.0}, {-1.0, -3.0}}},
      {Op::Le, {{2.0, 1.0}, {1.0, 2.0}, {-1.0, -3.0}}},
      {Op::Select, {{1.0, 1.5, -2.5}, {-1.0, 1.5, -2.5}, {0.5, -0.25, 4.0}}},
  };
  return pts;
}

}  // namespace

TEST(Ops, EveryNonLeafOpHasFiniteDifferencePoints) {
  for (const OpInfo& o : kOps) {
    if (o.group == OpGroup::Leaf) continue;
    EXPECT_TRUE(smoothPoints().count(o.op)) << "op '" << o.name << "' has no test points: add some to smoothPoints()";
  }
}

// Central difference (f(x+h) - f(x-h)) / 2h has error h^2 f'''/6; with
// h = 1e-5 * max(1, |x|) that is ~1e-10 relative here, and rounding adds
// ~eps |f| / h ~ 1e-11 relative. 1e-7 relative leaves a wide margin yet catches
// any wrong adjoint rule (those are off by O(1)).
TEST(Ops, AdjointsMatchCentralFiniteDifferences) {
  for (const OpInfo& o : kOps) {
    if (o.group == OpGroup::Leaf) continue;
    const Tape t = oneOpTape(o.op);
    ASSERT_EQ(validate(t), "");
    for (const std::vector<double>& in : smoothPoints().at(o.op)) {
      const Eval e = onReference(t, in);
      const double b = in.size() > 1 ? in[1] : 0.0, c = in.size() > 2 ? in[2] : 0.0;
      EXPECT_EQ(e.value, forwardOf(o.op, in[0], b, c)) << o.name << " at " << g17(in[0]) << ", " << g17(b);
      ASSERT_EQ(e.greeks.size(), in.size());
      for (size_t k = 0; k < in.size(); ++k) {
        const double h = 1e-5 * std::max(1.0, std::fabs(in[k]));
        std::vector<double> up = in, down = in;
        up[k] += h;
        down[k] -= h;
        const double fd = (valueAt(t, up) - valueAt(t, down)) / ((up[k] - down[k]));
        EXPECT_NEAR(e.greeks[k], fd, 1e-7 * std::max(1.0, std::fabs(fd)))
            << o.name << " d/d" << t.inputNames[k] << " at " << g17(in[0]) << ", " << g17(b) << ": adjoint "
            << g17(e.greeks[k]) << ", finite difference " << g17(fd);
      }
    }
  }
}

// The Taylor test proper: the remainder f(x+h) - f(x) - h f'(x) is O(h^2)
// when f' is the true derivative. Halving h must divide it by ~4 (an O(h)
// remainder, from a wrong adjoint, would only halve).
TEST(Ops, TaylorRemainderIsSecondOrder) {
  for (const OpInfo& o : kOps) {
    if (o.group == OpGroup::Leaf || o.group == OpGroup::Kink || o.group == OpGroup::Step) continue;  // piecewise linear
    if (o.op == Op::Add || o.op == Op::Sub || o.op == Op::Neg) continue;  // linear: remainder is rounding only
    const Tape t = oneOpTape(o.op);
    const std::vector<double> in = smoothPoints().at(o.op)[1];
    const Eval e = onReference(t, in);
    // Direction: every input moves (mul's remainder h^2 needs both to move).
    const std::vector<double> dir = {0.6, -0.8, 0.5};
    double slope = 0;
    for (size_t k = 0; k < in.size(); ++k) slope += e.greeks[k] * dir[k];
    auto remainder = [&](double h) {
      std::vector<double> p = in;
      for (size_t k = 0; k < in.size(); ++k) p[k] += h * dir[k];
      return std::fabs(valueAt(t, p) - e.value - h * slope);
    };
    const double r1 = remainder(1e-2), r2 = remainder(5e-3);
    const double ratio = r1 / r2;
    EXPECT_GT(ratio, 3.5) << o.name << ": remainders " << g17(r1) << ", " << g17(r2);
    EXPECT_LT(ratio, 4.5) << o.name << ": remainders " << g17(r1) << ", " << g17(r2);
  }
}

TEST(Ops, MaxTieSendsTheBlameToA) {
  const Tape t = oneOpTape(Op::Max);
  for (double v : {1.5, -2.0, 0.0}) {
    const Eval e = onReference(t, {v, v});
    EXPECT_EQ(e.value, v);
    EXPECT_EQ(e.greeks[0], 1.0) << "max(a, b) with a == b == " << v;
    EXPECT_EQ(e.greeks[1], 0.0) << "max(a, b) with a == b == " << v;
  }
  // Just either side of the tie, the blame follows the larger argument.
  const double v = 1.5, above = std::nextafter(v, 10.0);
  EXPECT_EQ(onReference(t, {above, v}).greeks, (std::vector<double>{1.0, 0.0}));
  EXPECT_EQ(onReference(t, {v, above}).greeks, (std::vector<double>{0.0, 1.0}));
}

TEST(Ops, MinTieSendsTheBlameToA) {
  const Tape t = oneOpTape(Op::Min);
  for (double v : {1.5, -2.0, 0.0}) {
    const Eval e = onReference(t, {v, v});
    EXPECT_EQ(e.value, v);
    EXPECT_EQ(e.greeks[0], 1.0) << "min(a, b) with a == b == " << v;
    EXPECT_EQ(e.greeks[1], 0.0) << "min(a, b) with a == b == " << v;
  }
  const double v = 1.5, below = std::nextafter(v, -10.0);
  EXPECT_EQ(onReference(t, {below, v}).greeks, (std::vector<double>{1.0, 0.0}));
  EXPECT_EQ(onReference(t, {v, below}).greeks, (std::vector<double>{0.0, 1.0}));
}

TEST(Ops, AbsSendsTheSignOfItsArgument) {
  const Tape t = oneOpTape(Op::Abs);
  for (double x : {0.75, 1e-300, 3e5}) {
    const Eval pos = onReference(t, {x});
    EXPECT_EQ(pos.value, x);
    EXPECT_EQ(pos.greeks[0], 1.0) << "abs at " << g17(x);
    const Eval neg = onReference(t, {-x});
    EXPECT_EQ(neg.value, x);
    EXPECT_EQ(neg.greeks[0], -1.0) << "abs at " << g17(-x);
  }
  // At the kink, a < 0 is false: +d.
  EXPECT_EQ(onReference(t, {0.0}).greeks[0], 1.0);
  EXPECT_EQ(onReference(t, {-0.0}).greeks[0], 1.0);
}

// The adjoint at a tie of a kink op matches the one-sided difference in the
// direction the rule favours: max(a, b) at a == b grows with a when a moves up.
TEST(Ops, KinkTiesMatchOneSidedDifferences) {
  const double v = 0.8, h = 1e-6;
  const Tape mx = oneOpTape(Op::Max), mn = oneOpTape(Op::Min);
  EXPECT_NEAR((valueAt(mx, {v + h, v}) - valueAt(mx, {v, v})) / h, onReference(mx, {v, v}).greeks[0], 1e-9);
  EXPECT_NEAR((valueAt(mn, {v, v}) - valueAt(mn, {v - h, v})) / h, onReference(mn, {v, v}).greeks[0], 1e-9);
}

// Known answers of the ops the product zoo brought (tape/ops.def): values and adjoints in closed form.
TEST(Ops, PowKnownAnswers) {
  const Tape t = oneOpTape(Op::Pow);
  const Eval sq = onReference(t, {3.0, 2.0});  // 3^2: d/dx = 2*3, d/dy = 9 ln 3
  EXPECT_EQ(sq.value, 9.0);
  EXPECT_EQ(sq.greeks[0], 2.0 * std::pow(3.0, 1.0));
  EXPECT_EQ(sq.greeks[1], 9.0 * std::log(3.0));
  const Eval root = onReference(t, {4.0, 0.5});  // sqrt(4) = 2: d/dx = 0.5 / 2, d/dy = 2 ln 4
  EXPECT_EQ(root.value, 2.0);
  EXPECT_EQ(root.greeks[0], 0.5 * std::pow(4.0, -0.5));
  EXPECT_EQ(root.greeks[1], 2.0 * std::log(4.0));
  // At a = 0 with b > 1 the rule to a is b * 0^(b-1) = 0 (not the 0/0 of b*r/a).
  EXPECT_EQ(onReference(t, {0.0, 2.0}).greeks[0], 0.0);
}

TEST(Ops, TanhKnownAnswers) {
  const Tape t = oneOpTape(Op::Tanh);
  const Eval zero = onReference(t, {0.0});
  EXPECT_EQ(zero.value, 0.0);
  EXPECT_EQ(zero.greeks[0], 1.0);
  const Eval e = onReference(t, {0.5});
  EXPECT_EQ(e.value, std::tanh(0.5));
  EXPECT_EQ(e.greeks[0], 1.0 - std::tanh(0.5) * std::tanh(0.5));
  EXPECT_EQ(onReference(t, {40.0}).value, 1.0);  // saturates; the derivative underflows to 0
  EXPECT_EQ(onReference(t, {40.0}).greeks[0], 0.0);
}

// Comparisons give 1 or 0 and send nothing back; ties: lt false, le true.
TEST(Ops, ComparisonsGiveOneOrZeroAndNoDerivative) {
  const Tape lt = oneOpTape(Op::Lt), le = oneOpTape(Op::Le);
  for (const auto& [x, y] : std::vector<std::pair<double, double>>{{1.0, 2.0}, {2.0, 1.0}, {1.5, 1.5}, {-0.0, 0.0}}) {
    const Eval a = onReference(lt, {x, y}), b = onReference(le, {x, y});
    EXPECT_EQ(a.value, x < y ? 1.0 : 0.0) << "lt " << x << " " << y;
    EXPECT_EQ(b.value, x <= y ? 1.0 : 0.0) << "le " << x << " " << y;
    EXPECT_EQ(a.greeks, (std::vector<double>{0.0, 0.0}));
    EXPECT_EQ(b.greeks, (std::vector<double>{0.0, 0.0}));
  }
  EXPECT_EQ(onReference(lt, {1.5, 1.5}).value, 0.0);
  EXPECT_EQ(onReference(le, {1.5, 1.5}).value, 1.0);
}

// select(c, x, y) = x where c > 0, else y (c = 0 and -0 pick y); the adjoint follows the pick.
TEST(Ops, SelectPicksAndRoutesTheAdjoint) {
  const Tape t = oneOpTape(Op::Select);
  const Eval on = onReference(t, {1.0, 2.5, -7.0});
  EXPECT_EQ(on.value, 2.5);
  EXPECT_EQ(on.greeks, (std::vector<double>{0.0, 1.0, 0.0}));
  for (double c : {0.0, -0.0, -1.0}) {
    const Eval off = onReference(t, {c, 2.5, -7.0});
    EXPECT_EQ(off.value, -7.0) << "condition " << c;
    EXPECT_EQ(off.greeks, (std::vector<double>{0.0, 0.0, 1.0})) << "condition " << c;
  }
  // An infinity or NaN on the side not picked does not reach the value or the adjoints.
  const double inf = std::numeric_limits<double>::infinity();
  const Eval guarded = onReference(t, {1.0, 2.5, inf});
  EXPECT_EQ(guarded.value, 2.5);
  EXPECT_EQ(guarded.greeks, (std::vector<double>{0.0, 1.0, 0.0}));
}

// A digital through the Recorder's operators: select(s > k, 1, 0) prices P(s > k) and
// the indicator's derivative is zero path by path (the pathwise estimator's known blind spot).
TEST(Ops, RecordedDigitalIsTheIndicator) {
  Tape t;
  const int32_t s = t.addInput("s", 1.2), k = t.addInput("k", 1.0);
  const int32_t one = t.push(Op::Const, -1, -1, 1.0), zero = t.push(Op::Const, -1, -1, 0.0);
  const int32_t above = t.push(Op::Lt, k, s);
  t.output = t.push3(Op::Select, above, one, zero);
  ASSERT_EQ(validate(t), "");
  EXPECT_EQ(onReference(t, {1.2, 1.0}).value, 1.0);
  EXPECT_EQ(onReference(t, {0.8, 1.0}).value, 0.0);
  EXPECT_EQ(onReference(t, {0.8, 1.0}).greeks, (std::vector<double>{0.0, 0.0}));
}

TEST(Ops, InputLeafIsTheIdentity) {
  Tape t;
  t.output = t.addInput("x", 2.5);
  ASSERT_EQ(validate(t), "");
  for (double x : {2.5, -0.0, 1e300}) {
    const Eval e = onReference(t, {x});
    EXPECT_EQ(e.value, x);
    EXPECT_EQ(e.greeks, std::vector<double>{1.0});
  }
}

TEST(Ops, ConstLeafHasNoDerivative) {
  for (double c : {0.1, -7.25, 0.0, 1e-300}) {
    Tape t;
    const int32_t x = t.addInput("x", 1.0);
    const int32_t k = t.push(Op::Const, -1, -1, c);
    Tape alone = t;
    alone.output = k;  // output = the constant: value c, d/dx = 0
    ASSERT_EQ(validate(alone), "");
    const Eval e0 = onReference(alone, {3.0});
    EXPECT_EQ(e0.value, c);
    EXPECT_EQ(e0.greeks, std::vector<double>{0.0});

    t.output = t.push(Op::Mul, x, k);  // x * c: d/dx = c
    const Eval e1 = onReference(t, {3.0});
    EXPECT_EQ(e1.value, 3.0 * c);
    EXPECT_EQ(e1.greeks, std::vector<double>{c});
  }
}

// z * x with z = randn k: d/dx is the draw itself, the same on every path as
// tape/philox.h's drawNormal<double>(seed, path, k).
TEST(Ops, RandnLeafIsTheDrawOfPhilox) {
  for (uint32_t k : {0u, 1u, 238u, 4294967295u}) {
    Tape t;
    const int32_t x = t.addInput("x", 1.0);
    const int32_t z = t.push(Op::Randn, -1, -1, static_cast<double>(k));
    t.output = t.push(Op::Mul, z, x);
    ASSERT_EQ(validate(t), "");
    const uint64_t seed = 0x0123456789abcdefull;
    for (uint64_t path : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 40}) {
      PathInterpreter<double> interp(t, nullptr, true);
      PathResult<double> out;
      interp.run({1.75}, seed, path, out);
      const double draw = drawNormal<double>(seed, path, k);
      EXPECT_EQ(out.adjoints, std::vector<double>{draw}) << "k " << k << " path " << path;
      EXPECT_EQ(out.value, draw * 1.75);
    }
    // Through the engine, 2 paths: the mean of the two draws.
    const PlainRun r = runPlainOnReference(t, 2, seed, {1.75});
    const double z0 = drawNormal<double>(seed, 0, k), z1 = drawNormal<double>(seed, 1, k);
    EXPECT_EQ(r.greek("x"), (z0 + z1) / 2) << "k " << k;
    EXPECT_EQ(r.price(), (z0 * 1.75 + z1 * 1.75) / 2) << "k " << k;
  }
}

// The reverse sweep adds a binary op's two contributions even when both
// arguments are the same node: x * x sends 2x, x - x sends 0, x / x sends 0.
TEST(Ops, SameNodeAsBothArgumentsAccumulatesBothContributions) {
  const std::map<Op, double> slope = {{Op::Add, 2.0}, {Op::Sub, 0.0}, {Op::Mul, 2.0 * 1.25},
                                      {Op::Div, 0.0}, {Op::Max, 1.0}, {Op::Min, 1.0}};
  for (const auto& [op, expected] : slope) {
    Tape t;
    const int32_t x = t.addInput("x", 1.25);
    t.output = t.push(op, x, x);
    EXPECT_EQ(onReference(t, {1.25}).greeks[0], expected) << name(op);
  }
}

// The other precisions apply the same rules: reference-f32 and reference-mp
// give the double adjoint of every one-op tape within their own rounding.
TEST(Ops, AdjointsAgreeAcrossReferencePrecisions) {
  for (const OpInfo& o : kOps) {
    if (o.group == OpGroup::Leaf) continue;
    const Tape t = oneOpTape(o.op);
    for (const std::vector<double>& in : smoothPoints().at(o.op)) {
      const Eval d = onReference(t, in);
      for (const char* engine : {"reference-f32", "reference-mp"}) {
        const PlainRun r = runPlainOnReference(t, 2, 7, in, engine);
        // f32: inputs are rounded to float (relative 6e-8) and each op rounds once more.
        const double tol = std::string(engine) == "reference-f32" ? 1e-6 : 1e-15;
        EXPECT_NEAR(r.price(), d.value, tol * std::max(1.0, std::fabs(d.value))) << engine << " " << o.name;
        for (size_t k = 0; k < in.size(); ++k)
          EXPECT_NEAR(r.run.markets[0].greeks[k], d.greeks[k], tol * std::max(1.0, std::fabs(d.greeks[k])))
              << engine << " " << o.name << " d/d" << t.inputNames[k];
      }
    }
  }
}
