#include "planner/pervalue.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "planner/costs.h"
#include "planner/metrics.h"

namespace tapelab {
namespace {

constexpr double kInfinite = 1e30;
constexpr double kEpsilon = 1e-9;

// Dinic's maximum flow on a small graph of double capacities.
class MaxFlow {
 public:
  explicit MaxFlow(int vertices) : first_(static_cast<size_t>(vertices), -1) {}
  void edge(int u, int v, double capacity) {
    if (capacity <= 0) return;
    add(u, v, capacity);
    add(v, u, 0);
  }
  void run(int s, int t) {
    while (levels(s, t)) {
      next_ = first_;
      while (push(s, t, kInfinite) > kEpsilon) {
      }
    }
  }
  // The vertices that still reach t in the residual graph: the sink side of the minimum cut
  // nearest the sink.
  std::vector<uint8_t> reachesSink(int t) const {
    std::vector<uint8_t> seen(first_.size(), 0);
    std::queue<int> q;
    q.push(t);
    seen[static_cast<size_t>(t)] = 1;
    while (!q.empty()) {
      const int v = q.front();
      q.pop();
      for (int e = first_[static_cast<size_t>(v)]; e >= 0; e = edges_[static_cast<size_t>(e)].next) {
        const int u = edges_[static_cast<size_t>(e)].to;  // edge v->u; its reverse u->v has residual cap
        if (!seen[static_cast<size_t>(u)] && edges_[static_cast<size_t>(e ^ 1)].cap > kEpsilon) {
          seen[static_cast<size_t>(u)] = 1;
          q.push(u);
        }
      }
    }
    return seen;
  }

