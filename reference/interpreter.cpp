#include "reference/interpreter.h"

#include <algorithm>
#include <atomic>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

#include "reference/reference.h"
#include "tape/philox.h"
#include "util/process.h"

namespace tapelab {
namespace {

using Mp = boost::multiprecision::cpp_bin_float_50;

template <class T>
T sel(bool c, const T& x, const T& y) {
  return c ? x : y;
}

template <class T>
T quietNaN() {
  return std::numeric_limits<T>::quiet_NaN();
}

}  // namespace

template <class T>
PathInterpreter<T>::PathInterpreter(const Tape& tape, const Plan* plan, bool greeks, const TangentSlots* tangents)
    : tape_(tape), plan_(plan && (plan->segments() > 1 || plan->perValue) && !tangents ? plan : nullptr), greeks_(greeks),
      tangents_(greeks ? tangents : nullptr) {
  v_.assign(tape.size(), T(0));
  if (tangents_) {
    tangentAt_.assign(tape.size() + 1, 0);
    for (int32_t i = 0; i < tape.size(); ++i) tangentAt_[i + 1] = tangentAt_[i] + tangents_->of[i].size();
    t_.assign(tangentAt_.back(), T(0));
  }
  d_.assign(tape.size(), T(0));
  if (plan_) {
    schedule_ = lowerPlan(tape, *plan_);
    held_.assign(tape.size(), 0);
    for (int32_t j : plan_->persistent) held_[j] = 1;
  }
}

// Draw k of the path: tape/philox.h's drawNormal, its pair computed once for both of its draws.
template <class T>
T PathInterpreter<T>::draw(uint64_t seed, uint64_t path, uint32_t k) {
  if (drawn_.pair != k / 2 || drawn_.path != path || drawn_.seed != seed)
    drawn_ = {seed, path, k / 2, drawPair<T>(seed, path, k)};
  return k % 2 ? drawn_.z.odd : drawn_.z.even;
}

template <class T>
void PathInterpreter<T>::forget(int32_t lo, int32_t hi) {
  for (int32_t i = lo; i < hi; ++i)
    if (!held_[i]) v_[i] = quietNaN<T>();
}

template <class T>
void PathInterpreter<T>::runBlock(const ScheduleBlock& b, const std::vector<T>& inputs, uint64_t seed,
                                  uint64_t path) {
  switch (b.kind) {
    case ScheduleBlock::Kind::Leaf:
      if (b.perValue) {  // exactly its list; a kept value is read where it was kept, never recomputed
        for (int32_t i : b.recompute) forwardNode(i, inputs, seed, path);
        for (int32_t i = b.end - 1; i >= b.begin; --i) reverseNode(i);
        for (int32_t i : b.recompute) forget(i, i + 1);
        return;
      }
      for (int32_t i = b.from; i < b.end; ++i) forwardNode(i, inputs, seed, path);  // remember
      for (int32_t i = b.end - 1; i >= b.begin; --i) reverseNode(i);
      forget(b.from, b.end);
      return;
    case ScheduleBlock::Kind::Chain:
      for (const ScheduleBlock& c : b.children) runBlock(c, inputs, seed, path);
      return;
    case ScheduleBlock::Kind::Inner:
      for (int32_t i = b.from; i < b.advanceEnd; ++i) forwardNode(i, inputs, seed, path);
      for (int32_t j : b.bookmarks) ++held_[j];
      forget(b.from, b.advanceEnd);
      for (const ScheduleBlock& c : b.children) runBlock(c, inputs, seed, path);
      for (int32_t j : b.bookmarks) --held_[j];
      forget(b.from, b.advanceEnd);
      return;
  }
}

// The functions of ops.def's vocabulary: std's for float and double, Boost's (found by ADL) for Mp.
#define TAPELAB_VOCABULARY \
  using std::exp;          \
  using std::log;          \
  using std::sqrt;         \
  using std::pow;          \
  using std::tanh;         \
  const T zero(0);         \
  const T one(1);          \
  (void)zero;              \
  (void)one

template <class T>
void PathInterpreter<T>::forwardNode(int32_t i, const std::vector<T>& inputs, uint64_t seed, uint64_t path) {
  TAPELAB_VOCABULARY;
  const Tape& t = tape_;
  switch (t.op[i]) {
    case Op::Const: v_[i] = T(t.imm[i]); break;
    case Op::Input: v_[i] = inputs[static_cast<size_t>(t.imm[i])]; break;
    case Op::Randn: v_[i] = draw(seed, path, static_cast<uint32_t>(t.imm[i])); break;
#define TAPELAB_OP(Name, text, arity, group, fwd, adjA, adjB, adjC) \
  case Op::Name: {                                                 \
    [[maybe_unused]] const T& a = v_[t.a[i]];                      \
    [[maybe_unused]] const T& b = arity >= 2 ? v_[t.b[i]] : zero;  \
    [[maybe_unused]] const T& c = arity >= 3 ? v_[t.c[i]] : zero;  \
    v_[i] = fwd;                                                   \
  } break;
#include "tape/ops.def"
  }
}

// Node i's tangents: in each of its slots, a's term, then b's, then c's (tape/tangent.h),
// each ops.def's adjoint rule with the argument's tangent as d (rules that send nothing left out).
template <class T>
void PathInterpreter<T>::tangentNode(int32_t i) {
  TAPELAB_VOCABULARY;
  const Tape& t = tape_;
  const std::vector<int32_t>& mine = tangents_->of[i];
  T* out = t_.data() + tangentAt_[i];
  switch (t.op[i]) {
    case Op::Const:
    case Op::Randn: break;
    case Op::Input:
      if (!mine.empty()) out[0] = T(1);
      break;
#define TAPELAB_TANGENT_TERM(ar, k, rule)                                                     \
  if constexpr (ar > k && contributes(#rule))                                               \
    if (p[k] < of[k]->size() && (*of[k])[p[k]] == mine[q]) {                                \
      const T d = tan[k][p[k]++];                                                           \
      sum = any ? T(sum + (rule)) : T(rule);                                                \
      any = true;                                                                           \
    }
#define TAPELAB_OP(Name, text, arity, group, fwd, adjA, adjB, adjC)                          \
  case Op::Name: {                                                                          \
    [[maybe_unused]] const T a = v_[t.a[i]];                                                \
    [[maybe_unused]] const T b = arity >= 2 ? v_[t.b[i]] : zero;                            \
    [[maybe_unused]] const T c = arity >= 3 ? v_[t.c[i]] : zero;                            \
    [[maybe_unused]] const T r = v_[i];                                                     \
    const int32_t arg[3] = {t.a[i], arity >= 2 ? t.b[i] : t.a[i], arity >= 3 ? t.c[i] : t.a[i]}; \
    const std::vector<int32_t>* of[3];                                                      \
    const T* tan[3];                                                                        \
    for (int k = 0; k < 3; ++k) {                                                           \
      of[k] = &tangents_->of[arg[k]];                                                       \
      tan[k] = t_.data() + tangentAt_[arg[k]];                                              \
    }                                                                                       \
    size_t p[3] = {0, 0, 0};                                                                \
    for (size_t q = 0; q < mine.size(); ++q) {                                              \
      T sum(0);                                                                             \
      [[maybe_unused]] bool any = false;                                                    \
      TAPELAB_TANGENT_TERM(arity, 0, adjA)                                                  \
      TAPELAB_TANGENT_TERM(arity, 1, adjB)                                                  \
      TAPELAB_TANGENT_TERM(arity, 2, adjC)                                                  \
      out[q] = sum;                                                                         \
    }                                                                                       \
  } break;
#include "tape/ops.def"
#undef TAPELAB_TANGENT_TERM
  }
}

template <class T>
void PathInterpreter<T>::reverseNode(int32_t i) {
  TAPELAB_VOCABULARY;
  const Tape& t = tape_;
  switch (t.op[i]) {
    case Op::Const:
    case Op::Input:
    case Op::Randn: break;
#define TAPELAB_OP(Name, text, arity, group, fwd, adjA, adjB, adjC)                 \
  case Op::Name: {                                                                 \
    [[maybe_unused]] const T a = v_[t.a[i]];                                       \
    [[maybe_unused]] const T b = arity >= 2 ? v_[t.b[i]] : zero;                   \
    [[maybe_unused]] const T c = arity >= 3 ? v_[t.c[i]] : zero;                   \
    [[maybe_unused]] const T r = v_[i];                                            \
    [[maybe_unused]] const T d = d_[i];                                            \
    if constexpr (contributes(#adjA)) d_[t.a[i]] += adjA;                          \
    if constexpr (arity >= 2 && contributes(#adjB)) d_[t.b[i]] += adjB;            \
    if constexpr (arity >= 3 && contributes(#adjC)) d_[t.c[i]] += adjC;            \
  } break;
#include "tape/ops.def"
  }
}
#undef TAPELAB_VOCABULARY

template <class T>
void PathInterpreter<T>::run(const std::vector<T>& inputs, uint64_t seed, uint64_t path, PathResult<T>& out) {
  const Tape& t = tape_;
  const int32_t n = t.size();
  if (tangents_) {
    for (int32_t i = 0; i < n; ++i) {
      forwardNode(i, inputs, seed, path);
      tangentNode(i);
    }
    out.value = v_[t.output];
    out.adjoints.assign(t.numInputs(), T(0));
    const std::vector<int32_t>& slots = tangents_->of[t.output];
    for (size_t q = 0; q < slots.size(); ++q)
      out.adjoints[tangents_->inputs[slots[q]]] = t_[tangentAt_[t.output] + q];
    return;
  }
  for (int32_t i = 0; i < n; ++i) forwardNode(i, inputs, seed, path);
  out.value = v_[t.output];
  out.adjoints.assign(t.numInputs(), T(0));
  if (!greeks_) return;

  std::fill(d_.begin(), d_.end(), T(0));
  d_[t.output] = T(1);
  if (!plan_) {
    for (int32_t i = n - 1; i >= 0; --i) reverseNode(i);
  } else {
    forget(0, n);
    for (const ScheduleBlock& b : schedule_.blocks) runBlock(b, inputs, seed, path);
  }
  for (int k = 0; k < t.numInputs(); ++k) out.adjoints[k] = d_[t.inputNodes[k]];
}

template class PathInterpreter<float>;
template class PathInterpreter<double>;
template class PathInterpreter<Mp>;

namespace {

// Paths per reduction block: fixed, so the result does not depend on threads.
constexpr uint64_t kBlock = 1024;

template <class T>
class ReferenceKernel final : public Kernel {
 public:
  ReferenceKernel(const Tape& tape, const KernelOptions& o, unsigned threads)
      : tape_(tape), options_(o), threads_(threads) {
    if (o.kind == KernelKind::Tangent) {
      tangents_ = tangentSlots(tape, differentiatedInputs(o, tape.numInputs()));
    } else if (o.kind != KernelKind::Plain) {
      if (o.plan.bounds.empty() || o.plan.bounds.back() != tape.size())
        throw std::invalid_argument("checkpointed kernel needs a plan for this tape");
      plan_ = o.plan;
    }
  }

  RunResult run(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) override {
    const auto t0 = std::chrono::steady_clock::now();
    BlockReduction sums;  // block by block in order: finishBlocks' bits, a window of blocks in memory
    windows(inputs, 0, paths, seed, sums);
    RunResult r = sums.finish(inputs.size(), static_cast<size_t>(tape_.numInputs()), paths, seed);
    markUncomputedGreeks(r, options_, tape_.numInputs());
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

  uint64_t blockPaths() const override { return kBlock; }

  double runBlocks(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
                   BlockSink& sink) override {
    const auto t0 = std::chrono::steady_clock::now();
    if (first % kBlock) throw std::invalid_argument("runBlocks: the first path is not at a block boundary");
    windows(inputs, first, paths, seed, sink);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  // Paths [first, first + paths) a window of blocks at a time (engine.h runBlockWindows).
  void windows(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
               BlockSink& sink) {
    runBlockWindows(options_.dispatch.pathOffset, first, paths, kBlock, inputs.size() * 2 * (1 + static_cast<size_t>(tape_.numInputs())),
                    sink, [&](uint64_t lo, uint64_t n) { return blockPartials(inputs, lo, n, seed); });
  }

  // Per-block sums of paths [first, first + paths) after dispatch.pathOffset (engine/engine.h's layout).
  std::vector<double> blockPartials(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths,
                                    uint64_t seed) {
    const uint64_t origin = options_.dispatch.pathOffset + first;
    const size_t width = 1 + static_cast<size_t>(tape_.numInputs());
    const size_t markets = inputs.size();
    for (const auto& m : inputs)
      if (m.size() != static_cast<size_t>(tape_.numInputs()))
        throw std::invalid_argument("market has the wrong number of inputs");
    const uint64_t blocks = (paths + kBlock - 1) / kBlock;
    // partial[(block * markets + m) * 2 * width + ...]: sums then sums of squares.
    std::vector<double> partial(blocks * markets * 2 * width, 0.0);
    std::atomic<uint64_t> next{0};
    auto worker = [&] {
      const bool tangent = options_.kind == KernelKind::Tangent;
      PathInterpreter<T> interp(tape_, options_.kind == KernelKind::Plain || tangent ? nullptr : &plan_,
                                options_.greeks, tangent ? &tangents_ : nullptr);
      PathResult<T> res;
      std::vector<std::vector<T>> in(markets);
      for (size_t m = 0; m < markets; ++m)
        for (double x : inputs[m]) in[m].push_back(T(x));
      std::vector<double> sum(2 * width), comp(2 * width);
      for (uint64_t blk; !interruptRequested() && (blk = next.fetch_add(1)) < blocks;) {
        const uint64_t lo = blk * kBlock, hi = std::min(paths, lo + kBlock);
        for (size_t m = 0; m < markets; ++m) {
          std::fill(sum.begin(), sum.end(), 0.0);
          std::fill(comp.begin(), comp.end(), 0.0);
          auto kahan = [&](size_t idx, double x) {
            const double y = x - comp[idx];
            const double s = sum[idx] + y;
            comp[idx] = (s - sum[idx]) - y;
            sum[idx] = s;
          };
          for (uint64_t p = lo; p < hi; ++p) {
            interp.run(in[m], seed, origin + p, res);
            const double v = static_cast<double>(res.value);
            kahan(0, v);
            kahan(width, v * v);
            for (size_t k = 1; k < width; ++k) {
              const double g = static_cast<double>(res.adjoints[k - 1]);
              kahan(k, g);
              kahan(width + k, g * g);
            }
          }
          std::copy(sum.begin(), sum.end(), partial.begin() + (blk * markets + m) * 2 * width);
        }
      }
    };
    runOnThreads(blocks, threads_, worker);
    return partial;
  }

  Tape tape_;
  KernelOptions options_;
  unsigned threads_;
  Plan plan_;
  TangentSlots tangents_;
};

class ReferenceEngine final : public Engine {
 public:
  ReferenceEngine(ReferenceScalar s, unsigned threads) : scalar_(s), threads_(threads) {}
  std::string name() const override {
    switch (scalar_) {
      case ReferenceScalar::Double: return "reference";
      case ReferenceScalar::Float: return "reference-f32";
      case ReferenceScalar::Multiprecision: return "reference-mp";
    }
    return "?";
  }
  EngineCaps caps() const override {
    EngineCaps c;
    c.usable = true;
    c.reason = "interpreter on the CPU";
    c.fp32 = scalar_ == ReferenceScalar::Float;
    c.fp64 = scalar_ != ReferenceScalar::Float;
    c.defaultPrecision = c.fp64 ? Precision::F64 : Precision::F32;  // its only one
    c.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch, KernelKind::Tangent};
    c.perValuePlans = true;
    c.maxMarkets = 1 << 20;
    return c;
  }
  std::unique_ptr<Kernel> compile(const Tape& tape, const KernelOptions& o) override {
    const std::string problem = validate(tape);
    if (!problem.empty()) throw std::invalid_argument(problem);
    switch (scalar_) {
      case ReferenceScalar::Double: return std::make_unique<ReferenceKernel<double>>(tape, o, threads_);
      case ReferenceScalar::Float: return std::make_unique<ReferenceKernel<float>>(tape, o, threads_);
      case ReferenceScalar::Multiprecision: return std::make_unique<ReferenceKernel<Mp>>(tape, o, threads_);
    }
    return nullptr;
  }

 private:
  ReferenceScalar scalar_;
  unsigned threads_;
};

}  // namespace

std::unique_ptr<Engine> makeReferenceEngine(ReferenceScalar scalar, const EngineSettings& settings) {
  return std::make_unique<ReferenceEngine>(scalar, settings.threads);
}

}  // namespace tapelab
