#include "planner/optimal.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "planner/liveness.h"
#include "planner/metrics.h"

namespace tapelab {
namespace {

// What every segment cost needs, computed once per tape (planner/liveness.h).
struct TapeLiveness {
  int32_t nodes = 0;
  std::vector<int32_t> lastUse, firstReverseRead, adjointsLive;
  std::vector<uint8_t> isBase;  // inputs and the output: persistent whatever the cuts
  int32_t baseCount = 0;
  // For a lower bound on W(p, c): non-base reverse-read values before x, and
  // non-base values live across c.
  std::vector<int32_t> reverseReadsBefore, liveNonBase;

  explicit TapeLiveness(const Tape& t)
      : nodes(t.size()), lastUse(tapelab::lastUse(t)), firstReverseRead(tapelab::firstReverseRead(t)),
        adjointsLive(tapelab::adjointsLive(t, lastUse)), isBase(nodes, 0),
        reverseReadsBefore(static_cast<size_t>(nodes) + 1, 0), liveNonBase(static_cast<size_t>(nodes) + 2, 0) {
    for (int32_t j = 0; j < nodes; ++j)
      if (t.op[j] == Op::Input || j == t.output) {
        isBase[j] = 1;
        ++baseCount;
      }
    for (int32_t j = 0; j < nodes; ++j) {
      reverseReadsBefore[j + 1] = reverseReadsBefore[j] + (!isBase[j] && firstReverseRead[j] >= 0);
      if (!isBase[j] && lastUse[j] > j) {
        ++liveNonBase[j + 1];
        --liveNonBase[lastUse[j] + 1];
      }
    }
    for (int32_t c = 1; c <= nodes; ++c) liveNonBase[c] += liveNonBase[c - 1];
  }

  // Smallest p with W(p, c) possibly <= peakLimit: W(p, c) >= adjointsLive[c] +
  // (reverse-read values of [p, c) not crossing c) >= adjointsLive[c] +
  // reverseReads[p, c) - liveNonBase[c], and the right side only grows as p moves left.
  int32_t firstFeasible(int32_t c, int32_t peakLimit) const {
    const int64_t slack = int64_t{peakLimit} + liveNonBase[c] - adjointsLive[c];
    const int64_t need = reverseReadsBefore[c] - slack;
    if (need <= 0) return 0;
    return static_cast<int32_t>(std::lower_bound(reverseReadsBefore.begin(), reverseReadsBefore.begin() + c + 1, need) -
                                reverseReadsBefore.begin());
  }
};

// Range add, suffix max over [0, size): max_[x] = max(children) + pendingAdd_[x], no push-down.
class MaxAddTree {
 public:
  // Leaves from `leaves` (n of them), the rest `pad`.
  void build(const int32_t* leaves, int32_t n, int32_t pad) {
    size_ = 1;
    while (size_ < n) size_ <<= 1;
    max_.resize(2 * static_cast<size_t>(size_));
    pendingAdd_.assign(static_cast<size_t>(size_), 0);
    std::copy(leaves, leaves + n, max_.begin() + size_);
    std::fill(max_.begin() + size_ + n, max_.end(), pad);
    for (int32_t x = size_ - 1; x >= 1; --x) max_[x] = std::max(max_[2 * x], max_[2 * x + 1]);
  }
  void add(int32_t l, int32_t r, int32_t v) {  // [l, r]
    if (l > r) return;
    int32_t lo = l + size_, hi = r + size_ + 1;
    const int32_t l0 = lo, r0 = hi - 1;
    for (; lo < hi; lo >>= 1, hi >>= 1) {
      if (lo & 1) apply(lo++, v);
      if (hi & 1) apply(--hi, v);
    }
    pull(l0, r0);
  }
  int32_t suffixMax(int32_t l) const {  // max over [l, size)
    int32_t x = l + size_, cur = max_[x];
    for (; x > 1; x >>= 1) {
      if (!(x & 1)) cur = std::max(cur, max_[x + 1]);
      cur += (x >> 1) < size_ ? pendingAdd_[x >> 1] : 0;
    }
    return cur;
  }

