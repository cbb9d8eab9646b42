#include "planner/strategies.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <tuple>
#include <stdexcept>

#include "planner/liveness.h"
#include "planner/loops.h"
#include "planner/metrics.h"
#include "planner/nested.h"
#include "planner/optimal.h"
#include "planner/external.h"
#include "planner/pervalue.h"

namespace tapelab {

int32_t defaultSegLen(int32_t n) {
  return std::max<int32_t>(48, static_cast<int32_t>(std::lround(std::sqrt(double(n)))));
}

Plan planUniform(const Tape& t, const PlanOptions& o) {
  const int32_t n = t.size();
  std::vector<int32_t> bounds;
  if (o.segLen > 0) {
    for (int32_t c = 0; c < n; c += o.segLen) bounds.push_back(c);
  } else {
    const int segs = std::max(1, o.segments);
    for (int s = 0; s < segs; ++s) bounds.push_back(static_cast<int32_t>(int64_t{s} * n / segs));
  }
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

Plan planMarginal(const Tape& t, const PlanOptions& o) {
  const int32_t n = t.size();
  const int segs = o.segments;
  const std::vector<int32_t> last = lastUse(t);
  auto counted = [&](int32_t j) { return t.op[j] != Op::Input && j != t.output && last[j] > j; };
  const int64_t window = std::max<int64_t>(1, n / (4 * int64_t{segs}));
  std::vector<int32_t> bounds{0}, cost;
  for (int s = 1; s < segs; ++s) {
    const int32_t prev = bounds.back();
    const int64_t target = int64_t{s} * n / segs;
    const int64_t remaining = segs - s;
    const int32_t lo = static_cast<int32_t>(std::max<int64_t>(prev + 1, target - window));
    const int32_t hi = static_cast<int32_t>(std::min<int64_t>(n - remaining, target + window));
    int32_t best = static_cast<int32_t>(std::clamp<int64_t>(target, prev + 1, n - remaining));
    // cost[c - lo] for c in [lo, hi], and at best (which may lie outside when the window is empty).
    const int32_t from = std::min(lo, best), to = std::max(hi, best);
    cost.assign(static_cast<size_t>(to - from) + 2, 0);
    for (int32_t j = prev; j < to; ++j) {
      if (!counted(j)) continue;
      const int32_t a = std::max(from, j + 1), b = std::min(to, last[j]);
      if (a > b) continue;
      ++cost[a - from];
      --cost[b - from + 1];
    }
    for (int32_t c = from + 1; c <= to; ++c) cost[c - from] += cost[c - from - 1];
    const auto dist = [&](int64_t x) { return std::llabs(x - target); };
    for (int32_t c = lo; c <= hi; ++c)
      if (cost[c - from] < cost[best - from] || (cost[c - from] == cost[best - from] && dist(c) < dist(best))) best = c;
    bounds.push_back(best);
  }
  bounds.push_back(n);
  return makePlan(t, std::move(bounds), "marginal");
}

namespace {

// The part of auto that does not depend on the requested count: the score
// (the better of window and marginal) of every count searched, and the best
// optimal plan at the three best-scoring counts.
struct AutoSearch {
  std::vector<std::pair<int32_t, int>> scores;  // (peak_live, count), ascending
  Plan plan;
  int32_t peak = 0;
};

int32_t proxyPeak(const Tape& t, int count) {
  PlanOptions po;
  po.segments = count;
  return std::min(planMetrics(t, planWindow(t, po)).peakLive, planMetrics(t, planMarginal(t, po)).peakLive);
}

AutoSearch searchCounts(const Tape& t) {
  const int32_t n = t.size();
  const int maxCount = static_cast<int>(std::min<int32_t>(n, 4096));
  std::vector<int> grid{1};
  while (grid.back() < maxCount)
    grid.push_back(std::min(maxCount, std::max(grid.back() + 1, static_cast<int>(std::lround(grid.back() * 1.25)))));
  AutoSearch r;
  auto consider = [&](int count) {
    for (const auto& [peak, c] : r.scores)
      if (c == count) return peak;
    const int32_t peak = proxyPeak(t, count);
    r.scores.emplace_back(peak, count);
    return peak;
  };
  int32_t best = std::numeric_limits<int32_t>::max();
  size_t bestAt = 0, worseSince = 0;
  for (size_t g = 0; g < grid.size(); ++g) {
    const int32_t peak = consider(grid[g]);
    if (peak < best) {
      best = peak;
      bestAt = g;
      worseSince = 0;
    } else if (++worseSince >= 4) {
      break;
    }
  }
  const int lo = bestAt > 0 ? grid[bestAt - 1] + 1 : 1;
  const int hi = bestAt + 1 < grid.size() ? grid[bestAt + 1] - 1 : grid[bestAt];
  for (int count = lo; count <= hi; ++count) consider(count);
  std::sort(r.scores.begin(), r.scores.end());
  r.peak = std::numeric_limits<int32_t>::max();
  for (size_t k = 0; k < r.scores.size() && k < 3; ++k) {
    PlanOptions po;
    po.segments = r.scores[k].second;
    Plan p = planOptimal(t, po);
    const int32_t peak = planMetrics(t, p).peakLive;
    if (peak < r.peak || (peak == r.peak && p.segments() < r.plan.segments())) {
      r.peak = peak;
      r.plan = std::move(p);
    }
  }
  return r;
}

// Memoised per tape structure (op, a, b, c, output compared in full), so a sweep
// over requested counts (tapelab plan --all, experiments) searches once.
std::shared_ptr<const AutoSearch> cachedSearch(const Tape& t) {
  struct Entry {
    std::vector<Op> op;
    std::vector<int32_t> a, b, c;
    int32_t output;
    std::shared_ptr<const AutoSearch> search;
  };
  static std::mutex mutex;
  static std::deque<Entry> cache;
  auto same = [&](const Entry& e) { return e.output == t.output && e.op == t.op && e.a == t.a && e.b == t.b && e.c == t.c; };
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Entry& e : cache)
      if (same(e)) return e.search;
  }
  auto search = std::make_shared<const AutoSearch>(searchCounts(t));
  std::lock_guard<std::mutex> lock(mutex);
  cache.push_back({t.op, t.a, t.b, t.c, t.output, search});
  if (cache.size() > 4) cache.pop_front();
  return search;
}

}  // namespace

