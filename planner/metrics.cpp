#include "planner/metrics.h"

#include <algorithm>

#include "planner/liveness.h"
#include "planner/schedule.h"

namespace tapelab {
namespace {

// Tracks the first maximum in program order.
struct Peak {
  int32_t value = 0;
  int segment = -1;
  void see(int32_t v, int s) {
    if (v > value) {
      value = v;
      segment = s;
    }
  }
};

// The reverse sweep's points, block by block (planner/schedule.h): live values
// are the persistent ones, the enclosing blocks' bookmarks still to be read,
// the block's own recomputed values and the adjoints live at that point.
class ReverseCounter {
 public:
  ReverseCounter(const Tape& t, const Plan& plan, const CostModel& costs, const std::vector<int32_t>& adjointsLiveAt,
                 Peak& peak, PlanMetrics& m)
      : tape_(t), plan_(plan), costs_(costs), adj_(adjointsLiveAt), peak_(peak), m_(m) {
    const int32_t n = t.size();
    held_.assign(n, 0);
    recomputed_.assign(n, 0);
    lastReader_.assign(n, -1);
    minAdjointReader_.assign(n, -1);
    diff_.assign(static_cast<size_t>(n) + 1, 0);
    // Readers of each value, ascending (CSR).
    readerStart_.assign(static_cast<size_t>(n) + 1, 0);
    for (int32_t i = 0; i < n; ++i) forArgs(i, [&](int32_t j) { ++readerStart_[j + 1]; });
    for (int32_t j = 0; j < n; ++j) readerStart_[j + 1] += readerStart_[j];
    readers_.assign(readerStart_[n], 0);
    std::vector<int32_t> fill(readerStart_.begin(), readerStart_.end() - 1);
    for (int32_t i = 0; i < n; ++i) forArgs(i, [&](int32_t j) { readers_[fill[j]++] = i; });
  }

  void visit(const ScheduleBlock& b, int32_t held, int segment) {
    switch (b.kind) {
      case ScheduleBlock::Kind::Leaf: leaf(b, held, segment); return;
      case ScheduleBlock::Kind::Chain:
        for (const ScheduleBlock& c : b.children) visit(c, held, segment);
        return;
      case ScheduleBlock::Kind::Inner: inner(b, held, segment); return;
    }
  }

 private:
  template <class F>
  void forArgs(int32_t i, F f) const {
    const int ar = arity(tape_.op[i]);
    for (int k = 0; k < ar; ++k) {
      const int32_t j = tape_.arg(i, k);
      if ((k < 1 || j != tape_.a[i]) && (k < 2 || j != tape_.b[i])) f(j);  // each argument once
    }
  }
  bool isHeld(int32_t j) const { return plan_.isPersistent[j] || held_[j] > 0; }
  void recompute(int32_t i) {
    recomputed_[i] = 1;
    if (tape_.op[i] != Op::Const) {
      ++m_.recomputeOps;
      m_.recomputeCost += costs_.of(tape_.op[i]);
    }
  }
  // +1 on the points [lo, hi] of diff_.
  void addRange(int32_t lo, int32_t hi) {
    if (lo > hi) return;
    ++diff_[lo];
    --diff_[hi + 1];
  }