 private:
  void apply(int32_t x, int32_t v) {
    max_[x] += v;
    if (x < size_) pendingAdd_[x] += v;
  }
  // Recomputes the ancestors of leaves l and r (shared ones once).
  void pull(int32_t l, int32_t r) {
    for (l >>= 1, r >>= 1; l >= 1; l >>= 1, r >>= 1) {
      max_[l] = std::max(max_[2 * l], max_[2 * l + 1]) + pendingAdd_[l];
      if (r != l) max_[r] = std::max(max_[2 * r], max_[2 * r + 1]) + pendingAdd_[r];
    }
  }
  int32_t size_ = 1;
  std::vector<int32_t> max_;         // per tree node: max of its leaves, with its own pending adds
  std::vector<int32_t> pendingAdd_;  // per inner node: added to every leaf below it
};

constexpr int32_t kTooBig = std::numeric_limits<int32_t>::max();

struct PairCost {
  int32_t newPersistent;  // values made persistent by the cut at c
  int32_t segmentPeak;    // W(p, c), see planner/metrics.h and optimal.h
};

// Sweeps segment [p, c) for p from c-1 down to starts[first], recording
// (newPersistent, W) at each of starts[first, first+count) (ascending, all < c).
// Point i of the segment has three counts, each a max/add tree over i in
// [lowest, c); W(p, c) is the largest over i >= p. They mirror planMetrics
// point for point:
//   forwardPoints_[i]   F(i): local values computed in [p, i], read after i;
//   recomputePoints_[i] Q(i) without adjointsLive[c]: the reverse-read local
//          values in [p, i] (= those in [p, c) minus those above i, so the leaf
//          starts at -(those above i) and the query adds the running total),
//          plus recomputed temporaries still to be read;
//   reversePoints_[i]   R(i): adjointsLive[i] + reverse-read locals still to be read.
class SegmentSweep {
 public:
  SegmentSweep(const Tape& t, const TapeLiveness& liveness)
      : tape_(t), liveness_(liveness), lastReader_(liveness.nodes, -1) {}

  // W only grows as p moves left, so the sweep stops once W exceeds peakLimit;
  // the p not reached get segmentPeak = kTooBig.
  void run(int32_t c, const std::vector<int32_t>& starts, size_t first, size_t count, int32_t peakLimit,
           std::vector<PairCost>& out) {
    const int32_t lowest = starts[first], length = c - lowest;
    auto local = [&](int32_t j) { return !liveness_.isBase[j] && liveness_.lastUse[j] < c; };
    leaves_.resize(length);
    for (int32_t i = c - 1, above = 0; i >= lowest; --i) {
      leaves_[i - lowest] = -above;
      above += local(i) && liveness_.firstReverseRead[i] >= 0;
    }
    recomputePoints_.build(leaves_.data(), length, kNone);
    std::copy(liveness_.adjointsLive.begin() + lowest, liveness_.adjointsLive.begin() + c, leaves_.begin());
    reversePoints_.build(leaves_.data(), length, kNone);
    std::fill(leaves_.begin(), leaves_.end(), 0);
    forwardPoints_.build(leaves_.data(), length, 0);
    out.assign(count, {0, kTooBig});
    int32_t newPersistent = 0, reverseReads = 0;
    ptrdiff_t nextWanted = static_cast<ptrdiff_t>(count) - 1;  // the largest start not yet recorded
    for (int32_t j = c - 1; j >= lowest; --j) {
      const int32_t leaf = j - lowest;
      if (liveness_.isBase[j]) {
        // persistent whatever the cuts; not recomputed
      } else if (liveness_.lastUse[j] >= c) {
        ++newPersistent;  // crosses c
      } else {
        if (liveness_.lastUse[j] > j) forwardPoints_.add(leaf, liveness_.lastUse[j] - 1 - lowest, 1);
        const bool reverseRead = liveness_.firstReverseRead[j] >= 0;
        if (reverseRead || lastReader_[j] >= 0) {
          if (reverseRead) {
            ++reverseReads;
            reversePoints_.add(liveness_.firstReverseRead[j] + 1 - lowest, c - 1 - lowest, 1);
          } else {
            recomputePoints_.add(leaf, lastReader_[j] - 1 - lowest, 1);
          }
          forEachArg(tape_, j, [&](int32_t x) {
            if (x >= lowest) lastReader_[x] = std::max(lastReader_[x], j);
          });
        }
      }
      const bool wanted = nextWanted >= 0 && starts[first + nextWanted] == j;
      if (!wanted && (leaf & 7) != 0) continue;  // check the early stop every 8 nodes
      const int32_t peak = std::max({forwardPoints_.suffixMax(0),
                                     recomputePoints_.suffixMax(leaf) + reverseReads + liveness_.adjointsLive[c],
                                     reversePoints_.suffixMax(leaf)});
      if (peak > peakLimit) break;
      while (nextWanted >= 0 && starts[first + nextWanted] == j) {
        out[nextWanted] = {newPersistent, peak};
        --nextWanted;
      }
    }
    std::fill(lastReader_.begin() + lowest, lastReader_.begin() + c, -1);
  }

