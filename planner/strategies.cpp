#include "planner/strategies.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "planner/liveness.h"

namespace tapelab {

int32_t defaultSegLen(int32_t n) {
  return std::max<int32_t>(48, static_cast<int32_t>(std::lround(std::sqrt(double(n)))));
}

Plan planUniform(const Tape& t, const PlanOptions& o) {
  const int32_t n = t.size();
  const int32_t len = o.segLen > 0 ? o.segLen : static_cast<int32_t>((n + o.segments - 1) / o.segments);
  std::vector<int32_t> bounds;
  for (int32_t c = 0; c < n; c += len) bounds.push_back(c);
  bounds.push_back(n);
  return makePlan(t, std::move(bounds), "uniform");
}

Plan planWindow(const Tape& t, const PlanOptions& o) {
  const int32_t n = t.size();
  const int segs = o.segments;
  const std::vector<int32_t> live = liveAcross(t, lastUse(t));
  const int64_t window = std::max<int64_t>(1, n / (4 * int64_t{segs}));
  std::vector<int32_t> bounds{0};
  for (int s = 1; s < segs; ++s) {
    const int64_t target = int64_t{s} * n / segs;
    const int64_t remaining = segs - s;  // cuts still to place after this one, each needing a node
    const int64_t lo = std::max<int64_t>(bounds.back() + 1, target - window);
    const int64_t hi = std::min<int64_t>(n - remaining, target + window);
    int64_t best = std::clamp<int64_t>(target, bounds.back() + 1, n - remaining);
    for (int64_t c = lo; c <= hi; ++c) {
      const auto dist = [&](int64_t x) { return std::llabs(x - target); };
      if (live[c] < live[best] || (live[c] == live[best] && dist(c) < dist(best))) best = c;
    }
    bounds.push_back(static_cast<int32_t>(best));
  }
  bounds.push_back(n);
  return makePlan(t, std::move(bounds), "window");
}

const std::vector<StrategyEntry>& strategies() {
  static const std::vector<StrategyEntry> list = {
      {"uniform", planUniform, "fixed segment length (default max(48, round(sqrt(n))))"},
      {"window", planWindow, "article's: fewest live values in a window around even targets"},
  };
  return list;
}

Plan makeStrategyPlan(const std::string& name, const Tape& t, const PlanOptions& o) {
  if (o.segments < 1) throw std::invalid_argument("segment count must be at least 1, got " + std::to_string(o.segments));
  if (o.segments > t.size())
    throw std::invalid_argument("segment count " + std::to_string(o.segments) + " exceeds the tape's " +
                                std::to_string(t.size()) + " nodes");
  if (o.segLen < 0) throw std::invalid_argument("segment length must be positive");
  std::string known;
  for (const auto& s : strategies()) {
    if (s.name == name) return s.fn(t, o);
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw std::invalid_argument("unknown strategy '" + name + "' (known: " + known + ")");
}

}  // namespace tapelab
