#include "planner/plan.h"

#include <algorithm>
#include <stdexcept>

#include "planner/liveness.h"

namespace tapelab {

bool Plan::nested() const {
  for (const CutTree& c : inner)
    if (!c.leaf()) return true;
  return false;
}

namespace {
int treeDepth(const CutTree& c) {
  if (c.leaf()) return 0;
  int d = 0;
  for (const CutTree& i : c.inner) d = std::max(d, treeDepth(i));
  return 1 + d;
}
}  // namespace

int Plan::depth() const {
  if (segments() <= 1) return 0;
  int d = 0;
  for (const CutTree& c : inner) d = std::max(d, treeDepth(c));
  return 1 + d;
}

std::string checkCutTree(const CutTree& c, int32_t begin, int32_t end, const std::string& path) {
  int32_t prev = begin;
  for (size_t k = 0; k < c.cuts.size(); ++k) {
    const int32_t x = c.cuts[k];
    if (x <= begin || x >= end)
      return path + ".cuts: " + std::to_string(x) + " is not inside the segment [" + std::to_string(begin) + ", " +
             std::to_string(end) + ")";
    if (x <= prev) return path + ".cuts: not increasing at " + std::to_string(x);
    prev = x;
  }
  if (c.inner.empty()) return "";
  if (c.cuts.empty()) return path + ".inner: a segment without cuts has no sub-segments to cut";
  if (c.inner.size() != c.cuts.size() + 1)
    return path + ".inner: " + std::to_string(c.inner.size()) + " entries for " + std::to_string(c.cuts.size() + 1) +
           " sub-segments";
  for (size_t k = 0; k < c.inner.size(); ++k) {
    const int32_t lo = k == 0 ? begin : c.cuts[k - 1], hi = k == c.cuts.size() ? end : c.cuts[k];
    if (c.chain && !c.inner[k].leaf())
      return path + ".inner[" + std::to_string(k) + "]: a chain's sub-segments cannot be cut again";
    const std::string problem = checkCutTree(c.inner[k], lo, hi, path + ".inner[" + std::to_string(k) + "]");
    if (!problem.empty()) return problem;
  }
  return "";
}

Plan makePlan(const Tape& t, std::vector<int32_t> bounds, std::string strategy, std::vector<CutTree> inner) {
  const int32_t n = t.size();
  if (bounds.size() < 2 || bounds.front() != 0 || bounds.back() != n)
    throw std::invalid_argument("plan bounds must start at 0 and end at the tape size");
  for (size_t s = 1; s < bounds.size(); ++s)
    if (bounds[s] <= bounds[s - 1]) throw std::invalid_argument("plan bounds must be strictly increasing");
  if (!inner.empty()) {
    if (inner.size() != bounds.size() - 1)
      throw std::invalid_argument("inner: " + std::to_string(inner.size()) + " entries for " +
                                  std::to_string(bounds.size() - 1) + " segments");
    for (size_t s = 0; s < inner.size(); ++s) {
      const std::string problem =
          checkCutTree(inner[s], bounds[s], bounds[s + 1], "inner[" + std::to_string(s) + "]");
      if (!problem.empty()) throw std::invalid_argument(problem);
    }
    bool any = false;
    for (const CutTree& c : inner) any = any || !c.leaf();
    if (!any) inner.clear();  // nothing cut again: a flat plan
    if (any && bounds.size() == 2)
      throw std::invalid_argument("inner: a plan of one segment is the plain kernel; cut the top level first");
  }

  Plan p;
  p.strategy = std::move(strategy);
  p.bounds = std::move(bounds);
  p.inner = std::move(inner);
  const int segs = p.segments();
  const std::vector<int32_t> last = lastUse(t);

  p.isPersistent.assign(n, 0);
  p.slot.assign(n, -1);
  p.storedAt.assign(segs > 1 ? segs - 1 : 0, {});
  // Segment of each node, to find the first cut a value crosses.
  std::vector<int32_t> segOf(n);
  for (int s = 0; s < segs; ++s)
    for (int32_t i = p.begin(s); i < p.end(s); ++i) segOf[i] = s;

  for (int32_t j = 0; j < n; ++j) {
    const int s = segOf[j];
    const bool crosses = s + 1 < segs && last[j] >= p.end(s);
    if (crosses) {
      p.crossing.push_back(j);
      if (t.op[j] != Op::Input) p.storedAt[s].push_back(j);
    }
    if (crosses || t.op[j] == Op::Input || j == t.output) {
      p.isPersistent[j] = 1;
      p.persistent.push_back(j);
    }
  }
  for (auto& stored : p.storedAt)
    for (int32_t j : stored) p.slot[j] = p.scratchSlots++;
  return p;
}

Plan makePerValuePlan(const Tape& t, std::vector<int32_t> bounds, std::vector<int32_t> keep, std::string strategy) {
  Plan p = makePlan(t, std::move(bounds), std::move(strategy));
  const int32_t n = t.size();
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  for (int32_t j : keep)
    if (j < 0 || j >= n)
      throw std::invalid_argument("keep: " + std::to_string(j) + " is not a node of the tape (0.." + std::to_string(n - 1) + ")");
  p.perValue = true;
  p.keep.clear();
  p.crossing.clear();
  p.persistent.clear();
  p.isPersistent.assign(n, 0);
  for (int32_t j : keep) p.isPersistent[j] = 1;
  for (int32_t j = 0; j < n; ++j)
    if (t.op[j] == Op::Input || j == t.output) p.isPersistent[j] = 1;
  for (int32_t j = 0; j < n; ++j) {
    if (!p.isPersistent[j]) continue;
    p.persistent.push_back(j);
    if (t.op[j] != Op::Input) p.crossing.push_back(j);
    if (t.op[j] != Op::Input && j != t.output) p.keep.push_back(j);
  }
  // No scratch slots: a per-value plan is a register plan (engines refuse it as a scratch kernel).
  p.slot.assign(n, -1);
  p.storedAt.assign(p.storedAt.size(), {});
  p.scratchSlots = 0;
  return p;
}

Plan plainPlan(const Tape& t) { return makePlan(t, {0, t.size()}, "plain"); }

std::vector<int32_t> segmentImports(const Tape& t, const Plan& p, int s) {
  std::vector<int32_t> in;
  const int32_t lo = p.begin(s);
  for (int32_t i = lo; i < p.end(s); ++i)
    forEachArg(t, i, [&](int32_t j) {
      if (j < lo) in.push_back(j);
    });
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  return in;
}

}  // namespace tapelab
