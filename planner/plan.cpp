#include "planner/plan.h"

#include <algorithm>
#include <stdexcept>

#include "planner/liveness.h"

namespace tapelab {

Plan makePlan(const Tape& t, std::vector<int32_t> bounds, std::string strategy) {
  const int32_t n = t.size();
  if (bounds.size() < 2 || bounds.front() != 0 || bounds.back() != n)
    throw std::invalid_argument("plan bounds must start at 0 and end at the tape size");
  for (size_t s = 1; s < bounds.size(); ++s)
    if (bounds[s] <= bounds[s - 1]) throw std::invalid_argument("plan bounds must be strictly increasing");

  Plan p;
  p.strategy = std::move(strategy);
  p.bounds = std::move(bounds);
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

Plan plainPlan(const Tape& t) { return makePlan(t, {0, t.size()}, "plain"); }

std::vector<int32_t> segmentImports(const Tape& t, const Plan& p, int s) {
  std::vector<int32_t> in;
  const int32_t lo = p.begin(s);
  for (int32_t i = lo; i < p.end(s); ++i) {
    const int ar = arity(t.op[i]);
    if (ar >= 1 && t.a[i] < lo) in.push_back(t.a[i]);
    if (ar >= 2 && t.b[i] < lo) in.push_back(t.b[i]);
  }
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  return in;
}

}  // namespace tapelab
