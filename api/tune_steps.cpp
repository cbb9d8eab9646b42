#include "api/tune_steps.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include "planner/strategies.h"
#include "util/stats.h"

namespace tapelab {

const char* toString(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::NotTried: return "not tried";
    case CandidateStatus::Pruned: return "pruned";
    case CandidateStatus::Failed: return "failed";
    case CandidateStatus::Compiled: return "compiled";
    case CandidateStatus::Timed: return "timed";
  }
  return "?";
}

const char* toString(BitsCheck b) {
  switch (b) {
    case BitsCheck::Unchecked: return "-";
    case BitsCheck::SamePlain: return "==plain";
    case BitsCheck::SameValue: return "==value";
    case BitsCheck::Differ: return "DIFFER";
  }
  return "?";
}

std::string labelOf(const std::string& strategy, const Plan& plan) {
  if (plan.segments() <= 1) return "plain";
  std::string label = strategy + " " + std::to_string(plan.segments());
  if (strategy == "two-level" && !plan.inner.empty()) {
    int inner = 0;
    for (const CutTree& t : plan.inner) inner = std::max(inner, static_cast<int>(t.cuts.size()) + 1);
    label += "x" + std::to_string(inner);
  }
  return label;
}

std::vector<PlanChoice> candidatePlans(const Tape& tape, const std::vector<std::string>& strategies,
                                       const std::vector<int>& segments, int markets, bool checkpointed) {
  for (const std::string& name : strategies) findStrategy(name);  // a typo is an error, not a skip
  std::vector<PlanChoice> plans{{"plain", planMetrics(tape, plainPlan(tape))}};
  if (!checkpointed) return plans;
  std::map<std::vector<int32_t>, bool> seen;
  for (const std::string& name : strategies)
    for (int n : segments) {
      if (n >= tape.size()) continue;
      PlanOptions po;
      po.segments = n;
      po.markets = markets;
      try {
        const Plan p = makeStrategyPlan(name, tape, po);
        if (p.segments() <= 1 || !seen.emplace(p.bounds, true).second) continue;
        plans.push_back({labelOf(name, p), planMetrics(tape, p)});
      } catch (const std::exception&) {  // a strategy with no plan here (budget out of reach): skipped
      }
    }
  return plans;
}

bool searchesField(const ConfigField& field, const std::string& engine, const std::vector<std::string>& fixed) {
  if (!fieldAppliesTo(field, engine) || std::string(field.name) == "math" ||
      std::find(fixed.begin(), fixed.end(), field.name) != fixed.end())
    return false;
  return searchValues(field).size() >= 2;
}

std::optional<KernelConfig> fieldVariant(const ConfigField& field, const KernelConfig& best, const std::string& value,
                                         const KernelShape& kernel) {
  if (field.get(best) == value) return std::nullopt;
  KernelConfig c = best;
  field.set(c, value, field.name);
  if (!fieldActs(field, c, kernel).empty()) return std::nullopt;  // it does not act here (engine/config.h): the same kernel
  return c;
}

// The register budget was calibrated on sm_90 with NVRTC's kernels (planner/strategies.h): cuda's, and
// hip's, whose values live in registers the same way. Vulkan's and OpenCL's drivers allocate registers
// their own way (lavapipe and PoCL on a CPU, no register file at all) and nothing measured where their
// kernels spill, so they are not pruned by it; a CPU engine's values live in its caches.
PruneModel pruneModelFor(const std::string& engine, const EngineCaps& caps, int markets) {
  PruneModel m;
  if (engine == "cuda" || engine == "hip") {
    m.peakLiveBudget = markets >= 1 && markets <= 8 ? registerBudget(markets) : 0;
    m.says = "the sm_90 register budget for " + std::to_string(markets) + " market(s)";
  } else if (!caps.marketOrder) {
    m.says = "a CPU engine: no register budget prunes them";
  } else {
    m.says = engine + ": no register budget prunes them (the sm_90 budget is NVRTC's, not this compiler's)";
  }
  return m;
}

