#include "planner/optimal.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "planner/liveness.h"
#include "planner/metrics.h"

namespace tapelab {
namespace {

// What every segment cost needs, computed once per tape.
struct Facts {
  int32_t n = 0;
  std::vector<int32_t> last, rr, adj;
  std::vector<uint8_t> base;  // inputs and the output: persistent whatever the cuts
  int32_t baseCount = 0;
  // For a lower bound on W(p, c): non-base reverse-read values before x, and
  // non-base values live across c.
  std::vector<int32_t> reverseReadsBefore, liveNonBase;

  explicit Facts(const Tape& t)
      : n(t.size()), last(lastUse(t)), rr(firstReverseRead(t)), adj(adjointsLive(t, last)), base(n, 0),
        reverseReadsBefore(static_cast<size_t>(n) + 1, 0), liveNonBase(static_cast<size_t>(n) + 2, 0) {
    for (int32_t j = 0; j < n; ++j)
      if (t.op[j] == Op::Input || j == t.output) {
        base[j] = 1;
        ++baseCount;
      }
    for (int32_t j = 0; j < n; ++j) {
      reverseReadsBefore[j + 1] = reverseReadsBefore[j] + (!base[j] && rr[j] >= 0);
      if (!base[j] && last[j] > j) {
        ++liveNonBase[j + 1];
        --liveNonBase[last[j] + 1];
      }
    }
    for (int32_t c = 1; c <= n; ++c) liveNonBase[c] += liveNonBase[c - 1];
  }

  // Smallest p with W(p, c) possibly <= wLimit: W(p, c) >= adj[c] + (reverse-read
  // values of [p, c) not crossing c) >= adj[c] + reverseReads[p, c) - liveNonBase[c],
  // and the right side only grows as p moves left.
  int32_t firstFeasible(int32_t c, int32_t wLimit) const {
    const int64_t slack = int64_t{wLimit} + liveNonBase[c] - adj[c];
    const int64_t need = reverseReadsBefore[c] - slack;
    if (need <= 0) return 0;
    return static_cast<int32_t>(std::lower_bound(reverseReadsBefore.begin(), reverseReadsBefore.begin() + c + 1, need) -
                                reverseReadsBefore.begin());
  }
};

// Range add, suffix max over [0, size): t[x] = max(children) + d[x], no push-down.
class MaxAddTree {
 public:
  // Leaves from `leaves` (n of them), the rest `pad`.
  void build(const int32_t* leaves, int32_t n, int32_t pad) {
    size_ = 1;
    while (size_ < n) size_ <<= 1;
    t_.resize(2 * static_cast<size_t>(size_));
    d_.assign(static_cast<size_t>(size_), 0);
    std::copy(leaves, leaves + n, t_.begin() + size_);
    std::fill(t_.begin() + size_ + n, t_.end(), pad);
    for (int32_t x = size_ - 1; x >= 1; --x) t_[x] = std::max(t_[2 * x], t_[2 * x + 1]);
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
    int32_t x = l + size_, cur = t_[x];
    for (; x > 1; x >>= 1) {
      if (!(x & 1)) cur = std::max(cur, t_[x + 1]);
      cur += (x >> 1) < size_ ? d_[x >> 1] : 0;
    }
    return cur;
  }

 private:
  void apply(int32_t x, int32_t v) {
    t_[x] += v;
    if (x < size_) d_[x] += v;
  }
  // Recomputes the ancestors of leaves l and r (shared ones once).
  void pull(int32_t l, int32_t r) {
    for (l >>= 1, r >>= 1; l >= 1; l >>= 1, r >>= 1) {
      t_[l] = std::max(t_[2 * l], t_[2 * l + 1]) + d_[l];
      if (r != l) t_[r] = std::max(t_[2 * r], t_[2 * r + 1]) + d_[r];
    }
  }
  int32_t size_ = 1;
  std::vector<int32_t> t_, d_;
};

constexpr int32_t kTooBig = std::numeric_limits<int32_t>::max();

struct PairCost {
  int32_t cost;  // new persistent values due to the cut at c
  int32_t w;     // W(p, c), see planner/metrics.h and optimal.h
};

// Sweeps segment [p, c) for p from c-1 down to ps[first], recording (cost, W)
// at each of ps[first, first+count) (ascending, all < c). Point i of the
// segment has three counts, each a max/add tree over i in [lo, c); W(p, c) is
// the largest over i >= p. They mirror planMetrics point for point:
//   fwd[i] forward point F(i): local values computed in [p, i], read after i;
//   rec[i] recompute point Q(i) without adjointsLive[c]: the reverse-read local
//          values in [p, i] (= those in [p, c) minus those above i, so the leaf
//          starts at -(those above i) and the query adds the running total),
//          plus recomputed temporaries still to be read;
//   rev[i] reverse point R(i): adjointsLive[i] + reverse-read locals still to be read.
class SegmentSweep {
 public:
  SegmentSweep(const Tape& t, const Facts& f) : t_(t), f_(f), lastReader_(f.n, -1) {}

