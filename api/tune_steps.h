// The tuner's steps (api/tune.h), each a free function testable alone, as Triton's autotuner is
// configs -> prune(perf model) -> bench -> cache:
//   1. candidates: the plans (candidatePlans) and, per field, the configurations (fieldVariants);
//   2. prune: each engine's own model of what cannot be fast (pruneModelFor, prunePlans);
//   3. bench: a kernel's timed runs, their median and spread, its bits against its plain kernel
//      (benchRuns, checkBits);
//   4. rank and store: the order of the candidates (beats, rankOrder, winnerOf) and whether the
//      winner is kept (storeVerdict).
// tune() (api/tune.cpp) runs them; the engine, the budget and the progress lines stay there.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/tune.h"

namespace tapelab {

// ---- 1. candidates

struct PlanChoice {
  std::string label;  // "plain", "window 16", "two-level 8x4" (planForLabel reads it back)
  PlanMetrics metrics;
};

// A plan's label: "plain" or "<strategy> <segments>" (two-level: "<segments>x<inner>").
std::string labelOf(const std::string& strategy, const Plan& plan);
// The tangent kernel's label among the plans the tuner times (no plan: vector forward mode).
inline constexpr const char* kTangentLabel = "tangent";

// "plain", and where `checkpointed` (the engine has register kernels and the job computes Greeks) each
// strategy at each segment count below the tape's size, a plan whose cuts another already has once.
// A strategy with no plan here (budget out of reach) is skipped; an unknown name throws.
std::vector<PlanChoice> candidatePlans(const Tape& tape, const std::vector<std::string>& strategies,
                                       const std::vector<int>& segments, int markets, bool checkpointed);

// Whether the search varies `field` on `engine`: it applies there, is not math (the job fixes it) nor
// one the caller's --config fixed, and has two or more search values.
bool searchesField(const ConfigField& field, const std::string& engine, const std::vector<std::string>& fixed);

// `best` with `field` set to `value`: a candidate of the field's step; none where that is `best` itself
// or builds the same kernel (engine/config.h fieldActs: a requirement of the field unmet, prefill_ahead
// without prefilled draws; or a kernel it does not act on, `kernel`: market_order at one market, layout on
// a plain kernel). The search asks it for each of the field's search values in turn, against the best so far.
std::optional<KernelConfig> fieldVariant(const ConfigField& field, const KernelConfig& best, const std::string& value,
                                         const KernelShape& kernel = {});

// ---- 2. prune

// What an engine's model knows of a plan before it runs: a peak_live past `peakLiveBudget` spills.
struct PruneModel {
  int32_t peakLiveBudget = INT32_MAX;  // INT32_MAX: no plan is pruned
  std::string says;                    // for the progress line: why this budget, or why none
  bool prunes() const { return peakLiveBudget != INT32_MAX; }
};

// cuda and hip: the calibrated sm_90 register budget (planner/strategies.h registerBudget), their
// kernels' values living in registers. Every other engine: none (see pruneModelFor in tune_steps.cpp).
PruneModel pruneModelFor(const std::string& engine, const EngineCaps& caps, int markets);

struct PrunedPlans {
  std::vector<std::string> timed;  // at most `count` + 1 labels, the least weighted recompute first
  size_t within = 0;               // the plans within the budget (plain always is), and the fallback below
  std::vector<PlanChoice> over;    // past the budget: reported as pruned
};
// Sorts the plans within the model's budget (plain always is) by (recompute cost, peak_live) and keeps
// `count` + 1 of them; when no checkpointed plan fits, the one of least peak_live is timed too.
PrunedPlans prunePlans(const std::vector<PlanChoice>& plans, const PruneModel& model, int count);

// ---- 3. bench

struct BenchRuns {
  std::vector<double> seconds;  // each timed run
  double median = 0, spread = 0;
  RunResult last;
};
// `repeats` runs of `run(seed)`, each timed by the steady clock, their median and relative spread.
BenchRuns benchRuns(const std::function<RunResult(uint64_t seed)>& run, int repeats, uint64_t seed);

// A candidate's bits against its plain kernel's under the same bit-changing fields.
// kind Tangent: the values only (a tangent kernel promises the plain kernel's value bits).
BitsCheck checkBits(const RunResult& candidate, const RunResult& plain, KernelKind kind = KernelKind::Register);

// ---- 4. rank and store

// Whether candidate a beats b: faster beyond the larger of their spreads (and 1%), with the bits;
// compile-only: fewer spill stores, then fewer local bytes, then fewer instructions per market (the
// static count over the markets one pass of the code serves: a market loop's body serves them all),
// then fewer registers.
bool beats(const TuneCandidate& a, const TuneCandidate& b, bool compileOnly, int markets);

// Indices into `candidates`, best first: timed with the plain kernel's bits by speed, then timed ones
// that differ, then compiled ones by the compiler's statistics, then the rest in the order tried.
std::vector<size_t> rankOrder(const std::vector<TuneCandidate>& candidates, bool compileOnly, int markets);
// The winner of ranked candidates: the first, if timed with the bits (or, compile-only, compiled); -1: none.
int winnerOf(const std::vector<TuneCandidate>& ranked, bool compileOnly);

// Whether a winner that gained `gain` over the defaults, against `noise`, is stored: nullopt when it
// is, else the reason ("not stored: ..."). `detail` names the confirmation runs.
std::optional<std::string> storeVerdict(double gain, double noise, bool storeWithinNoise, const std::string& detail);

}  // namespace tapelab
