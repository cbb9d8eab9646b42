#include "properties/gen.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "planner/strategies.h"
#include "properties/bound.h"
#include "tape/textformat.h"

namespace tapelab::props {

namespace {

using rc::Gen;
namespace gen = rc::gen;

constexpr int kMaxInputs = 8;
constexpr double kMag = 64;    // conditioned values stay within ~kMag (squares of it: kMag^2)
constexpr double kAway = 0.25;  // conditioned divisors and log/sqrt arguments: |x| >= kAway
// Conditioned tapes keep every value's error bound under the loosest fp32 row
// of the tolerance table within kErrBudget * max(1, |value|); a step that
// would exceed it is left out.
constexpr double kErrBudget = 1e-2;
// A back-offset of kInputRef + k names input k (mod the input count), so
// inputs read far down the tape and most Greeks are not zero.
constexpr uint32_t kInputRef = 0x80000000u;
constexpr uint32_t kUnreadRange = 64;

// Every op of tape/ops.def with arguments, in the table's order.
constexpr int kComputingOpCount =
    static_cast<int>(std::ranges::count_if(kOps, [](const OpInfo& op) { return op.arity > 0; }));
constexpr std::array<Op, kComputingOpCount> kComputingOps = [] {
  std::array<Op, kComputingOpCount> ops{};
  size_t k = 0;
  for (const OpInfo& op : kOps)
    if (op.arity > 0) ops[k++] = op.op;
  return ops;
}();
static_assert(kOpCount - kComputingOpCount == 3, "a new leaf op in tape/ops.def needs a share in kindToOp");

// Step.kind (0..99) -> op: 8% const, 4% input, 12% randn, the rest spread
// evenly over the computing ops. Shrinks towards const.
Op kindToOp(int kind) {
  kind = ((kind % 100) + 100) % 100;
  if (kind < 8) return Op::Const;
  if (kind < 12) return Op::Input;
  if (kind < 24) return Op::Randn;
  return kComputingOps[(kind - 24) * kComputingOpCount / 76];
}

// Smooth tapes have no kinks and no steps: each one's smooth stand-in (select's takes its b and c).
static_assert(std::ranges::count_if(kOps, [](const OpInfo& op) { return op.group == OpGroup::Kink; }) == 3,
              "a new kink in tape/ops.def needs a smooth stand-in in smoothStandIn");
static_assert(std::ranges::count_if(kOps, [](const OpInfo& op) { return op.group == OpGroup::Step; }) == 3,
              "a new step in tape/ops.def needs a smooth stand-in in smoothStandIn");
Op smoothStandIn(Op op) {
  switch (op) {
    case Op::Max: return Op::Add;
    case Op::Min: return Op::Sub;
    case Op::Abs: return Op::Neg;
    case Op::Lt: return Op::Sub;
    case Op::Le: return Op::Mul;
    case Op::Select: return Op::Add;
    default: return op;
  }
}

double finiteOr(double v, double fallback) { return std::isfinite(v) ? v : fallback; }

// Wild values by wildness: magnitudes up to 16, 1e3, then anything (the
// palette's huge values too); signed zeros and subnormals at every level.
constexpr double kWildRange[5] = {16, 1e3, std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
double wildValue(double v, uint32_t wildness) {
  v = finiteOr(v, 0.0);
  const double lim = kWildRange[std::min<uint32_t>(wildness, 4)];
  return std::fabs(v) > lim ? std::fmod(v, lim) : v;
}

// Folds any double into [-lim, lim], keeping small values (and the sign of zero).
double fold(double v, double lim) {
  v = finiteOr(v, 0.0);
  if (std::fabs(v) > lim) v = std::fmod(v, lim);
  return v;
}

// A constant c in [0.5, 2) from any double, for x*x + c.
double positiveConstant(double v) { return 0.5 + 1.5 * std::fabs(std::fmod(finiteOr(v, 0.0), 1.0)); }

const ErrorModel& exactModel() {
  static const ErrorModel m{"exact", Precision::F64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
  return m;
}

class Builder {
 public:
  // Wild tapes need intervals only (eps = 0); the others an fp32 error budget.
  Builder(TapeMode mode, uint32_t wildness, size_t steps)
      : mode_(mode), wildness_(std::min<uint32_t>(wildness, 4)),
        loose_(mode == TapeMode::Wild ? exactModel() : errorModel("*", Precision::F32)) {
    // Out of 1024 steps, how many skip the guards: about 2 or 10 per tape, a quarter, all.
    const double share[5] = {0, 2.0 / std::max<size_t>(steps, 1), 10.0 / std::max<size_t>(steps, 1), 0.25, 1};
    bypass_ = static_cast<uint32_t>(std::min(1.0, share[wildness_]) * 1024);
  }

  void input(double v) {
    if (t_.numInputs() >= kMaxInputs) return constant(v);
    const double value = mode_ == TapeMode::Wild ? wildValue(v, wildness_) : fold(v, 1.9);
    std::string name = "x";  // (not "x" + to_string: GCC 12's -Wrestrict false positive)
    name += std::to_string(t_.numInputs());
    const int32_t node = t_.addInput(name, value);
    add(node);
    if (mode_ == TapeMode::Wild) {  // markets may take any value of this wildness
      const double lim = kWildRange[wildness_];
      v_.back() = Bound(-lim, lim, 0.0);
    }
  }

  void constant(double v) {
    if (mode_ == TapeMode::Wild) {
      v = wildValue(v, wildness_);
    } else {
      v = fold(v, 4.0);
      if (std::fabs(v) < 1e-6) v = std::copysign(0.0, v);  // no subnormals in conditioned tapes
    }
    add(t_.push(Op::Const, -1, -1, v));
  }

  void step(const Step& s) {
    Op op = kindToOp(s.kind);
    if (op == Op::Const || t_.size() == 0) return constant(s.value);
    if (op == Op::Input) return input(s.value);
    if (op == Op::Randn) return add(t_.push(Op::Randn, -1, -1, static_cast<double>(s.draw)));
    const int32_t x = arg(s.a, -1), y = arg(s.b, x), z = arg(s.c, y);
    // Wild steps skip the guards with the tape's probability (and wherever an
    // argument's interval is already unbounded: the guards need finite ones).
    if (mode_ == TapeMode::Wild &&
        (s.salt >= 1024 - bypass_ || !v_[x].bounded() || (arity(op) >= 2 && !v_[y].bounded()) ||
         (arity(op) >= 3 && !v_[z].bounded()))) {
      add(arity(op) == 3 ? t_.push3(op, x, y, z) : t_.push(op, x, arity(op) == 2 ? y : -1));
      return;
    }
    if (mode_ == TapeMode::Smooth && op == Op::Select) {  // its stand-in adds the values select picks from
      tryPush(smoothStandIn(op), squash(y, kMag / 2), squash(z, kMag / 2));
      return;
    }
    if (mode_ == TapeMode::Smooth) op = smoothStandIn(op);
    const double c = positiveConstant(s.value);
    // How each op's arguments are conditioned. No default: a new op in
    // tape/ops.def fails to build here (-Werror=switch) until it has a rule.
    switch (op) {
      case Op::Add:
      case Op::Sub: tryPush(op, squash(x, kMag / 2), squash(y, kMag / 2)); break;
      case Op::Mul: tryPush(op, squash(x, 8), squash(y, 8)); break;
      case Op::Div: {
        const int32_t den = away(y, c, s.b & 1);
        tryPush(op, squash(x, kMag * v_[den].mig()), den);
        break;
      }
      case Op::Exp: {
        const Bound& b = v_[x];
        tryPush(op, b.hi > 4 || b.lo < -20 ? squash(x, 4) : x, -1);
        break;
      }
      case Op::Log:
      case Op::Sqrt: tryPush(op, positive(x, c, s.b & 1), -1); break;
      case Op::Neg:
      case Op::Abs: tryPush(op, x, -1); break;
      case Op::Max:
      case Op::Min: tryPush(op, x, y); break;
      case Op::Pow: tryPush(op, positive(x, c, s.b & 1), squash(y, 2)); break;
      case Op::Tanh: tryPush(op, x, -1); break;
      // A step's value may jump where rounding differs: the bound keeps it only where its
      // comparison is certain (else its error is the jump, over the budget), so conditioned
      // tapes seldom hold one; wild tapes (exactness) take them anywhere.
      case Op::Lt:
      case Op::Le: tryPush(op, x, y); break;
      case Op::Select: tryPush(op, x, y, z); break;
      case Op::Const:
      case Op::Input:
      case Op::Randn: break;  // leaves: pushed above
    }
  }

  Tape finish(uint32_t outputBack) {
    if (t_.size() == 0) constant(1.0);
    // Sum what nobody reads into the last node, so (nearly) every node is live.
    std::vector<int32_t> sinks = unread_;
    if (sinks.size() > 1) {
      int32_t acc = sinks[0];
      for (size_t k = 1; k < sinks.size(); ++k) {
        if (mode_ == TapeMode::Wild && (!v_[acc].bounded() || !v_[sinks[k]].bounded())) {
          binary(Op::Add, acc, sinks[k]);
        } else {
          const int32_t x = squash(acc, kMag / 2), y = squash(sinks[k], kMag / 2);
          if (!tryPush(Op::Add, x, y)) continue;
        }
        acc = last();
      }
    }
    t_.output = t_.size() - 1 - static_cast<int32_t>(outputBack % static_cast<uint32_t>(t_.size()));
    return std::move(t_);
  }

 private:
  // back < kUnreadRange: the back-th most recent node nobody reads yet (not
  // `skip`), so tapes are mostly live; else any node, or an input.
  int32_t arg(uint32_t back, int32_t skip) const {
    if (back >= kInputRef && t_.numInputs() > 0)
      return t_.inputNodes[(back - kInputRef) % static_cast<uint32_t>(t_.numInputs())];
    if (back < kUnreadRange) {
      const uint32_t count = static_cast<uint32_t>(unread_.size()) -
                             (std::find(unread_.begin(), unread_.end(), skip) != unread_.end() ? 1 : 0);
      if (count > 0) {
        uint32_t k = back % count;
        for (auto it = unread_.rbegin(); it != unread_.rend(); ++it) {
          if (*it == skip) continue;
          if (k-- == 0) return *it;
        }
      }
    }
    const auto n = static_cast<uint32_t>(t_.size());
    return static_cast<int32_t>(n - 1 - back % n);
  }

  void add(int32_t node) {
    const Op op = t_.op[node];
    forEachArg(t_, node, [&](int32_t j) { markRead(j); });
    unread_.push_back(node);
    if (arity(op) == 0) {
      v_.push_back(leafBound(t_, node, loose_));
    } else {
      const int32_t a = t_.a[node], b = arity(op) >= 2 ? t_.b[node] : a, c = arity(op) >= 3 ? t_.c[node] : a;
      v_.push_back(forwardBound(op, v_[a], v_[b], v_[c], arity(op) == 2 && a == b, loose_));
    }
  }
  void markRead(int32_t j) {
    const auto it = std::find(unread_.rbegin(), unread_.rend(), j);
    if (it != unread_.rend()) unread_.erase(std::next(it).base());
  }
  // The step's op, unless its value would leave the error budget.
  bool tryPush(Op op, int32_t x, int32_t y, int32_t z = -1) {
    const bool two = arity(op) >= 2, three = arity(op) >= 3;
    const Bound r = forwardBound(op, v_[x], two ? v_[y] : v_[x], three ? v_[z] : v_[x], arity(op) == 2 && x == y, loose_);
    if (mode_ != TapeMode::Wild && (!r.bounded() || r.err > kErrBudget * std::max(1.0, r.mag()))) return false;
    add(three ? t_.push3(op, x, y, z) : t_.push(op, x, two ? y : -1));
    return true;
  }
  void unary(Op op, int32_t x) { add(t_.push(op, x)); }
  void binary(Op op, int32_t x, int32_t y) { add(t_.push(op, x, y)); }
  int32_t last() const { return t_.size() - 1; }
  int32_t cnst(double c) {
    add(t_.push(Op::Const, -1, -1, c));
    return last();
  }

  // x scaled into [-lim, lim] (a mul by a constant), or x itself when it is inside.
  int32_t squash(int32_t x, double lim) {
    const double m = v_[x].mag();
    if (m <= lim || !v_[x].bounded() || !(m < 1e300)) return x;
    const double s = lim / m * 0.9990234375;
    const int32_t k = cnst(s);
    binary(Op::Mul, x, k);
    return last();
  }

  // x when x >= kAway, else x*x + c (or |x| + c in Conditioned mode when `useAbs`).
  int32_t positive(int32_t x, double c, bool useAbs) {
    if (v_[x].lo >= kAway || !v_[x].bounded()) return x;
    int32_t base;
    if (useAbs && mode_ != TapeMode::Smooth) {
      unary(Op::Abs, squash(x, kMag));
    } else {
      const int32_t sx = squash(x, 8);
      binary(Op::Mul, sx, sx);
    }
    base = last();
    const int32_t k = cnst(c);
    binary(Op::Add, base, k);
    return last();
  }

  // y when |y| >= kAway everywhere, else positive(y).
  int32_t away(int32_t y, double c, bool useAbs) {
    const Bound& b = v_[y];
    if (b.lo >= kAway || b.hi <= -kAway || !b.bounded()) return y;
    return positive(y, c, useAbs);
  }

  TapeMode mode_;
  uint32_t wildness_;
  uint32_t bypass_ = 0;
  Tape t_;
  std::vector<int32_t> unread_;  // nodes no node reads yet, ascending
  std::vector<Bound> v_;  // intervals and fp32 error bounds (Conditioned/Smooth)
  const ErrorModel& loose_;
};

Gen<uint32_t> genBackOffset() {
  return gen::weightedOneOf<uint32_t>({{6, gen::inRange<uint32_t>(0, 4)},
                                       {3, gen::inRange<uint32_t>(0, 64)},
                                       {1, gen::inRange<uint32_t>(0, 1u << 20)},
                                       {1, gen::inRange<uint32_t>(kInputRef, kInputRef + kMaxInputs)}});
}

Gen<uint32_t> genDraw() {
  // Mostly a few indices (so draws are reused), in any order; sometimes far ones.
  return gen::weightedOneOf<uint32_t>({{6, gen::inRange<uint32_t>(0, 8)},
                                       {3, gen::inRange<uint32_t>(0, 256)},
                                       {1, gen::arbitrary<uint32_t>()}});
}

Gen<double> genWild() {
  static const std::vector<double> specials = {
      0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 3.0,
      1e-310, -4.9406564584124654e-324, 2.2250738585072014e-308,  // double subnormals, DBL_MIN
      1e-40, -1.401298464324817e-45, 1.1754943508222875e-38,      // float subnormals, FLT_MIN
      3.4028234663852886e+38, 3.5e38, -1e39,                        // FLT_MAX, beyond it
      1.7976931348623157e+308, -1.7976931348623157e+308, 1e300,   // DBL_MAX
      88.8, 89.0, 709.0, 710.0, -104.0, -746.0,                    // exp overflow / underflow edges
      2.220446049250313e-16, 1.0000000000000002, 0.9999999999999999, 1.1920928955078125e-07};
  return gen::weightedOneOf<double>({
      {4, gen::map(gen::inRange(-1000, 1001), [](int k) { return k / 100.0; })},
      {3, gen::elementOf(specials)},
      {1, gen::map(gen::pair(gen::inRange(-330, 310), gen::inRange(-9, 10)),
                   [](std::pair<int, int> p) { return p.second * std::pow(10.0, p.first); })},
      {1, gen::map(gen::arbitrary<double>(), [](double v) { return finiteOr(v, 0.0); })},
  });
}

Gen<double> genModerate() {
  return gen::map(gen::inRange(-1900, 1901), [](int k) { return k / 1000.0; });
}

Gen<Step> genStep(TapeMode mode) {
  return gen::apply(
      [](int kind, uint32_t a, uint32_t b, uint32_t c, double value, uint32_t draw, uint32_t salt) {
        return Step{kind, a, b, c, value, draw, salt};
      },
      gen::inRange(0, 100), genBackOffset(), genBackOffset(), genBackOffset(), genValue(mode), genDraw(),
      gen::inRange<uint32_t>(0, 1024));
}

}  // namespace

const char* toString(TapeMode m) {
  switch (m) {
    case TapeMode::Wild: return "wild";
    case TapeMode::Conditioned: return "conditioned";
    case TapeMode::Smooth: return "smooth";
  }
  return "?";
}

Tape buildTape(const TapeSpec& spec) {
  Builder b(spec.mode, spec.wildness, spec.steps.size());
  for (double v : spec.inputs) b.input(v);
  for (const Step& s : spec.steps) b.step(s);
  Tape t = b.finish(spec.outputBack);
  t.name = std::string("property-") + toString(spec.mode);
  return t;
}

Gen<double> genValue(TapeMode mode) { return mode == TapeMode::Wild ? genWild() : genModerate(); }

Gen<TapeSpec> genTapeSpec(TapeMode mode, int maxNodes) {
  const double scale = std::max(1, maxNodes) / 100.0;
  return gen::apply(
      [mode](std::vector<double> inputs, std::vector<Step> steps, uint32_t outputBack, uint32_t wildness) {
        return TapeSpec{mode, std::move(inputs), std::move(steps), outputBack, mode == TapeMode::Wild ? wildness : 0};
      },
      gen::resize(100, gen::mapcat(gen::inRange(0, 5),
                                   [mode](int k) { return gen::container<std::vector<double>>(k, genValue(mode)); })),
      gen::scale(scale, gen::container<std::vector<Step>>(gen::resize(100, genStep(mode)))),
      gen::resize(100, gen::weightedOneOf<uint32_t>({{8, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(0, 100)}})),
      gen::resize(100, gen::weightedElement<uint32_t>({{3, 0}, {3, 1}, {2, 2}, {1, 3}, {1, 4}})));
}

Gen<std::vector<std::vector<double>>> genMarkets(const TapeSpec& spec, int count, int inputs) {
  Gen<double> value = genValue(spec.mode);
  if (spec.mode == TapeMode::Wild)
    value = gen::map(value, [w = spec.wildness](double v) { return wildValue(v, w); });
  // Half the time a ladder: the markets share market 0's value of each input but those a mask picks
  // (KernelOptions::sharedInputs then has something to share).
  return gen::resize(
      100, gen::apply(
               [](std::vector<std::vector<double>> sets, bool ladder, std::vector<bool> varies) {
                 if (ladder)
                   for (size_t m = 1; m < sets.size(); ++m)
                     for (size_t k = 0; k < sets[m].size(); ++k)
                       if (k >= varies.size() || !varies[k]) sets[m][k] = sets[0][k];
                 return sets;
               },
               gen::container<std::vector<std::vector<double>>>(count, gen::container<std::vector<double>>(inputs, value)),
               gen::arbitrary<bool>(),
               gen::container<std::vector<bool>>(size_t(inputs), gen::weightedElement<bool>({{2, false}, {1, true}}))));
}

Gen<PlanSpec> genPlanSpec() {
  return gen::resize(
      100, gen::apply(
               [](uint32_t strategy, uint32_t segments, uint32_t segLen, std::vector<uint32_t> cuts,
                  std::vector<uint32_t> nest) {
                 return PlanSpec{strategy, segments, segLen, std::move(cuts), std::move(nest)};
               },
               gen::inRange<uint32_t>(0, static_cast<uint32_t>(strategies().size()) + 3),
               gen::weightedOneOf<uint32_t>({{6, gen::inRange<uint32_t>(0, 20)}, {2, gen::arbitrary<uint32_t>()}}),
               gen::weightedOneOf<uint32_t>({{3, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(0, 64)},
                                             {1, gen::arbitrary<uint32_t>()}}),
               gen::container<std::vector<uint32_t>>(gen::arbitrary<uint32_t>()),
               gen::container<std::vector<uint32_t>>(gen::arbitrary<uint32_t>())));
}

namespace {

// Reads a PlanSpec's `nest` numbers one at a time, 0 once they run out.
struct Stream {
  const std::vector<uint32_t>& numbers;
  size_t at = 0;
  uint32_t next() { return at < numbers.size() ? numbers[at++] : 0u; }
};

// A cut of [begin, end): none, or 1-3 cuts, a chain or kept, nested again below.
CutTree randomCuts(Stream& in, int32_t begin, int32_t end, int depth) {
  CutTree c;
  const int32_t len = end - begin;
  const uint32_t count = in.next() % 4;
  if (len < 2 || depth == 0 || count == 0) return c;
  for (uint32_t k = 0; k < count; ++k) c.cuts.push_back(begin + 1 + static_cast<int32_t>(in.next() % uint32_t(len - 1)));
  std::sort(c.cuts.begin(), c.cuts.end());
  c.cuts.erase(std::unique(c.cuts.begin(), c.cuts.end()), c.cuts.end());
  c.chain = in.next() % 3 == 0;
  if (!c.chain)
    for (size_t k = 0; k <= c.cuts.size(); ++k)
      c.inner.push_back(randomCuts(in, k == 0 ? begin : c.cuts[k - 1], k == c.cuts.size() ? end : c.cuts[k], depth - 1));
  return c;
}

}  // namespace

Plan buildPlan(const Tape& t, const PlanSpec& s) {
  const uint32_t n = static_cast<uint32_t>(t.size());
  const auto& list = strategies();
  if (s.strategy < list.size()) {
    PlanOptions o;
    o.segments = static_cast<int>(1 + s.segments % n);
    o.segLen = s.segLen == 0 ? 0 : static_cast<int>(1 + s.segLen % n);
    o.innerSegments = static_cast<int>(1 + s.segLen % 6);
    return makeStrategyPlan(list[s.strategy].name, t, o);
  }
  std::vector<int32_t> bounds{0};
  for (uint32_t c : s.cuts) bounds.push_back(static_cast<int32_t>(c % n));
  bounds.push_back(static_cast<int32_t>(n));
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  if (s.strategy == list.size() + 2) {  // per-value: a random kept set over the random blocks
    std::vector<int32_t> keep;
    for (uint32_t k : s.nest) keep.push_back(static_cast<int32_t>(k % n));
    return makePerValuePlan(t, std::move(bounds), std::move(keep), "random-keep");
  }
  if (s.strategy == list.size() || bounds.size() == 2) return makePlan(t, std::move(bounds), "random-cuts");
  Stream in{s.nest};
  std::vector<CutTree> inner;
  for (size_t k = 0; k + 1 < bounds.size(); ++k) inner.push_back(randomCuts(in, bounds[k], bounds[k + 1], 3));
  return makePlan(t, std::move(bounds), "random-nested", std::move(inner));
}

std::string describePlan(const Plan& p) {
  std::ostringstream os;
  os << p.strategy << ", " << p.segments() << " segments" << (p.nested() ? " (nested, depth " + std::to_string(p.depth()) + ")" : "")
     << ", bounds {";
  for (size_t i = 0; i < p.bounds.size() && i < 40; ++i) os << (i ? " " : "") << p.bounds[i];
  if (p.bounds.size() > 40) os << " ...";
  os << "}, " << p.crossing.size() << " crossing, " << p.scratchSlots << " slots";
  return os.str();
}

std::vector<KernelKind> checkpointedKinds(const std::vector<KernelKind>& kinds) {
  std::vector<KernelKind> out;
  for (KernelKind k : kinds)
    if (k != KernelKind::Plain && k != KernelKind::Tangent) out.push_back(k);  // tangent: properties/prop_tangent.cpp
  return out;
}

Gen<CkptSpec> genCkptSpec(const std::vector<KernelKind>& kinds) {
  const std::vector<KernelKind> ck = checkpointedKinds(kinds);
  return gen::apply([](KernelKind k, PlanSpec p) { return CkptSpec{k, std::move(p)}; }, gen::elementOf(ck),
                    genPlanSpec());
}

KernelOptions checkpointedOptions(const Tape& tape, Precision precision, const CkptSpec& spec, bool perValuePlans) {
  KernelOptions o;
  o.precision = precision;
  o.kind = spec.kind;
  o.plan = buildPlan(tape, spec.plan);
  if (o.plan.perValue && !perValuePlans) o.plan = makePlan(tape, o.plan.bounds, o.plan.strategy + " (its cuts)");
  if (o.plan.perValue && o.kind == KernelKind::Scratch) o.kind = KernelKind::Register;  // a register plan
  return o;
}

namespace {

// Draws the fields of `c` that apply to `engine` and that `which` selects, each among its search values.
KernelConfig drawFields(KernelConfig c, const std::string& engine, Precision precision,
                        bool (*which)(const ConfigField&)) {
  for (const ConfigField& f : configFields()) {
    if (!fieldAppliesTo(f, engine) || !which(f)) continue;
    std::vector<std::string> values = searchValues(f);
    if (std::string(f.name) == "math") {  // the contracts this engine gives in this precision
      std::vector<std::string> ok;
      for (const std::string& v : values) {
        KernelConfig probe = c;
        f.set(probe, v, f.name);
        if (mathProblem(probe, engine, precision == Precision::F32).empty()) ok.push_back(v);
      }
      values = ok;
    }
    if (!values.empty()) f.set(c, *gen::elementOf(values), f.name);
  }
  return c;
}

}  // namespace

Gen<KernelConfig> genConfig(const std::string& engine, Precision precision) {
  return gen::exec([engine, precision] {
    return drawFields(KernelConfig{}, engine, precision, [](const ConfigField&) { return true; });
  });
}

Gen<KernelConfig> genSameBitsConfig(const KernelConfig& base, const std::string& engine) {
  return gen::exec([base, engine] { return drawFields(base, engine, Precision::F32, keepsBits); });
}

std::string describeOptions(const KernelOptions& o) {
  std::string s = std::string(toString(o.kind)) + " kernel, " + toString(o.precision) +
                  (o.greeks ? ", greeks" : ", value only") + ", markets " + std::to_string(o.markets);
  if (!o.sharedInputs.empty()) {
    s += ", shared inputs";
    for (int k : o.sharedInputs) s += " " + std::to_string(k);
  }
  s += ", config " + configTextAll(o.config);
  if (o.kind != KernelKind::Plain) s += ", plan " + describePlan(o.plan);
  return s;
}

std::string describeMarkets(const std::vector<std::vector<double>>& markets) {
  std::string s;
  char buf[40];
  for (const auto& m : markets) {
    s += s.empty() ? "{" : " {";
    for (size_t k = 0; k < m.size(); ++k) {
      std::snprintf(buf, sizeof buf, "%s%.17g", k ? ", " : "", m[k]);
      s += buf;
    }
    s += "}";
  }
  return s.empty() ? "{}" : s;
}

void showValue(const TapeSpec& spec, std::ostream& os) {
  const Tape t = buildTape(spec);
  os << "(" << toString(spec.mode) << " tape, wildness " << spec.wildness << ", " << t.size() << " nodes, " << t.numInputs() << " inputs)\n"
     << writeTape(t);
}

void showValue(const PlanSpec& s, std::ostream& os) {
  os << "PlanSpec{strategy " << s.strategy << ", segments " << s.segments << ", segLen " << s.segLen << ", "
     << s.cuts.size() << " cuts, " << s.nest.size() << " nest numbers}";
}

void showValue(const CkptSpec& s, std::ostream& os) {
  os << toString(s.kind) << " kernel, ";
  showValue(s.plan, os);
}

void showValue(TapeMode mode, std::ostream& os) { os << toString(mode); }

}  // namespace tapelab::props