  // W only grows as p moves left, so the sweep stops once W exceeds wLimit;
  // the p not reached get w = kTooBig.
  void run(int32_t c, const std::vector<int32_t>& ps, size_t first, size_t count, int32_t wLimit,
           std::vector<PairCost>& out) {
    const Facts& f = f_;
    const int32_t lo = ps[first], L = c - lo;
    auto local = [&](int32_t j) { return !f.base[j] && f.last[j] < c; };
    leaves_.resize(L);
    for (int32_t i = c - 1, above = 0; i >= lo; --i) {
      leaves_[i - lo] = -above;
      above += local(i) && f.rr[i] >= 0;
    }
    rec_.build(leaves_.data(), L, kNone);
    std::copy(f.adj.begin() + lo, f.adj.begin() + c, leaves_.begin());
    rev_.build(leaves_.data(), L, kNone);
    std::fill(leaves_.begin(), leaves_.end(), 0);
    fwd_.build(leaves_.data(), L, 0);
    out.assign(count, {0, kTooBig});
    int32_t cost = 0, reverseReads = 0;
    ptrdiff_t idx = static_cast<ptrdiff_t>(count) - 1;
    for (int32_t j = c - 1; j >= lo; --j) {
      const int32_t jj = j - lo;
      if (f.base[j]) {
        // persistent whatever the cuts; not recomputed
      } else if (f.last[j] >= c) {
        ++cost;  // crosses c
      } else {
        if (f.last[j] > j) fwd_.add(jj, f.last[j] - 1 - lo, 1);
        const bool reverseRead = f.rr[j] >= 0;
        if (reverseRead || lastReader_[j] >= 0) {
          if (reverseRead) {
            ++reverseReads;
            rev_.add(f.rr[j] + 1 - lo, c - 1 - lo, 1);
          } else {
            rec_.add(jj, lastReader_[j] - 1 - lo, 1);
          }
          const int ar = arity(t_.op[j]);
          if (ar >= 1 && t_.a[j] >= lo) lastReader_[t_.a[j]] = std::max(lastReader_[t_.a[j]], j);
          if (ar >= 2 && t_.b[j] >= lo) lastReader_[t_.b[j]] = std::max(lastReader_[t_.b[j]], j);
        }
      }
      const bool wanted = idx >= 0 && ps[first + idx] == j;
      if (!wanted && (jj & 7) != 0) continue;  // check the early stop every 8 nodes
      const int32_t w = std::max({fwd_.suffixMax(0), rec_.suffixMax(jj) + reverseReads + f.adj[c], rev_.suffixMax(jj)});
      if (w > wLimit) break;
      while (idx >= 0 && ps[first + idx] == j) {
        out[idx] = {cost, w};
        --idx;
      }
    }
    std::fill(lastReader_.begin() + lo, lastReader_.begin() + c, -1);
  }

