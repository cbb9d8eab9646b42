#include "planner/metrics.h"

#include <algorithm>

#include "planner/liveness.h"

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

}  // namespace

PlanMetrics planMetrics(const Tape& t, const Plan& plan) {
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
  Peak peak;
  peak.value = P;  // the kernel holds at least its persistent values
  std::vector<int32_t> diff(static_cast<size_t>(n) + 1, 0);
  auto addRange = [&](int32_t lo, int32_t hi) {  // +1 on [lo, hi]
    if (lo > hi) return;
    ++diff[lo];
    --diff[hi + 1];
  };

  if (segs == 1) {
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

  std::vector<int32_t> lastReader(n, -1);  // largest recomputed reader within the segment
  std::vector<uint8_t> recomputed(n, 0);
  for (int s = segs - 1; s >= 0; --s) {
    const int32_t p = plan.begin(s), c = plan.end(s);
    for (int32_t i = c - 1; i >= p; --i) {
      if (isP[i] || (rr[i] < 0 && lastReader[i] < 0)) continue;
      recomputed[i] = 1;
      if (t.op[i] != Op::Const) ++m.recomputeOps;
      const int ar = arity(t.op[i]);
      if (ar >= 1 && t.a[i] >= p) lastReader[t.a[i]] = std::max(lastReader[t.a[i]], i);
      if (ar >= 2 && t.b[i] >= p) lastReader[t.b[i]] = std::max(lastReader[t.b[i]], i);
    }
    // Recompute points Q(i), i in [p, c); Q(c-1) is also the boundary R(c).
    std::fill(diff.begin() + p, diff.begin() + c + 1, 0);
    for (int32_t j = p; j < c; ++j)
      if (recomputed[j]) addRange(j, rr[j] >= 0 ? c - 1 : lastReader[j] - 1);
    for (int32_t i = p, run = 0; i < c; ++i) peak.see(P + adj[c] + (run += diff[i]), s);
    // Reverse points R(i), i from c-1 down to p: j stays until firstReverseRead[j] is reversed.
    std::fill(diff.begin() + p, diff.begin() + c + 1, 0);
    for (int32_t j = p; j < c; ++j)
      if (!isP[j] && rr[j] >= 0) addRange(rr[j] + 1, c - 1);
    for (int32_t i = p, run = 0; i < c; ++i) peak.see(P + adj[i] + (run += diff[i]), s);
    for (int32_t j = p; j < c; ++j) {
      recomputed[j] = 0;
      lastReader[j] = -1;
    }
  }
  m.peakLive = peak.value;
  m.peakSegment = peak.segment;
  return m;
}

}  // namespace tapelab