Plan planAuto(const Tape& t, const PlanOptions& o) {
  const std::shared_ptr<const AutoSearch> search = cachedSearch(t);
  Plan best = search->plan;
  // The requested count, when its score beats the search's plan: optimal there is better still.
  int32_t requested = std::numeric_limits<int32_t>::max();
  for (const auto& [peak, c] : search->scores)
    if (c == o.segments) requested = peak;
  if (requested == std::numeric_limits<int32_t>::max() && o.segments >= 1 && o.segments <= t.size())
    requested = proxyPeak(t, o.segments);
  if (requested < search->peak) {
    PlanOptions po;
    po.segments = o.segments;
    Plan p = planOptimal(t, po);
    if (planMetrics(t, p).peakLive < search->peak) best = std::move(p);
  }
  best.strategy = "auto";
  return best;
}

std::string parseSolveClock(const std::string& text, const std::string& flag) {
  if (text != "wall" && text != "cpu") throw std::invalid_argument(flag + ": expected wall or cpu, got '" + text + "'");
  return text;
}

int32_t registerBudget(int markets) {
  if (markets < 1 || markets > 8) throw std::invalid_argument("budget: markets per dispatch must be in 1..8");
  // papers/data/calibration-sm90-partial.log (sm_90, 2..8 markets; runs/h200-2026-11-30): all 23 kernels
  // with peak_live x markets above 434 spilled >= 236 B per thread; of the 27 at or below 400, 15 spilled
  // nothing and the rest 32..220 B. One market: window 4 (peak_live 212) fit in 255 registers.
  constexpr int32_t kLiveValuesPerThread = 400, kLargestSingleMarket = 212;
  return std::min(kLargestSingleMarket, kLiveValuesPerThread / markets);
}

Plan planBudget(const Tape& t, const PlanOptions& options) {
  PlanOptions o = options;
  if (o.budget < 0) throw std::invalid_argument("budget: the most values live at once must be positive");
  if (o.budget == 0) o.budget = o.markets > 0 ? registerBudget(o.markets) : planMetrics(t, planWindow(t, o)).peakLive;
  const int32_t n = t.size();
  const CostModel& costs = CostModel::measured();
  std::optional<Plan> best;
  PlanMetrics bestM;
  int32_t leastPeak = std::numeric_limits<int32_t>::max();
  std::string leastBy;
  auto consider = [&](Plan p) {
    const PlanMetrics m = planMetrics(t, p, costs);
    if (m.peakLive < leastPeak) {
      leastPeak = m.peakLive;
      leastBy = p.strategy + " at " + std::to_string(p.segments()) + " segments";
    }
    if (m.peakLive > o.budget) return;
    const auto key = [](const PlanMetrics& x) { return std::tuple(x.recomputeCost, x.peakLive, x.segments, x.depth); };
    if (!best || key(m) < key(bestM)) {
      best = std::move(p);
      bestM = m;
    }
  };
  consider(plainPlan(t));
  PlanOptions po;
  for (int s = 2; s <= std::min<int32_t>(n, 48); ++s) {
    po.segments = s;
    consider(planOptimal(t, po));
    for (int inner = 2; inner <= 6 && s <= 24; ++inner) {
      po.innerSegments = inner;
      consider(planTwoLevel(t, po));
    }
    po.innerSegments = 0;
  }
  for (int snapshots = 2; snapshots <= 32; ++snapshots) {
    po.segments = snapshots;
    consider(planRevolve(t, po));
  }
  if (!best)
    throw std::invalid_argument("budget: no plan keeps peak_live within " + std::to_string(o.budget) +
                                "; the least is " + std::to_string(leastPeak) + " (" + leastBy + ")");
  best->strategy = "budget";
  return std::move(*best);
}

