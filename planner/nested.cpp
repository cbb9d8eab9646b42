#include "planner/nested.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "planner/liveness.h"

namespace tapelab {

std::vector<int32_t> stepStarts(const Tape& t) {
  if (std::find(t.op.begin(), t.op.end(), Op::Randn) == t.op.end()) {
    // No draws: up to kStepsWithoutDraws equal steps.
    const int32_t n = t.size(), steps = std::min<int32_t>(n, kStepsWithoutDraws);
    std::vector<int32_t> even;
    for (int32_t i = 0; i <= steps; ++i) even.push_back(static_cast<int32_t>(int64_t{i} * n / steps));
    return even;
  }
  std::vector<int32_t> starts{0};
  bool inRun = false, firstRun = true;
  for (int32_t i = 0; i < t.size(); ++i) {
    const bool draw = t.op[i] == Op::Randn;
    if (draw && !inRun) {
      if (!firstRun) starts.push_back(i);
      firstRun = false;
    }
    inRun = draw;
  }
  starts.push_back(t.size());
  return starts;
}

namespace {

constexpr int kMaxRevolveSteps = 4096;

// The dynamic programme behind revolve, in step evaluations. With k steps to
// reverse from a held start and f free snapshots:
//   node(k, f)  the start must be advanced from: 1 for one step; a chain
//               k(k+1)/2 (each step advanced to from the start); or a split
//               after m steps: advance m, snapshot, reverse the k-m later
//               steps with f-1, then the m first with f.
//   root(k, f)  the same where the primal sweep has already passed (advances
//               to a split are free): the top level of the plan.
class RevolveTable {
 public:
  RevolveTable(int steps, int free) : free_(free) {
    const size_t cells = size_t(steps + 1) * size_t(free + 1);
    node_.assign(cells, 0);
    nodeSplit_.assign(cells, 0);
    root_.assign(cells, 0);
    rootSplit_.assign(cells, 0);
    for (int f = 0; f <= free; ++f)
      for (int k = 1; k <= steps; ++k) {
        const int64_t chain = int64_t{k} * (k + 1) / 2;
        int64_t best = k == 1 ? 1 : chain, bestRoot = best;
        int split = 0, splitRoot = 0;
        if (k > 1 && f > 0)
          for (int m = 1; m < k; ++m) {
            const int64_t c = m + node(k - m, f - 1) + node(m, f);
            if (c < best) best = c, split = m;
            const int64_t r = root(k - m, f - 1) + node(m, f);
            if (r < bestRoot) bestRoot = r, splitRoot = m;
          }
        at(node_, k, f) = best;
        at(nodeSplit_, k, f) = split;
        at(root_, k, f) = bestRoot;
        at(rootSplit_, k, f) = splitRoot;
      }
  }
  int64_t node(int k, int f) const { return node_[index(k, f)]; }
  int64_t root(int k, int f) const { return root_[index(k, f)]; }
  int nodeSplit(int k, int f) const { return nodeSplit_[index(k, f)]; }
  int rootSplit(int k, int f) const { return rootSplit_[index(k, f)]; }

 private:
  size_t index(int k, int f) const { return size_t(k) * size_t(free_ + 1) + size_t(f); }
  template <class V>
  typename V::value_type& at(V& v, int k, int f) {
    return v[index(k, f)];
  }
  int free_;
  std::vector<int64_t> node_, root_;
  std::vector<int32_t> nodeSplit_, rootSplit_;
};

class RevolveBuilder {
 public:
  RevolveBuilder(const std::vector<int32_t>& starts, const RevolveTable& table) : starts_(starts), table_(table) {}

  // Step range [a, a+k) reversed from a held start with f free snapshots.
  CutTree node(int a, int k, int f) const {
    CutTree c;
    if (k == 1) return c;
    if (table_.nodeSplit(k, f) == 0) return chain(a, k);
    std::vector<CutTree> children;
    spine(a, k, f, false, c.cuts, children);
    c.inner = std::move(children);
    if (std::all_of(c.inner.begin(), c.inner.end(), [](const CutTree& t) { return t.leaf(); })) c.inner.clear();
    return c;
  }