  void leaf(const ScheduleBlock& b, int32_t held, int segment) {
    const int32_t P = static_cast<int32_t>(plan_.persistent.size());
    // The values the block's adjoint rules read, and the first (smallest) rule reading each.
    for (int32_t i = b.end - 1; i >= b.begin; --i) {
      if (arity(tape_.op[i]) == 0) continue;
      const AdjointReads r = adjointReads(tape_.op[i]);
      for (int k = 0; k < arity(tape_.op[i]); ++k)
        if (r.arg(k)) readByAdjoint(tape_.arg(i, k), i);
      if (r.r) readByAdjoint(i, i);
    }
    for (int32_t i = b.end - 1; i >= b.from; --i) {
      if (isHeld(i) || (minAdjointReader_[i] < 0 && lastReader_[i] < 0)) continue;
      recompute(i);
      forArgs(i, [&](int32_t j) {
        if (j >= b.from) lastReader_[j] = std::max(lastReader_[j], i);
      });
    }
    // Recompute points Q(i), i in [from, end); the last is also the boundary R(end).
    clear(b.from, b.end);
    for (int32_t j = b.from; j < b.end; ++j)
      if (recomputed_[j]) addRange(j, minAdjointReader_[j] >= 0 ? b.end - 1 : lastReader_[j] - 1);
    for (int32_t i = b.from, run = 0; i < b.end; ++i) peak_.see(P + held + adj_[b.end] + (run += diff_[i]), segment);
    // Reverse points R(i), i from end-1 down to begin: j stays until its first adjoint reader is reversed.
    clear(b.from, b.end);
    for (int32_t j = b.from; j < b.end; ++j)
      if (recomputed_[j] && minAdjointReader_[j] >= 0) addRange(std::max(b.begin, minAdjointReader_[j] + 1), b.end - 1);
    for (int32_t i = b.from, run = 0; i < b.end; ++i) {
      run += diff_[i];
      if (i >= b.begin) peak_.see(P + held + adj_[i] + run, segment);
    }
    reset(b.from, b.end);
    for (int32_t j : adjointRead_) minAdjointReader_[j] = -1;
    adjointRead_.clear();
  }

  // Called in descending i, so the last call for j leaves the smallest reader.
  void readByAdjoint(int32_t j, int32_t i) {
    if (minAdjointReader_[j] < 0) adjointRead_.push_back(j);
    minAdjointReader_[j] = i;
  }

  void inner(const ScheduleBlock& b, int32_t held, int segment) {
    const int32_t P = static_cast<int32_t>(plan_.persistent.size());
    std::vector<uint8_t> isBookmark(static_cast<size_t>(b.advanceEnd - b.from), 0);
    for (int32_t j : b.bookmarks) isBookmark[j - b.from] = 1;
    for (int32_t i = b.advanceEnd - 1; i >= b.from; --i) {
      if (isHeld(i) || (!isBookmark[i - b.from] && lastReader_[i] < 0)) continue;
      recompute(i);
      forArgs(i, [&](int32_t j) {
        if (j >= b.from) lastReader_[j] = std::max(lastReader_[j], i);
      });
    }
    clear(b.from, b.advanceEnd);
    for (int32_t j = b.from; j < b.advanceEnd; ++j)
      if (recomputed_[j]) addRange(j, isBookmark[j - b.from] ? b.advanceEnd - 1 : lastReader_[j] - 1);
    for (int32_t i = b.from, run = 0; i < b.advanceEnd; ++i)
      peak_.see(P + held + adj_[b.end] + (run += diff_[i]), segment);
    reset(b.from, b.advanceEnd);
    // A bookmark lives until the leftmost sub-segment that reads it has run:
    // children run last first, so child m holds those first read in child <= m.
    std::vector<int32_t> childStart;  // children in left-to-right order
    for (auto c = b.children.rbegin(); c != b.children.rend(); ++c) childStart.push_back(c->begin);
    auto childOf = [&](int32_t x) {
      return static_cast<int>(std::upper_bound(childStart.begin(), childStart.end(), x) - childStart.begin()) - 1;
    };
    std::vector<std::vector<int32_t>> firstReadIn(childStart.size());
    for (int32_t j : b.bookmarks) {
      const int own = childOf(j);
      for (int32_t r = readerStart_[j]; r < readerStart_[j + 1]; ++r)
        if (childOf(readers_[r]) > own) {
          firstReadIn[static_cast<size_t>(childOf(readers_[r]))].push_back(j);
          break;
        }
    }
    const int count = static_cast<int>(childStart.size());
    int32_t live = 0;
    // Run order is right to left: child m sees the bookmarks first read in children <= m,
    // so start with all of them and release a child's as it ends.
    for (int c = 0; c < count; ++c)
      for (int32_t j : firstReadIn[static_cast<size_t>(c)]) {
        ++held_[j];
        ++live;
      }
    for (int k = 0; k < count; ++k) {
      const int m = count - 1 - k;  // b.children[k] is child m from the left
      visit(b.children[static_cast<size_t>(k)], held + live, segment);
      for (int32_t j : firstReadIn[static_cast<size_t>(m)]) {
        --held_[j];
        --live;
      }
    }
  }