 private:
  struct Edge {
    int to, next;
    double cap;
  };
  void add(int u, int v, double c) {
    edges_.push_back({v, first_[static_cast<size_t>(u)], c});
    first_[static_cast<size_t>(u)] = static_cast<int>(edges_.size()) - 1;
  }
  bool levels(int s, int t) {
    level_.assign(first_.size(), -1);
    std::queue<int> q;
    q.push(s);
    level_[static_cast<size_t>(s)] = 0;
    while (!q.empty()) {
      const int v = q.front();
      q.pop();
      for (int e = first_[static_cast<size_t>(v)]; e >= 0; e = edges_[static_cast<size_t>(e)].next) {
        const Edge& x = edges_[static_cast<size_t>(e)];
        if (x.cap > kEpsilon && level_[static_cast<size_t>(x.to)] < 0) {
          level_[static_cast<size_t>(x.to)] = level_[static_cast<size_t>(v)] + 1;
          q.push(x.to);
        }
      }
    }
    return level_[static_cast<size_t>(t)] >= 0;
  }
  double push(int v, int t, double f) {
    if (v == t) return f;
    for (int& e = next_[static_cast<size_t>(v)]; e >= 0; e = edges_[static_cast<size_t>(e)].next) {
      Edge& x = edges_[static_cast<size_t>(e)];
      if (x.cap <= kEpsilon || level_[static_cast<size_t>(x.to)] != level_[static_cast<size_t>(v)] + 1) continue;
      const double got = push(x.to, t, std::min(f, x.cap));
      if (got > kEpsilon) {
        x.cap -= got;
        edges_[static_cast<size_t>(e ^ 1)].cap += got;
        return got;
      }
    }
    return 0;
  }
  std::vector<Edge> edges_;
  std::vector<int> first_, next_, level_;
};

// The values block [b, e) keeps (see pervalue.h), appended to `keep`.
void cutBlock(const Tape& t, int32_t b, int32_t e, double lambda, double recomputeWeight, const CostModel& costs,
              std::vector<int32_t>& keep) {
  // Vertices: the block's values and its imports, each an in (2k) and an out (2k+1); then s, t.
  std::vector<int32_t> local;
  std::vector<int> id(static_cast<size_t>(e), -1);
  auto vertex = [&](int32_t j) {
    if (id[static_cast<size_t>(j)] < 0) {
      id[static_cast<size_t>(j)] = static_cast<int>(local.size());
      local.push_back(j);
    }
    return id[static_cast<size_t>(j)];
  };
  for (int32_t i = b; i < e; ++i) {
    vertex(i);
    forEachArg(t, i, vertex);
  }
  const int V = static_cast<int>(local.size()), s = 2 * V, sink = 2 * V + 1;
  MaxFlow g(2 * V + 2);
  for (int k = 0; k < V; ++k) {
    const int32_t j = local[static_cast<size_t>(k)];
    const bool free = t.op[j] == Op::Input || j == t.output;
    const bool import = j < b && t.op[j] != Op::Const;  // a literal is recomputed anywhere
    const double keepCost = free ? 0 : t.op[j] == Op::Const ? kInfinite : lambda;
    g.edge(2 * k, 2 * k + 1, keepCost);
    if (import)
      g.edge(s, 2 * k, kInfinite);  // not recomputable here: kept, or not needed
    else
      g.edge(s, 2 * k, recomputeWeight * costs.of(t.op[j]));  // recomputed: its in side with the sink
  }
  for (int32_t i = b; i < e; ++i) {
    forEachArg(t, i, [&](int32_t j) { g.edge(2 * id[static_cast<size_t>(j)] + 1, 2 * id[static_cast<size_t>(i)], kInfinite); });
    const Op op = t.op[i];
    if (arity(op) == 0) continue;
    const AdjointReads r = adjointReads(op);
    for (int k = 0; k < arity(op); ++k)
      if (r.arg(k)) g.edge(2 * id[static_cast<size_t>(t.arg(i, k))] + 1, sink, kInfinite);
    if (r.r) g.edge(2 * id[static_cast<size_t>(i)] + 1, sink, kInfinite);
  }
  g.run(s, sink);
  const std::vector<uint8_t> sinkSide = g.reachesSink(sink);
  for (int k = 0; k < V; ++k)
    if (!sinkSide[static_cast<size_t>(2 * k)] && sinkSide[static_cast<size_t>(2 * k + 1)]) keep.push_back(local[static_cast<size_t>(k)]);
}

std::vector<int32_t> windowBounds(const Tape& t, const PlanOptions& o) {
  if (o.segments <= 1) return {0, t.size()};
  return planWindow(t, o).bounds;
}

}  // namespace

Plan perValueCutPlan(const Tape& t, const std::vector<int32_t>& bounds, double lambda, double recomputeWeight,
                     const std::string& strategy) {
  const CostModel& costs = CostModel::measured();
  std::vector<int32_t> keep;
  for (size_t s = 0; s + 1 < bounds.size(); ++s) cutBlock(t, bounds[s], bounds[s + 1], lambda, recomputeWeight, costs, keep);
  return makePerValuePlan(t, bounds, std::move(keep), strategy);
}

Plan planMinCut(const Tape& t, const PlanOptions& o) { return perValueCutPlan(t, windowBounds(t, o), 1.0, 0.0, "mincut"); }

Plan planMinCutWeighted(const Tape& t, const PlanOptions& o) {
  const std::vector<int32_t> bounds = windowBounds(t, o);
  int32_t budget = o.budget;
  if (budget < 0) throw std::invalid_argument("mincut-weighted: the most values live at once must be positive");
  if (budget == 0) budget = o.markets > 0 ? registerBudget(o.markets) : planMetrics(t, planWindow(t, o)).peakLive;
  std::optional<Plan> best, leastPlan;
  std::tuple<double, int32_t> bestKey{};
  int32_t least = std::numeric_limits<int32_t>::max();
  auto consider = [&](Plan p) {
    const PlanMetrics m = planMetrics(t, p);
    if (m.peakLive < least) {
      least = m.peakLive;
      leastPlan = p;
    }
    if (m.peakLive > budget) return;
    const std::tuple<double, int32_t> key{m.recomputeCost, m.peakLive};
    if (!best || key < bestKey) {
      best = std::move(p);
      bestKey = key;
    }
  };
  for (double lambda = 0.25; lambda <= 4096; lambda *= 2) consider(perValueCutPlan(t, bounds, lambda, 1.0, "mincut-weighted"));
  consider(perValueCutPlan(t, bounds, 1.0, 0.0, "mincut-weighted"));
  return std::move(best ? *best : *leastPlan);
}

}  // namespace tapelab