PrunedPlans prunePlans(const std::vector<PlanChoice>& plans, const PruneModel& model, int count) {
  std::vector<PlanChoice> fit;
  PrunedPlans out;
  for (const PlanChoice& p : plans)
    (p.metrics.peakLive <= model.peakLiveBudget || p.label == "plain" ? fit : out.over).push_back(p);
  std::sort(fit.begin(), fit.end(), [](const PlanChoice& a, const PlanChoice& b) {
    return std::tie(a.metrics.recomputeCost, a.metrics.peakLive) < std::tie(b.metrics.recomputeCost, b.metrics.peakLive);
  });
  if (fit.size() <= 1 && !out.over.empty()) {  // nothing checkpointed fits: the least peak_live
    std::vector<PlanChoice> over = out.over;
    std::sort(over.begin(), over.end(),
              [](const PlanChoice& a, const PlanChoice& b) { return a.metrics.peakLive < b.metrics.peakLive; });
    fit.push_back(over.front());
  }
  out.within = fit.size();
  for (size_t i = 0; i < fit.size() && out.timed.size() < static_cast<size_t>(count) + 1; ++i)
    out.timed.push_back(fit[i].label);
  return out;
}

BenchRuns benchRuns(const std::function<RunResult(uint64_t seed)>& run, int repeats, uint64_t seed) {
  using Clock = std::chrono::steady_clock;
  BenchRuns b;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    b.last = run(seed);
    b.seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  if (b.seconds.empty()) return b;
  b.median = median(b.seconds);
  const auto [lo, hi] = std::minmax_element(b.seconds.begin(), b.seconds.end());
  b.spread = b.median > 0 ? (*hi - *lo) / b.median : 0;
  return b;
}

BitsCheck checkBits(const RunResult& candidate, const RunResult& plain, KernelKind kind) {
  if (kind != KernelKind::Tangent) return bitsEqual(candidate, plain) ? BitsCheck::SamePlain : BitsCheck::Differ;
  if (candidate.markets.size() != plain.markets.size()) return BitsCheck::Differ;
  for (size_t m = 0; m < plain.markets.size(); ++m)
    if (!bitsEqual(candidate.markets[m].value, plain.markets[m].value) ||
        !bitsEqual(candidate.markets[m].valueStderr, plain.markets[m].valueStderr))
      return BitsCheck::Differ;
  return BitsCheck::SameValue;
}

namespace {

// The compiler's static instruction count per market a dispatch prices (-1 where it says none):
// a market loop's code runs once per market, copies run once for them all.
int64_t instructionsPerMarket(const TuneCandidate& c, int markets) {
  if (c.stats.instructions < 0) return std::numeric_limits<int64_t>::max();
  return c.config.markets == MarketCode::Loop ? c.stats.instructions : c.stats.instructions / std::max(markets, 1);
}

bool timedWithBits(const TuneCandidate& c) {
  return c.timed() && (c.bits == BitsCheck::SamePlain || c.bits == BitsCheck::SameValue);
}

// 0: timed with the bits; 1: timed, bits differ; 2: compiled; 3: the rest.
int rankClass(const TuneCandidate& c) {
  if (timedWithBits(c)) return 0;
  if (c.timed()) return 1;
  return c.status == CandidateStatus::Compiled ? 2 : 3;
}

}  // namespace

bool beats(const TuneCandidate& a, const TuneCandidate& b, bool compileOnly, int markets) {
  if (compileOnly) {
    if (a.status != CandidateStatus::Compiled) return false;
    if (b.status != CandidateStatus::Compiled) return true;
    auto proxy = [markets](const TuneCandidate& c) {
      return std::tuple{std::max<int64_t>(c.stats.spillStoreBytes, 0), std::max<int64_t>(c.stats.spillBytes, 0),
                        instructionsPerMarket(c, markets), c.stats.registers};
    };
    return proxy(a) < proxy(b);
  }
  if (!timedWithBits(a)) return false;
  if (!timedWithBits(b)) return true;
  const double margin = std::max({0.01, a.spread, b.spread});
  return a.median < b.median * (1 - margin);
}

std::vector<size_t> rankOrder(const std::vector<TuneCandidate>& candidates, bool compileOnly, int markets) {
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const TuneCandidate &x = candidates[a], &y = candidates[b];
    if (rankClass(x) != rankClass(y)) return rankClass(x) < rankClass(y);
    if (rankClass(x) <= 1) return x.median < y.median;
    if (rankClass(x) == 2) return beats(x, y, compileOnly, markets);
    return false;
  });
  return order;
}

int winnerOf(const std::vector<TuneCandidate>& ranked, bool compileOnly) {
  if (ranked.empty()) return -1;
  const int k = rankClass(ranked[0]);
  return k == 0 || (k == 2 && compileOnly) ? 0 : -1;
}

std::optional<std::string> storeVerdict(double gain, double noise, bool storeWithinNoise, const std::string& detail) {
  if (gain > std::max(0.01, noise) || storeWithinNoise) return std::nullopt;
  return "not stored: the winner's gain is within the noise of its own run (" + detail + ")";
}

}  // namespace tapelab
