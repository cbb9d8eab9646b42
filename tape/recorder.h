// Recorder: write a product as ordinary C++ arithmetic on `Var`, get a Tape.
//
//   Recorder rec;
//   Var s = rec.input("spot", 100), k = rec.input("strike", 100);
//   rec.output(max(s - k, 0.0));
//   Tape t = rec.finish();
//
// Every operation appends one node; a double operand becomes a `const` node.
#pragma once
#include <string>

#include "tape/tape.h"

namespace tapelab {

class Recorder;

class Var {
 public:
  Var() = default;
  int32_t node() const { return node_; }
  Recorder* recorder() const { return rec_; }

 private:
  friend class Recorder;
  Var(Recorder* rec, int32_t node) : rec_(rec), node_(node) {}
  Recorder* rec_ = nullptr;
  int32_t node_ = -1;
};

class Recorder {
 public:
  Var input(const std::string& name, double defaultValue) { return {this, tape_.addInput(name, defaultValue)}; }
  Var constant(double v) { return {this, tape_.push(Op::Const, -1, -1, v)}; }
  Var randn(uint32_t k) { return {this, tape_.push(Op::Randn, -1, -1, static_cast<double>(k))}; }
  Var unary(Op op, Var x) { return {this, tape_.push(op, x.node())}; }
  Var binary(Op op, Var x, Var y) { return {this, tape_.push(op, x.node(), y.node())}; }
  Var ternary(Op op, Var x, Var y, Var z) { return {this, tape_.push3(op, x.node(), y.node(), z.node())}; }
  void output(Var v) { tape_.output = v.node(); }
  const Tape& tape() const { return tape_; }
  Tape finish() { return std::move(tape_); }

 private:
  Tape tape_;
};

inline Var operator+(Var x, Var y) { return x.recorder()->binary(Op::Add, x, y); }
inline Var operator-(Var x, Var y) { return x.recorder()->binary(Op::Sub, x, y); }
inline Var operator*(Var x, Var y) { return x.recorder()->binary(Op::Mul, x, y); }
inline Var operator/(Var x, Var y) { return x.recorder()->binary(Op::Div, x, y); }
inline Var operator-(Var x) { return x.recorder()->unary(Op::Neg, x); }
inline Var exp(Var x) { return x.recorder()->unary(Op::Exp, x); }
inline Var log(Var x) { return x.recorder()->unary(Op::Log, x); }
inline Var sqrt(Var x) { return x.recorder()->unary(Op::Sqrt, x); }
inline Var abs(Var x) { return x.recorder()->unary(Op::Abs, x); }
inline Var max(Var x, Var y) { return x.recorder()->binary(Op::Max, x, y); }
inline Var min(Var x, Var y) { return x.recorder()->binary(Op::Min, x, y); }
inline Var pow(Var x, Var y) { return x.recorder()->binary(Op::Pow, x, y); }
inline Var tanh(Var x) { return x.recorder()->unary(Op::Tanh, x); }
// Comparisons record 1 or 0 (lt, le; > and >= swap the operands); select(c, x, y) is x where c > 0, else y.
inline Var operator<(Var x, Var y) { return x.recorder()->binary(Op::Lt, x, y); }
inline Var operator<=(Var x, Var y) { return x.recorder()->binary(Op::Le, x, y); }
inline Var operator>(Var x, Var y) { return y.recorder()->binary(Op::Lt, y, x); }
inline Var operator>=(Var x, Var y) { return y.recorder()->binary(Op::Le, y, x); }
inline Var select(Var c, Var x, Var y) { return c.recorder()->ternary(Op::Select, c, x, y); }

#define TAPELAB_MIXED(OP)                                                          \
  inline Var operator OP(Var x, double c) { return x OP x.recorder()->constant(c); } \
  inline Var operator OP(double c, Var y) { return y.recorder()->constant(c) OP y; }
TAPELAB_MIXED(+)
TAPELAB_MIXED(-)
TAPELAB_MIXED(*)
TAPELAB_MIXED(/)
TAPELAB_MIXED(<)
TAPELAB_MIXED(<=)
TAPELAB_MIXED(>)
TAPELAB_MIXED(>=)
#undef TAPELAB_MIXED
inline Var max(Var x, double c) { return max(x, x.recorder()->constant(c)); }
inline Var min(Var x, double c) { return min(x, x.recorder()->constant(c)); }
inline Var pow(Var x, double c) { return pow(x, x.recorder()->constant(c)); }
inline Var select(Var c, Var x, double y) { return select(c, x, c.recorder()->constant(y)); }
inline Var select(Var c, double x, Var y) { return select(c, c.recorder()->constant(x), y); }

}  // namespace tapelab