Plan planPeriodic(const Tape& t, const PlanOptions& o) {
  const TapeLoop L = findLoop(t);
  if (!L.found() || o.segments < 2) return makePlan(t, planWindow(t, o).bounds, "periodic");
  // The offset in an iteration with the fewest values live across it (iteration 1's: the steady state).
  const std::vector<int32_t> live = liveAcross(t, lastUse(t));
  int32_t offset = 0;
  for (int32_t c = 1; c < L.period; ++c)
    if (live[L.node(1, c)] < live[L.node(1, offset)]) offset = c;
  // Iterations per segment: whole Philox calls' worth (4 draws), so every segment draws alike.
  const int64_t stride = L.drawStride < 0 ? -L.drawStride : L.drawStride;
  const int32_t unit = stride == 0 ? 1 : static_cast<int32_t>(4 / std::gcd<int64_t>(stride, 4));
  const int32_t per = std::max(unit, (L.count + o.segments / 2) / o.segments / unit * unit);
  std::vector<int32_t> bounds{0};
  for (int32_t k = per; k < L.count; k += per) bounds.push_back(L.node(k, offset));
  bounds.push_back(t.size());
  return makePlan(t, std::move(bounds), "periodic");
}

int rolledSegmentCount(const Tape& t, int markets, int base) {
  if (markets > 1) return base;
  const int64_t byNodes = (static_cast<int64_t>(t.size()) + kRolledSegmentNodes - 1) / kRolledSegmentNodes;
  return static_cast<int>(std::max<int64_t>(base, std::min<int64_t>(byNodes, kRolledSegmentsMost)));
}

const std::vector<StrategyEntry>& strategies() {
  static const std::vector<StrategyEntry> list = {
      {"uniform", planUniform, "even segments (or --seglen nodes each); scratch default max(48, round(sqrt(n)))"},
      {"window", planWindow, "article's: fewest live values in a window around even targets"},
      {"periodic", planPeriodic, "the time loop (planner/loops.h) cut every N steps at its fewest live values, N whole Philox calls near steps/segments: segments alike, rolled by GPU kernels (config loops)"},
      {"marginal", planMarginal, "window, but a cut scores the values it adds to the persistent set"},
      {"optimal", planOptimal, "exact DP: least peak_live over candidate cuts (incl. every other strategy's)"},
      {"optimal-persistent", planOptimalPersistent, "exact DP: least persistent over all cut positions"},
      {"auto", planAuto, "chooses the segment count too (least peak_live), then optimal at that count"},
      {"two-level", planTwoLevel, "nested: window, then each segment cut again by window (--inner, default 4)"},
      {"revolve", planRevolve, "nested: Griewank's binomial checkpointing over the time steps; segments = snapshots"},
      {"budget", planBudget, "least weighted recompute with peak_live <= --budget (default: register file / markets, else window's)"},
      {"mincut", planMinCut, "per-value: Enzyme's min-cut, fewest kept values per block of window's cuts"},
      {"mincut-weighted", planMinCutWeighted, "per-value: min-cut pricing recompute in instructions, within --budget"},
  };
  return list;
}

const std::vector<StrategyEntry>& processStrategies() {
  static const std::vector<StrategyEntry> list = {
      {"exact", planExact, "per-value: least weighted recompute within --budget over every kept set (HiGHS MILP, --solve-seconds)"},
      {"cmd", planCommand, "a strategy process: --strategy-cmd \"python3 mine.py\" writes the plan file (docs/strategies.md)"},
  };
  return list;
}

const StrategyEntry& findStrategy(const std::string& name) {
  std::string known;
  for (const auto* list : {&strategies(), &processStrategies()})
    for (const StrategyEntry& s : *list) {
      if (s.name == name) return s;
      known += (known.empty() ? "" : ", ") + s.name;
    }
  throw std::invalid_argument("unknown strategy '" + name + "' (known: " + known + ")");
}

Plan makeStrategyPlan(const std::string& name, const Tape& t, const PlanOptions& o) {
  if (o.segments < 1) throw std::invalid_argument("segment count must be at least 1, got " + std::to_string(o.segments));
  if (o.segments > t.size())
    throw std::invalid_argument("segment count " + std::to_string(o.segments) + " exceeds the tape's " +
                                std::to_string(t.size()) + " nodes");
  if (o.segLen < 0) throw std::invalid_argument("segment length must be positive");
  return findStrategy(name).fn(t, o);
}

}  // namespace tapelab