 private:
  static constexpr int32_t kNone = -(1 << 29);  // padding leaves: never the maximum
  const Tape& tape_;
  const TapeLiveness& liveness_;
  // lastReader_[j]: the last node of the segment that is recomputed and reads j
  // (-1: none yet); leaves_: scratch for building the trees.
  std::vector<int32_t> lastReader_, leaves_;
  MaxAddTree forwardPoints_, recomputePoints_, reversePoints_;
};

// A partial plan with cuts up to some position: what the DP keeps per (cut index, position).
struct PartialPlan {
  int32_t persistent;     // sigma: persistent values so far, minus the base
  int32_t peak;           // mu: the largest W(p, c) of its segments so far
  int32_t prevCutIndex;   // its previous cut, as an index into the previous cut's candidates
  int32_t prevPlanIndex;  // the partial plan it extends, in that candidate's frontier
};

int64_t objectiveOf(CutObjective o, int32_t persistent, int32_t peak) {
  return o == CutObjective::PeakLive ? int64_t{persistent} + peak : persistent;
}

}  // namespace

Plan optimalOverCandidates(const Tape& t, int segments, const std::vector<std::vector<int32_t>>& candidates,
                           CutObjective objective, std::string strategyName, int64_t bound) {
  const int32_t n = t.size();
  if (segments < 1 || segments > n) throw std::invalid_argument("optimal: segment count out of range");
  if (segments == 1) return makePlan(t, {0, n}, std::move(strategyName));
  if (static_cast<int>(candidates.size()) != segments - 1)
    throw std::invalid_argument("optimal: need one candidate list per cut");
  const TapeLiveness liveness(t);
  // cutCandidates[s]: the sorted positions allowed for cut s; cut 0 is 0, cut `segments` is n.
  std::vector<std::vector<int32_t>> cutCandidates(segments + 1);
  cutCandidates[0] = {0};
  cutCandidates[segments] = {n};
  for (int s = 1; s < segments; ++s) {
    auto& positions = cutCandidates[s];
    for (int32_t c : candidates[s - 1])
      if (c >= 1 && c <= n - 1) positions.push_back(c);
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  }

  // frontiers[s][i]: the partial plans that can still win whose cut s is cutCandidates[s][i].
  std::vector<std::vector<std::vector<PartialPlan>>> frontiers(segments + 1);
  frontiers[0] = {{PartialPlan{0, 0, -1, -1}}};
  SegmentSweep sweep(t, liveness);
  std::vector<PairCost> pairCosts;
  std::vector<PartialPlan> extended, bestPerPersistent;
  for (int s = 1; s <= segments; ++s) {
    frontiers[s].assign(cutCandidates[s].size(), {});
    // Previous positions that some admissible partial plan reaches.
    std::vector<int32_t> prevPos, prevIdx;
    for (size_t i = 0; i < cutCandidates[s - 1].size(); ++i)
      if (!frontiers[s - 1][i].empty()) {
        prevPos.push_back(cutCandidates[s - 1][i]);
        prevIdx.push_back(static_cast<int32_t>(i));
      }
    if (prevPos.empty()) break;
    for (size_t ci = 0; ci < cutCandidates[s].size(); ++ci) {
      const int32_t c = cutCandidates[s][ci];
      // A segment whose W alone exceeds the bound cannot be part of an admissible plan.
      const int32_t peakLimit =
          objective == CutObjective::PeakLive && bound >= 0 ? static_cast<int32_t>(std::min<int64_t>(bound, kTooBig - 1))
                                                            : kTooBig - 1;
      const int32_t pMin = liveness.firstFeasible(c, peakLimit);
      const size_t first = static_cast<size_t>(std::lower_bound(prevPos.begin(), prevPos.end(), pMin) - prevPos.begin());
      const size_t end = static_cast<size_t>(std::lower_bound(prevPos.begin(), prevPos.end(), c) - prevPos.begin());
      if (first >= end) continue;
      const size_t count = end - first;
      sweep.run(c, prevPos, first, count, peakLimit, pairCosts);
      extended.clear();
      for (size_t k = 0; k < count; ++k) {
        if (pairCosts[k].segmentPeak == kTooBig) continue;
        const int32_t pi = prevIdx[first + k];
        const auto& from = frontiers[s - 1][pi];
        for (size_t e = 0; e < from.size(); ++e) {
          const PartialPlan x{from[e].persistent + pairCosts[k].newPersistent,
                              std::max(from[e].peak, pairCosts[k].segmentPeak), pi, static_cast<int32_t>(e)};
          if (bound >= 0 && objectiveOf(objective, x.persistent, x.peak) > bound) continue;  // cannot end better
          extended.push_back(x);
        }
      }
      // Only the least (peak, prevCutIndex, prevPlanIndex) per persistent can survive: bucket by persistent.
      if (extended.empty()) continue;
      int32_t lo = extended[0].persistent, hi = lo;
      for (const PartialPlan& x : extended) {
        lo = std::min(lo, x.persistent);
        hi = std::max(hi, x.persistent);
      }
      auto before = [](const PartialPlan& a, const PartialPlan& b) {
        if (a.peak != b.peak) return a.peak < b.peak;
        if (a.prevCutIndex != b.prevCutIndex) return a.prevCutIndex < b.prevCutIndex;
        return a.prevPlanIndex < b.prevPlanIndex;
      };
      bestPerPersistent.assign(static_cast<size_t>(hi - lo) + 1, PartialPlan{0, -1, -1, -1});
      for (const PartialPlan& x : extended) {
        PartialPlan& b = bestPerPersistent[x.persistent - lo];
        if (b.peak < 0 || before(x, b)) b = x;
      }
      extended.clear();
      for (const PartialPlan& b : bestPerPersistent)
        if (b.peak >= 0) extended.push_back(b);
      // Keep what can still win. Against a partial plan with fewer persistent, one
      // with more wins only if its persistent + peak is smaller: the future adds
      // the same persistent to both and can raise peak, never lower it (so for
      // peak_live, a larger persistent that does not lower persistent + peak
      // never helps; for persistent, only the least persistent, then least peak, can).
      auto& out = frontiers[s][ci];
      int64_t bestSum = std::numeric_limits<int64_t>::max();
      for (const PartialPlan& x : extended) {
        if (objective == CutObjective::Persistent) {
          out.push_back(x);
          break;
        }
        if (int64_t{x.persistent} + x.peak < bestSum) {
          out.push_back(x);
          bestSum = int64_t{x.persistent} + x.peak;
        }
      }
    }
  }
  // No layer for the last cut when the loop stopped at an earlier cut that no partial plan reached.
  if (frontiers[segments].empty() || frontiers[segments][0].empty())
    throw std::invalid_argument("optimal: no plan with cuts in the candidate sets");
  const auto& complete = frontiers[segments][0];
  size_t best = 0;
  for (size_t e = 1; e < complete.size(); ++e) {
    const int64_t a = objectiveOf(objective, complete[e].persistent, complete[e].peak);
    const int64_t b = objectiveOf(objective, complete[best].persistent, complete[best].peak);
    // Frontier is sorted by persistent ascending, peak descending: the first minimum has the fewest persistent.
    if (a < b || (a == b && objective == CutObjective::Persistent && complete[e].peak < complete[best].peak)) best = e;
  }
  std::vector<int32_t> bounds(segments + 1);
  bounds[segments] = n;
  int32_t cutIndex = 0, planIndex = static_cast<int32_t>(best);
  for (int s = segments; s >= 1; --s) {
    const PartialPlan& x = frontiers[s][cutIndex][planIndex];
    bounds[s] = cutCandidates[s][cutIndex];
    cutIndex = x.prevCutIndex;
    planIndex = x.prevPlanIndex;
  }
  bounds[0] = 0;
  return makePlan(t, std::move(bounds), std::move(strategyName));
}

Plan planOptimalPersistent(const Tape& t, const PlanOptions& o) {
  const int32_t n = t.size();
  const int segments = o.segments;
  if (segments <= 1) return makePlan(t, {0, n}, "optimal-persistent");
  const std::vector<int32_t> last = lastUse(t);
  std::vector<uint8_t> crossing(n, 0);  // non-base values with a reader after them
  for (int32_t j = 0; j < n; ++j) crossing[j] = t.op[j] != Op::Input && j != t.output && last[j] > j;
  // live'[c]: crossing values j < c with last[j] >= c.
  std::vector<int32_t> liveAcrossCut(static_cast<size_t>(n) + 2, 0);
  for (int32_t j = 0; j < n; ++j)
    if (crossing[j]) {
      ++liveAcrossCut[j + 1];
      --liveAcrossCut[last[j] + 1];
    }
  for (int32_t c = 1; c <= n; ++c) liveAcrossCut[c] += liveAcrossCut[c - 1];
  // Values last read at c, in CSR form: lastReadAt[lastReadStart[c] .. lastReadStart[c+1]).
  std::vector<int32_t> lastReadStart(static_cast<size_t>(n) + 2, 0), lastReadAt;
  for (int32_t j = 0; j < n; ++j)
    if (crossing[j] && last[j] < n) ++lastReadStart[last[j] + 1];
  for (int32_t c = 1; c <= n + 1; ++c) lastReadStart[c] += lastReadStart[c - 1];
  lastReadAt.resize(lastReadStart[n + 1]);
  {
    std::vector<int32_t> fill(lastReadStart.begin(), lastReadStart.end() - 1);
    for (int32_t j = 0; j < n; ++j)
      if (crossing[j] && last[j] < n) lastReadAt[fill[last[j]]++] = j;
  }

  // Values are persistent * persistentWeight + the tie-break sum of distances to
  // the targets, which stays below the weight: persistent dominates.
  const int64_t persistentWeight = int64_t{n} * segments + 1;
  const int64_t unreachable = std::numeric_limits<int64_t>::max() / 4;
  auto target = [&](int k) { return static_cast<int32_t>(int64_t{k} * n / segments); };
  // f_{k-1} and f_k over cut positions; parent[k * (n + 1) + c]: the cut k-1 behind f_k(c).
  std::vector<int64_t> prev(n + 1, unreachable), cur(n + 1, unreachable);
  std::vector<int32_t> parent(static_cast<size_t>(segments) * (n + 1), -1);
  for (int32_t c = 1; c <= n - (segments - 1); ++c)
    prev[c] = liveAcrossCut[c] * persistentWeight + std::abs(c - target(1));

  // Undominated candidates: a doubly linked list over positions with strictly
  // decreasing values left to right; gap[q] = value(prev candidate) - value(q).
  // nextKept is the union-find: a dropped position points right, towards the
  // next position that may still be a candidate.
  std::vector<int32_t> prevCandidate(n + 1), nextCandidate(n + 1), nextKept(n + 2);
  std::vector<int64_t> gap(n + 1);
  for (int k = 2; k <= segments - 1; ++k) {
    for (int32_t x = 0; x <= n + 1; ++x) nextKept[x] = x;
    auto find = [&](int32_t x) {
      while (nextKept[x] != x) {
        nextKept[x] = nextKept[nextKept[x]];
        x = nextKept[x];
      }
      return x;
    };
    int32_t lastCandidate = -1;
    int64_t lastValue = 0;
    std::fill(cur.begin(), cur.end(), unreachable);
    for (int32_t c = 1; c <= n - 1; ++c) {
      // (1) c-1 -> c: values last read at c-1 stop counting in A(p, c) for p > j.
      if (c >= 2)
        for (int32_t e = lastReadStart[c - 1]; e < lastReadStart[c]; ++e) {
          int32_t q = find(lastReadAt[e] + 1);
          if (q >= c - 1 || lastCandidate < 0) continue;  // no appended candidate right of j
          lastValue += persistentWeight;
          if (prevCandidate[q] < 0) continue;  // the whole list moved together
          gap[q] -= persistentWeight;
          while (q >= 0 && prevCandidate[q] >= 0 && gap[q] <= 0) {  // q is now dominated
            const int32_t before = prevCandidate[q], after = nextCandidate[q];
            if (after >= 0) {
              gap[after] += gap[q];
              prevCandidate[after] = before;
            } else {
              lastValue += gap[q];
              lastCandidate = before;
            }
            nextCandidate[before] = after;
            nextKept[q] = q + 1;
            q = after;
          }
        }
      // (2) append p = c-1 with value f_{k-1}(p) - A(p, c) * persistentWeight.
      {
        const int32_t p = c - 1;
        if (prev[p] >= unreachable) {
          nextKept[p] = p + 1;
        } else {
          const int32_t a = liveAcrossCut[c] - (crossing[p] && last[p] >= c ? 1 : 0);
          const int64_t v = prev[p] - a * persistentWeight;
          if (lastCandidate >= 0 && lastValue <= v) {
            nextKept[p] = p + 1;
          } else {
            prevCandidate[p] = lastCandidate;
            nextCandidate[p] = -1;
            if (lastCandidate >= 0) {
              gap[p] = lastValue - v;
              nextCandidate[lastCandidate] = p;
            }
            lastCandidate = p;
            lastValue = v;
          }
        }
      }
      // (3) f_k(c).
      if (c >= k && c <= n - (segments - k) && lastCandidate >= 0) {
        cur[c] = liveAcrossCut[c] * persistentWeight + std::abs(c - target(k)) + lastValue;
        parent[static_cast<size_t>(k) * (n + 1) + c] = lastCandidate;
      }
    }
    std::swap(prev, cur);
  }
  int32_t bestCut = -1;
  for (int32_t c = segments - 1; c <= n - 1; ++c)
    if (prev[c] < unreachable && (bestCut < 0 || prev[c] < prev[bestCut])) bestCut = c;
  if (bestCut < 0) throw std::invalid_argument("optimal-persistent: no plan");
  std::vector<int32_t> bounds(segments + 1);
  bounds[0] = 0;
  bounds[segments] = n;
  bounds[segments - 1] = bestCut;
  for (int k = segments - 1; k >= 2; --k) bounds[k - 1] = parent[static_cast<size_t>(k) * (n + 1) + bounds[k]];
  return makePlan(t, std::move(bounds), "optimal-persistent");
}

Plan planOptimal(const Tape& t, const PlanOptions& o) {
  const int32_t n = t.size();
  const int segments = o.segments;
  if (segments <= 1) return makePlan(t, {0, n}, "optimal");
  PlanOptions even = o;
  even.segLen = 0;
  const Plan known[] = {planWindow(t, even), planUniform(t, even), planMarginal(t, even),
                        planOptimalPersistent(t, even)};
  int64_t bound = -1;
  int32_t base = 0;
  for (int32_t j = 0; j < n; ++j) base += t.op[j] == Op::Input || j == t.output;
  for (const Plan& p : known) {
    const int64_t v = planMetrics(t, p).peakLive - base;
    if (bound < 0 || v < bound) bound = v;
  }
  const std::vector<int32_t> live = liveAcross(t, lastUse(t));
  const int32_t radius = std::max<int32_t>(1, static_cast<int32_t>(n / (2 * int64_t{segments})));
  constexpr int kNear = 16, kNarrow = 16;
  std::vector<std::vector<int32_t>> cutCandidates(segments - 1);
  std::vector<int32_t> window;
  for (int s = 1; s < segments; ++s) {
    auto& positions = cutCandidates[s - 1];
    for (const Plan& p : known) positions.push_back(p.bounds[s]);
    const int32_t target = static_cast<int32_t>(int64_t{s} * n / segments);
    const int32_t lo = std::max(1, target - radius), hi = std::min(n - 1, target + radius);
    window.clear();
    for (int32_t c = lo; c <= hi; ++c) window.push_back(c);
    auto nearer = [&](int32_t x, int32_t y) {
      const int32_t dx = std::abs(x - target), dy = std::abs(y - target);
      return dx != dy ? dx < dy : x < y;
    };
    const size_t near = std::min<size_t>(kNear, window.size());
    std::partial_sort(window.begin(), window.begin() + near, window.end(), nearer);
    positions.insert(positions.end(), window.begin(), window.begin() + near);
    const size_t narrow = std::min<size_t>(kNarrow, window.size());
    std::partial_sort(window.begin(), window.begin() + narrow, window.end(), [&](int32_t x, int32_t y) {
      return live[x] != live[y] ? live[x] < live[y] : nearer(x, y);
    });
    positions.insert(positions.end(), window.begin(), window.begin() + narrow);
  }
  return optimalOverCandidates(t, segments, cutCandidates, CutObjective::PeakLive, "optimal", bound);
}

}  // namespace tapelab