  // Flattens a right spine of splits into one multiway level: the parts
  // [a, a+m1), [a+m1, a+m1+m2), ... reversed with f, f-1, ... snapshots.
  void spine(int a, int k, int f, bool root, std::vector<int32_t>& cuts, std::vector<CutTree>& parts) const {
    for (;;) {
      const int m = k == 1 ? 0 : (root ? table_.rootSplit(k, f) : table_.nodeSplit(k, f));
      if (m == 0) {  // the rest is one step, or a chain
        parts.push_back(k == 1 ? CutTree{} : chain(a, k));
        return;
      }
      parts.push_back(node(a, m, f));
      cuts.push_back(starts_[static_cast<size_t>(a + m)]);
      a += m;
      k -= m;
      f -= 1;
    }
  }

 private:
  CutTree chain(int a, int k) const {
    CutTree c;
    c.chain = true;
    for (int i = 1; i < k; ++i) c.cuts.push_back(starts_[static_cast<size_t>(a + i)]);
    return c;
  }
  const std::vector<int32_t>& starts_;
  const RevolveTable& table_;
};

}  // namespace

int64_t revolveCost(int steps, int snapshots) {
  if (steps < 1 || snapshots < 2) throw std::invalid_argument("revolveCost: steps >= 1 and snapshots >= 2");
  return RevolveTable(steps, snapshots - 1).root(steps, snapshots - 1);
}

Plan planRevolve(const Tape& t, const PlanOptions& o) {
  const std::vector<int32_t> starts = stepStarts(t);
  const int steps = static_cast<int>(starts.size()) - 1;
  if (steps > kMaxRevolveSteps)
    throw std::invalid_argument("revolve: " + std::to_string(steps) + " steps; at most " +
                                std::to_string(kMaxRevolveSteps));
  const int snapshots = o.segments;
  if (snapshots < 2) return makePlan(t, {0, t.size()}, "revolve");  // the start alone: nothing to cut at
  const int free = std::min(snapshots - 1, steps);
  const RevolveTable table(steps, free);
  const RevolveBuilder builder(starts, table);
  std::vector<int32_t> cuts;
  std::vector<CutTree> parts;
  builder.spine(0, steps, free, true, cuts, parts);
  std::vector<int32_t> bounds{0};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back(t.size());
  if (bounds.size() == 2) parts.clear();  // one segment: nothing to nest
  return makePlan(t, std::move(bounds), "revolve", std::move(parts));
}

namespace {

// window's rule inside [begin, end): `count` parts, each cut within a quarter
// part of its even target at the fewest live values, ties to the target.
std::vector<int32_t> windowCuts(const std::vector<int32_t>& live, int32_t begin, int32_t end, int count) {
  const int32_t len = end - begin;
  count = std::min<int32_t>(count, len);
  std::vector<int32_t> cuts;
  const int64_t window = std::max<int64_t>(1, len / (4 * int64_t{count}));
  int32_t prev = begin;
  for (int s = 1; s < count; ++s) {
    const int64_t target = begin + int64_t{s} * len / count;
    const int64_t remaining = count - s;
    const int64_t lo = std::max<int64_t>(prev + 1, target - window);
    const int64_t hi = std::min<int64_t>(end - remaining, target + window);
    int64_t best = std::clamp<int64_t>(target, prev + 1, end - remaining);
    for (int64_t c = lo; c <= hi; ++c) {
      const auto dist = [&](int64_t x) { return std::llabs(x - target); };
      if (live[c] < live[best] || (live[c] == live[best] && dist(c) < dist(best))) best = c;
    }
    cuts.push_back(static_cast<int32_t>(best));
    prev = static_cast<int32_t>(best);
  }
  return cuts;
}

}  // namespace

Plan planTwoLevel(const Tape& t, const PlanOptions& o) {
  const Plan top = planWindow(t, o);
  if (top.segments() == 1) return makePlan(t, top.bounds, "two-level");  // the plain kernel
  const std::vector<int32_t> live = liveAcross(t, lastUse(t));
  const int inner = o.innerSegments > 0 ? o.innerSegments : 4;
  std::vector<CutTree> trees;
  for (int s = 0; s < top.segments(); ++s) {
    CutTree c;
    c.cuts = windowCuts(live, top.begin(s), top.end(s), inner);
    trees.push_back(std::move(c));
  }
  return makePlan(t, top.bounds, "two-level", std::move(trees));
}

}  // namespace tapelab