 private:
  static constexpr int32_t kNone = -(1 << 29);
  const Tape& t_;
  const Facts& f_;
  std::vector<int32_t> lastReader_, leaves_;
  MaxAddTree fwd_, rec_, rev_;
};

struct Entry {
  int32_t sigma;      // persistent so far, minus the base
  int32_t mu;         // max W so far
  int32_t from;       // index into the previous layer's positions
  int32_t fromEntry;  // index into that position's frontier
};

int64_t objectiveOf(CutObjective o, int32_t sigma, int32_t mu) {
  return o == CutObjective::PeakLive ? int64_t{sigma} + mu : sigma;
}

}  // namespace

Plan optimalOverCandidates(const Tape& t, int segments, const std::vector<std::vector<int32_t>>& candidates,
                           CutObjective objective, std::string strategyName, int64_t bound) {
  const int32_t n = t.size();
  if (segments < 1 || segments > n) throw std::invalid_argument("optimal: segment count out of range");
  if (segments == 1) return makePlan(t, {0, n}, std::move(strategyName));
  if (static_cast<int>(candidates.size()) != segments - 1)
    throw std::invalid_argument("optimal: need one candidate list per cut");
  const Facts f(t);
  const int S = segments;
  std::vector<std::vector<int32_t>> K(S + 1);
  K[0] = {0};
  K[S] = {n};
  for (int s = 1; s < S; ++s) {
    for (int32_t c : candidates[s - 1])
      if (c >= 1 && c <= n - 1) K[s].push_back(c);
    std::sort(K[s].begin(), K[s].end());
    K[s].erase(std::unique(K[s].begin(), K[s].end()), K[s].end());
  }

  std::vector<std::vector<std::vector<Entry>>> F(S + 1);
  F[0] = {{Entry{0, 0, -1, -1}}};
  SegmentSweep sweep(t, f);
  std::vector<PairCost> pc;
  std::vector<Entry> cand, bucket;
  for (int s = 1; s <= S; ++s) {
    F[s].assign(K[s].size(), {});
    // Previous positions that some admissible partial plan reaches.
    std::vector<int32_t> prevPos, prevIdx;
    for (size_t i = 0; i < K[s - 1].size(); ++i)
      if (!F[s - 1][i].empty()) {
        prevPos.push_back(K[s - 1][i]);
        prevIdx.push_back(static_cast<int32_t>(i));
      }
    if (prevPos.empty()) break;
    for (size_t ci = 0; ci < K[s].size(); ++ci) {
      const int32_t c = K[s][ci];
      // A segment whose W alone exceeds the bound cannot be part of an admissible plan.
      const int32_t wLimit =
          objective == CutObjective::PeakLive && bound >= 0 ? static_cast<int32_t>(std::min<int64_t>(bound, kTooBig - 1))
                                                            : kTooBig - 1;
      const int32_t pMin = f.firstFeasible(c, wLimit);
      const size_t first = static_cast<size_t>(std::lower_bound(prevPos.begin(), prevPos.end(), pMin) - prevPos.begin());
      const size_t end = static_cast<size_t>(std::lower_bound(prevPos.begin(), prevPos.end(), c) - prevPos.begin());
      if (first >= end) continue;
      const size_t count = end - first;
      sweep.run(c, prevPos, first, count, wLimit, pc);
      cand.clear();
      for (size_t k = 0; k < count; ++k) {
        if (pc[k].w == kTooBig) continue;
        const int32_t pi = prevIdx[first + k];
        const auto& from = F[s - 1][pi];
        for (size_t e = 0; e < from.size(); ++e) {
          const Entry x{from[e].sigma + pc[k].cost, std::max(from[e].mu, pc[k].w), pi, static_cast<int32_t>(e)};
          if (bound >= 0 && objectiveOf(objective, x.sigma, x.mu) > bound) continue;  // cannot end better
          cand.push_back(x);
        }
      }
      // Only the least (mu, from, fromEntry) per sigma can survive: bucket by sigma.
      if (cand.empty()) continue;
      int32_t lo = cand[0].sigma, hi = lo;
      for (const Entry& x : cand) {
        lo = std::min(lo, x.sigma);
        hi = std::max(hi, x.sigma);
      }
      auto before = [](const Entry& a, const Entry& b) {
        if (a.mu != b.mu) return a.mu < b.mu;
        if (a.from != b.from) return a.from < b.from;
        return a.fromEntry < b.fromEntry;
      };
      bucket.assign(static_cast<size_t>(hi - lo) + 1, Entry{0, -1, -1, -1});
      for (const Entry& x : cand) {
        Entry& b = bucket[x.sigma - lo];
        if (b.mu < 0 || before(x, b)) b = x;
      }
      cand.clear();
      for (const Entry& b : bucket)
        if (b.mu >= 0) cand.push_back(b);
      // Keep what can still win. Against an entry with fewer persistent, one with
      // more wins only if its sigma + mu is smaller: the future adds the same
      // sigma to both and can raise mu, never lower it (so for peak_live, a
      // larger sigma that does not lower sigma + mu never helps; for persistent,
      // only the least sigma, then least mu, can).
      auto& out = F[s][ci];
      int64_t bestSum = std::numeric_limits<int64_t>::max();
      for (const Entry& x : cand) {
        if (objective == CutObjective::Persistent) {
          out.push_back(x);
          break;
        }
        if (int64_t{x.sigma} + x.mu < bestSum) {
          out.push_back(x);
          bestSum = int64_t{x.sigma} + x.mu;
        }
      }
    }
  }
  const auto& last = F[S][0];
  if (last.empty()) throw std::invalid_argument("optimal: no plan with cuts in the candidate sets");
  size_t best = 0;
  for (size_t e = 1; e < last.size(); ++e) {
    const int64_t a = objectiveOf(objective, last[e].sigma, last[e].mu);
    const int64_t b = objectiveOf(objective, last[best].sigma, last[best].mu);
    // Frontier is sorted by sigma ascending, mu descending: the first minimum has the fewest persistent.
    if (a < b || (a == b && objective == CutObjective::Persistent && last[e].mu < last[best].mu)) best = e;
  }
  std::vector<int32_t> bounds(S + 1);
  bounds[S] = n;
  int32_t idx = 0, entry = static_cast<int32_t>(best);
  for (int s = S; s >= 1; --s) {
    const Entry& x = F[s][idx][entry];
    bounds[s] = K[s][idx];
    idx = x.from;
    entry = x.fromEntry;
  }
  bounds[0] = 0;
  return makePlan(t, std::move(bounds), std::move(strategyName));
}

Plan planOptimalPersistent(const Tape& t, const PlanOptions& o) {
  const int32_t n = t.size();
  const int S = o.segments;
  if (S <= 1) return makePlan(t, {0, n}, "optimal-persistent");
  const std::vector<int32_t> last = lastUse(t);
  std::vector<uint8_t> crossing(n, 0);  // non-base values with a reader after them
  for (int32_t j = 0; j < n; ++j) crossing[j] = t.op[j] != Op::Input && j != t.output && last[j] > j;
  // live'[c]: crossing values j < c with last[j] >= c.
  std::vector<int32_t> liveC(static_cast<size_t>(n) + 2, 0);
  for (int32_t j = 0; j < n; ++j)
    if (crossing[j]) {
      ++liveC[j + 1];
      --liveC[last[j] + 1];
    }
  for (int32_t c = 1; c <= n; ++c) liveC[c] += liveC[c - 1];
  // Values last read at c, in CSR form.
  std::vector<int32_t> endStart(static_cast<size_t>(n) + 2, 0), ends;
  for (int32_t j = 0; j < n; ++j)
    if (crossing[j] && last[j] < n) ++endStart[last[j] + 1];
  for (int32_t c = 1; c <= n + 1; ++c) endStart[c] += endStart[c - 1];
  ends.resize(endStart[n + 1]);
  {
    std::vector<int32_t> fill(endStart.begin(), endStart.end() - 1);
    for (int32_t j = 0; j < n; ++j)
      if (crossing[j] && last[j] < n) ends[fill[last[j]]++] = j;
  }

  const int64_t B = int64_t{n} * S + 1;  // persistent dominates the tie-break sum of distances
  const int64_t INF = std::numeric_limits<int64_t>::max() / 4;
  auto target = [&](int k) { return static_cast<int32_t>(int64_t{k} * n / S); };
  std::vector<int64_t> prev(n + 1, INF), cur(n + 1, INF);
  std::vector<int32_t> parent(static_cast<size_t>(S) * (n + 1), -1);
  for (int32_t c = 1; c <= n - (S - 1); ++c) prev[c] = liveC[c] * B + std::abs(c - target(1));

  // Undominated candidates: a doubly linked list over positions with strictly
  // decreasing values left to right; diff[q] = value(prev candidate) - value(q).
  std::vector<int32_t> prevC(n + 1), nextC(n + 1), dsu(n + 2);
  std::vector<int64_t> diff(n + 1);
  for (int k = 2; k <= S - 1; ++k) {
    for (int32_t x = 0; x <= n + 1; ++x) dsu[x] = x;
    auto find = [&](int32_t x) {
      while (dsu[x] != x) {
        dsu[x] = dsu[dsu[x]];
        x = dsu[x];
      }
      return x;
    };
    int32_t lastCand = -1;
    int64_t lastVal = 0;
    std::fill(cur.begin(), cur.end(), INF);
    for (int32_t c = 1; c <= n - 1; ++c) {
      // (1) c-1 -> c: values last read at c-1 stop counting in A(p, c) for p > j.
      if (c >= 2)
        for (int32_t e = endStart[c - 1]; e < endStart[c]; ++e) {
          int32_t q = find(ends[e] + 1);
          if (q >= c - 1 || lastCand < 0) continue;  // no appended candidate right of j
          lastVal += B;
          if (prevC[q] < 0) continue;  // the whole list moved together
          diff[q] -= B;
          while (q >= 0 && prevC[q] >= 0 && diff[q] <= 0) {  // q is now dominated
            const int32_t pq = prevC[q], nq = nextC[q];
            if (nq >= 0) {
              diff[nq] += diff[q];
              prevC[nq] = pq;
            } else {
              lastVal += diff[q];
              lastCand = pq;
            }
            nextC[pq] = nq;
            dsu[q] = q + 1;
            q = nq;
          }
        }
      // (2) append p = c-1 with value f_{k-1}(p) - A(p, c) * B.
      {
        const int32_t p = c - 1;
        if (prev[p] >= INF) {
          dsu[p] = p + 1;
        } else {
          const int32_t a = liveC[c] - (crossing[p] && last[p] >= c ? 1 : 0);
          const int64_t v = prev[p] - a * B;
          if (lastCand >= 0 && lastVal <= v) {
            dsu[p] = p + 1;
          } else {
            prevC[p] = lastCand;
            nextC[p] = -1;
            if (lastCand >= 0) {
              diff[p] = lastVal - v;
              nextC[lastCand] = p;
            }
            lastCand = p;
            lastVal = v;
          }
        }
      }
      // (3) f_k(c).
      if (c >= k && c <= n - (S - k) && lastCand >= 0) {
        cur[c] = liveC[c] * B + std::abs(c - target(k)) + lastVal;
        parent[static_cast<size_t>(k) * (n + 1) + c] = lastCand;
      }
    }
    std::swap(prev, cur);
  }
  int32_t bestC = -1;
  for (int32_t c = S - 1; c <= n - 1; ++c)
    if (prev[c] < INF && (bestC < 0 || prev[c] < prev[bestC])) bestC = c;
  if (bestC < 0) throw std::invalid_argument("optimal-persistent: no plan");
  std::vector<int32_t> bounds(S + 1);
  bounds[0] = 0;
  bounds[S] = n;
  bounds[S - 1] = bestC;
  for (int k = S - 1; k >= 2; --k) bounds[k - 1] = parent[static_cast<size_t>(k) * (n + 1) + bounds[k]];
  return makePlan(t, std::move(bounds), "optimal-persistent");
}

Plan planOptimal(const Tape& t, const PlanOptions& o) {
  const int32_t n = t.size();
  const int S = o.segments;
  if (S <= 1) return makePlan(t, {0, n}, "optimal");
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
  const int32_t radius = std::max<int32_t>(1, static_cast<int32_t>(n / (2 * int64_t{S})));
  constexpr int kNear = 16, kNarrow = 16;
  std::vector<std::vector<int32_t>> cand(S - 1);
  std::vector<int32_t> window;
  for (int s = 1; s < S; ++s) {
    auto& k = cand[s - 1];
    for (const Plan& p : known) k.push_back(p.bounds[s]);
    const int32_t target = static_cast<int32_t>(int64_t{s} * n / S);
    const int32_t lo = std::max(1, target - radius), hi = std::min(n - 1, target + radius);
    window.clear();
    for (int32_t c = lo; c <= hi; ++c) window.push_back(c);
    auto nearer = [&](int32_t x, int32_t y) {
      const int32_t dx = std::abs(x - target), dy = std::abs(y - target);
      return dx != dy ? dx < dy : x < y;
    };
    const size_t near = std::min<size_t>(kNear, window.size());
    std::partial_sort(window.begin(), window.begin() + near, window.end(), nearer);
    k.insert(k.end(), window.begin(), window.begin() + near);
    const size_t narrow = std::min<size_t>(kNarrow, window.size());
    std::partial_sort(window.begin(), window.begin() + narrow, window.end(), [&](int32_t x, int32_t y) {
      return live[x] != live[y] ? live[x] < live[y] : nearer(x, y);
    });
    k.insert(k.end(), window.begin(), window.begin() + narrow);
  }
  return optimalOverCandidates(t, S, cand, CutObjective::PeakLive, "optimal", bound);
}

}  // namespace tapelab