  void clear(int32_t lo, int32_t hi) { std::fill(diff_.begin() + lo, diff_.begin() + hi + 1, 0); }
  void reset(int32_t lo, int32_t hi) {
    for (int32_t j = lo; j < hi; ++j) {
      recomputed_[j] = 0;
      lastReader_[j] = -1;
    }
  }

  const Tape& tape_;
  const Plan& plan_;
  const CostModel& costs_;
  const std::vector<int32_t>& adj_;
  Peak& peak_;
  PlanMetrics& m_;
  std::vector<int32_t> held_, lastReader_, minAdjointReader_, diff_, readerStart_, readers_;
  std::vector<int32_t> adjointRead_;  // values whose minAdjointReader_ the current leaf set
  std::vector<uint8_t> recomputed_;
};

}  // namespace

PlanMetrics planMetrics(const Tape& t, const Plan& plan, const CostModel& costs) {
  const int32_t n = t.size();
  const int segs = plan.segments();
  const std::vector<int32_t> last = lastUse(t);
  const std::vector<int32_t> rr = firstReverseRead(t);
  const std::vector<int32_t> adj = adjointsLive(t, last);
  const auto& isP = plan.isPersistent;
  const int32_t P = static_cast<int32_t>(plan.persistent.size());

  PlanMetrics m;
  m.segments = segs;
  m.persistent = P;
  m.scratchSlots = plan.scratchSlots;
  m.depth = plan.depth();
  Peak peak;
  peak.value = P;  // the kernel holds at least its persistent values
  std::vector<int32_t> diff(static_cast<size_t>(n) + 1, 0);
  auto addRange = [&](int32_t lo, int32_t hi) {  // +1 on [lo, hi]
    if (lo > hi) return;
    ++diff[lo];
    --diff[hi + 1];
  };

  if (segs == 1 && !plan.perValue) {
    // Plain: a value an adjoint rule reads stays live from the forward sweep into the reverse.
    int32_t reverseRead = 0;
    for (int32_t j = 0; j < n; ++j) {
      if (isP[j]) continue;
      if (rr[j] >= 0) {
        addRange(j, n - 1);
        ++reverseRead;
      } else {
        addRange(j, last[j] - 1);
      }
    }
    for (int32_t i = 0, run = 0; i < n; ++i) peak.see(P + (run += diff[i]), -1);
    peak.see(P + adj[n] + reverseRead, 0);  // R(n): forward done, output seeded
    std::fill(diff.begin(), diff.end(), 0);
    for (int32_t j = 0; j < n; ++j)
      if (!isP[j] && rr[j] >= 0) addRange(rr[j] + 1, n - 1);
    // R(i): the j with firstReverseRead[j] < i, a prefix sum over i (program order does not matter).
    for (int32_t i = 0, run = 0; i < n; ++i) {
      run += diff[i];
      peak.see(P + adj[i] + run, 0);
    }
    m.peakLive = peak.value;
    m.peakSegment = peak.segment;
    return m;
  }

  // Forward sweep: a local value lives until its last reader (it is recomputed later).
  for (int32_t j = 0; j < n; ++j)
    if (!isP[j]) addRange(j, last[j] - 1);
  for (int32_t i = 0, run = 0; i < n; ++i) peak.see(P + (run += diff[i]), -1);

  ReverseCounter counter(t, plan, costs, adj, peak, m);
  const Schedule schedule = lowerPlan(t, plan);
  for (size_t k = 0; k < schedule.blocks.size(); ++k)
    counter.visit(schedule.blocks[k], 0, segs - 1 - static_cast<int>(k));
  m.peakLive = peak.value;
  m.peakSegment = peak.segment;
  return m;
}

}  // namespace tapelab
