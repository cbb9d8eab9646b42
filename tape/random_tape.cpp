#include "tape/random_tape.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace tapelab {
namespace {

// Our own draws from the engine, so the tape does not depend on the standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t below(uint64_t n) {  // uniform in [0, n), n >= 1, by rejection
    const uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % n);
    uint64_t x;
    do x = g_(); while (x >= limit);
    return x % n;
  }
  double unit() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }  // [0, 1)
  bool chance(double p) { return unit() < p; }

 private:
  std::mt19937_64 g_;
};

struct Interval {
  double lo, hi;
};

constexpr double kBound = 100.0;  // well-conditioned values stay within [-kBound, kBound]
constexpr double kDrawBound = 5.78;  // |z| <= 5.77 (tape/philox.h)

// What a node is: one of the leaves, or an op drawn from the table.
enum class Kind : uint8_t { Input, Randn, Const, Op };
static_assert(std::ranges::count_if(kOps, [](const OpInfo& op) { return op.arity == 0; }) == 3,
              "a new leaf op in tape/ops.def needs a Kind (and a place) in randomTape");

// r = the interval of op's result on a (b, c); false when the well-conditioned
// rules forbid the op on these operands. No default: a new op in tape/ops.def
// fails to build here (-Werror=switch) until it has its interval rule.
bool apply(Op op, Interval a, Interval b, Interval c, Interval& r) {
  auto hull = [](std::initializer_list<double> v) { return Interval{std::min(v), std::max(v)}; };
  switch (op) {
    case Op::Add: r = {a.lo + b.lo, a.hi + b.hi}; break;
    case Op::Sub: r = {a.lo - b.hi, a.hi - b.lo}; break;
    case Op::Mul: r = hull({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}); break;
    case Op::Div:
      if (!(b.lo >= 0.5 || b.hi <= -0.5)) return false;
      r = hull({a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi});
      break;
    case Op::Neg: r = {-a.hi, -a.lo}; break;
    case Op::Exp:
      if (a.hi > 4.0) return false;
      r = {std::exp(a.lo), std::exp(a.hi)};
      break;
    case Op::Log:
      if (a.lo < 0.05) return false;
      r = {std::log(a.lo), std::log(a.hi)};
      break;
    case Op::Sqrt:
      if (a.lo < 0.05) return false;
      r = {std::sqrt(a.lo), std::sqrt(a.hi)};
      break;
    case Op::Max: r = {std::max(a.lo, b.lo), std::max(a.hi, b.hi)}; break;
    case Op::Min: r = {std::min(a.lo, b.lo), std::min(a.hi, b.hi)}; break;
    case Op::Abs:
      r = a.lo >= 0 ? a : a.hi <= 0 ? Interval{-a.hi, -a.lo} : Interval{0.0, std::max(-a.lo, a.hi)};
      break;
    case Op::Pow:  // a positive base away from 0, a moderate exponent
      if (a.lo < 0.05 || b.lo < -3.0 || b.hi > 3.0) return false;
      r = hull({std::pow(a.lo, b.lo), std::pow(a.lo, b.hi), std::pow(a.hi, b.lo), std::pow(a.hi, b.hi)});
      break;
    case Op::Tanh: r = {std::tanh(a.lo), std::tanh(a.hi)}; break;
    case Op::Lt:
    case Op::Le: r = {0.0, 1.0}; break;
    case Op::Select: r = hull({b.lo, b.hi, c.lo, c.hi}); break;
    case Op::Const:
    case Op::Input:
    case Op::Randn: return false;  // leaves are placed by Kind, never drawn as ops
  }
  return r.lo >= -kBound && r.hi <= kBound;
}

}  // namespace

Tape randomTape(uint64_t seed, const RandomTapeOptions& o) {
  const int32_t n = o.nodes;
  if (n < 1) throw std::invalid_argument("random tape: nodes must be at least 1");
  if (o.inputs < 0 || o.draws < 0 || int64_t{o.inputs} + o.draws > n)
    throw std::invalid_argument("random tape: inputs + draws must fit in the nodes");
  if (o.drawIndices < 0) throw std::invalid_argument("random tape: drawIndices must be >= 0");
  if (!(o.reach >= 1.0)) throw std::invalid_argument("random tape: reach must be at least 1");
  for (double p : {o.farProbability, o.constFraction})
    if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("random tape: probabilities must be in [0, 1]");

  Rng rng(seed);
  // Which node is what. The last node is kept for an operation when it can be.
  std::vector<Kind> kind(n, Kind::Op);
  std::vector<int32_t> free;
  for (int32_t i = 0; i < n; ++i) free.push_back(i);
  auto takeRandom = [&](bool avoidLast) {
    size_t span = free.size();
    if (avoidLast && span > 1 && free.back() == n - 1) --span;
    const size_t k = rng.below(span);
    const int32_t node = free[k];
    free.erase(free.begin() + static_cast<ptrdiff_t>(k));
    return node;
  };
  for (int k = 0; k < o.inputs; ++k) {
    if (o.scatterInputs) {
      kind[takeRandom(true)] = Kind::Input;
    } else {
      kind[k] = Kind::Input;
      free.erase(std::find(free.begin(), free.end(), k));
    }
  }
  for (int k = 0; k < o.draws; ++k) kind[takeRandom(true)] = Kind::Randn;
  for (int32_t node : free)
    if (node == 0 || (node != n - 1 && rng.chance(o.constFraction))) kind[node] = Kind::Const;

  std::vector<uint32_t> ks(o.draws);
  if (o.drawIndices == 0) {
    for (int k = 0; k < o.draws; ++k) ks[k] = static_cast<uint32_t>(k);
    if (o.shuffleDraws)
      for (int k = o.draws - 1; k > 0; --k) std::swap(ks[k], ks[rng.below(static_cast<uint64_t>(k) + 1)]);
  } else {
    for (auto& k : ks) k = static_cast<uint32_t>(rng.below(static_cast<uint64_t>(o.drawIndices)));
    if (!o.shuffleDraws) std::sort(ks.begin(), ks.end());
  }

  // Every op of tape/ops.def with arguments, in the table's order (a seed's tapes depend on it).
  std::vector<Op> ops;
  for (const OpInfo& op : kOps)
    if (op.arity > 0 && (o.kinks || (op.group != OpGroup::Kink && op.group != OpGroup::Step))) ops.push_back(op.op);

  Tape t;
  std::vector<Interval> range(n);
  std::vector<int32_t> unread;  // nodes not read yet, most recent last
  std::vector<uint8_t> read(n, 0);
  std::vector<int32_t> inputNodes;
  size_t nextDraw = 0;
  auto pickArg = [&](int32_t i) -> int32_t {
    if (!inputNodes.empty() && rng.chance(0.08)) return inputNodes[rng.below(inputNodes.size())];
    if (rng.chance(o.farProbability)) return static_cast<int32_t>(rng.below(static_cast<uint64_t>(i)));
    if (rng.chance(0.25)) {  // keep values from dying unread
      while (!unread.empty() && read[unread.back()]) unread.pop_back();
      if (!unread.empty()) return unread.back();
    }
    int32_t d = 1;
    while (d < i && rng.unit() >= 1.0 / o.reach) ++d;
    return i - d;
  };
  for (int32_t i = 0; i < n; ++i) {
    switch (kind[i]) {
      case Kind::Input: {
        const double def = o.wellConditioned ? static_cast<double>(32 + rng.below(64)) / 64.0
                                             : static_cast<double>(static_cast<int64_t>(rng.below(257)) - 128) / 64.0;
        std::string inputName = "x";  // appended, not operator+: GCC 12's -Wrestrict false positive at -O3
        inputName += std::to_string(t.numInputs());
        inputNodes.push_back(t.addInput(inputName, def));
        range[i] = {0.5 * def, 1.5 * def};
        break;
      }
      case Kind::Randn:
        t.push(Op::Randn, -1, -1, static_cast<double>(ks[nextDraw++]));
        range[i] = {-kDrawBound, kDrawBound};
        break;
      case Kind::Const: {
        const double v = o.wellConditioned ? static_cast<double>(static_cast<int64_t>(rng.below(129)) - 64) / 32.0
                                           : static_cast<double>(static_cast<int64_t>(rng.below(2001)) - 1000) / 8.0;
        t.push(Op::Const, -1, -1, v);
        range[i] = {v, v};
        break;
      }
      case Kind::Op: {
        Op op = Op::Neg;
        int32_t a = -1, b = -1, c = -1;
        bool found = false;
        for (int attempt = 0; attempt < 16 && !found; ++attempt) {
          op = ops[rng.below(ops.size())];
          a = pickArg(i);
          b = arity(op) >= 2 ? pickArg(i) : -1;
          c = arity(op) >= 3 ? pickArg(i) : -1;
          if (!o.wellConditioned) {
            found = true;
          } else {
            Interval r;
            if (apply(op, range[a], b >= 0 ? range[b] : Interval{0, 0}, c >= 0 ? range[c] : Interval{0, 0}, r)) {
              range[i] = r;
              found = true;
            }
          }
        }
        if (!found) {  // negation keeps any admissible interval admissible
          op = Op::Neg;
          b = c = -1;
          range[i] = {-range[a].hi, -range[a].lo};
        }
        if (c >= 0)
          t.push3(op, a, b, c);
        else
          t.push(op, a, b);
        read[a] = 1;
        if (b >= 0) read[b] = 1;
        if (c >= 0) read[c] = 1;
        break;
      }
    }
    unread.push_back(i);
  }
  t.output = n - 1;
  t.name = "random-" + std::to_string(seed) + "-" + std::to_string(n);
  return t;
}

}  // namespace tapelab
