// tapelab tune: for one job (a tape on an engine, M markets per dispatch, a precision and a math
// contract), search plans x kernel configurations for the fastest, check that each candidate gives
// the bits of its own plain kernel, and keep the winner in the tuning cache (api/tuning.h), which
// later runs with --checkpoint auto use.
//
// The search, in the spirit of Halide's autoschedulers and Triton's autotune but over checkpoint
// plans too, and with the same bits promised for every candidate:
//   1. the engine's defaults with the default plan (what a run asking nothing gets): the baseline;
//   2. plans: the plain kernel and each strategy at each segment count, pruned by the engine's model
//      (api/tune_steps.h pruneModelFor): on cuda and hip, plans whose peak_live x markets exceeds the
//      calibrated register budget (planner/strategies.h registerBudget) go; of the rest the `plans`
//      with the least weighted recompute are timed, under the baseline's configuration;
//   3. fields: each field that applies (not math, which the job fixes, nor one the caller fixed
//      with --config), each of its search values (ConfigField::search) in turn, with the best plan
//      so far; a value is kept when its median beats the best by more than the spread measured;
//   4. the plans again under the best configuration, while the budget lasts;
//   5. before storing: the winner and the defaults timed again, interleaved (7 runs each); the winner is
//      stored only if its gain exceeds the noise of those runs (the wider relative range of the two).
// A candidate is timed after a warm-up (util/warmup.h): `repeats` runs of `paths` paths, their
// median. An engine that can only compile here (cuda without a driver) ranks candidates by what the
// compiler reports instead (spill stores, spill bytes, registers) and writes nothing to the cache:
// its shortlist is timed where the GPU is (--shortlist). Each step is a function of its own
// (api/tune_steps.h: candidates, prune, bench, rank and store).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "api/knobs.h"
#include "api/tuning.h"
#include "planner/metrics.h"

namespace tapelab {

struct TuneOptions {
  int markets = 1;
  uint64_t paths = 0;        // per timed run; 0: 1,000,000 on a GPU, 100,000 elsewhere
  uint64_t seed = 42;
  std::vector<double> inputs;  // the job's input values (a spot ladder over markets where there is a
                               // "spot"); empty: the tape's defaults
  double budgetSeconds = 300;  // the search stops starting candidates past it (the first always runs)
  int repeats = 3;
  std::vector<std::string> strategies;  // empty: window, marginal, auto, budget, two-level
  std::vector<int> segments;            // empty: 8, 12, 16, 24, 32
  int plans = 4;                        // plans timed after the model's pruning
  // Instead of a search, exactly these candidates: "PLAN | CONFIG" lines (shortlistLine), '#' comments.
  std::vector<std::string> shortlist;
  unsigned jobs = 0;  // a shortlist's kernels compiled this many at once; 0: one per hardware thread
  bool store = true;  // keep the winner in the tuning cache, if it beats the defaults beyond the noise of
                      // interleaved runs of the two (TunedWinner::margin, ::noise)
  bool storeWithinNoise = false;  // keep it even when it does not (or when the defaults won)
  bool compileOnly = false;  // rank by the compiler's statistics even where the engine could run
  std::function<void(const std::string&)> progress;  // one line per step of the search
};

// Where a candidate got to. toString gives its word; TuneCandidate::statusText adds the detail.
enum class CandidateStatus {
  NotTried,  // the budget ran out before it started ("not tried: budget")
  Pruned,    // the engine's model says it cannot be fast ("pruned: peak_live 90 > 64")
  Failed,    // its compile or run threw ("failed: ...")
  Compiled,  // compile-only: compiled, ranked by the compiler's statistics
  Timed,     // timed, its bits checked
};
const char* toString(CandidateStatus s);

// A timed candidate's bits against its own plain kernel's.
enum class BitsCheck {
  Unchecked,  // "-": not timed
  SamePlain,  // "==plain"
  SameValue,  // "==value": a tangent kernel, its values the plain kernel's bits (its Greeks are summed in another order)
  Differ,     // "DIFFER": a bug, reported, never a winner
};
const char* toString(BitsCheck b);

struct TuneCandidate {
  std::string plan;  // "plain", "window 16", "two-level 8x4", "auto 23"
  KernelKind kind = KernelKind::Plain;
  Plan cuts;
  PlanMetrics metrics;
  KernelConfig config;
  std::string step;  // what the search was trying: "defaults", "plans", "field lanes", "shortlist", ...
  KernelStats stats;
  std::vector<double> seconds;  // each timed run
  double median = 0;            // seconds
  double mpathsPerSecond = 0;   // markets x paths / median, in millions
  double spread = 0;            // (slowest - fastest) / median of the timed runs
  BitsCheck bits = BitsCheck::Unchecked;
  CandidateStatus status = CandidateStatus::NotTried;
  std::string why;  // the status's detail: the error, the budget passed, "budget"
  bool timed() const { return status == CandidateStatus::Timed; }
  // "timed", "compiled", "failed: ...", "pruned: ...", "not tried: budget"
  std::string statusText() const { return why.empty() ? toString(status) : std::string(toString(status)) + ": " + why; }
};

struct TuneResult {
  TuningKey key;
  std::vector<TuneCandidate> candidates;  // ranked: timed by speed, then compiled by the proxy, then the rest
  int winner = -1;                        // into candidates; -1 when nothing was timed
  int defaults = -1;                      // the baseline
  double seconds = 0;
  bool budgetSpent = false;
  bool compileOnly = false;
  uint64_t paths = 0;
  std::string stored;  // the cache entry written, or why none was
  bool storeFailed = false;  // a winner meant to be kept could not be written (not: within the noise, --no-store)
};

// Runs the search for `tape` on config.engine (its precision, settings, --config text: fixed fields;
// a plan given in config, --plan FILE or as data, is kept: the configuration alone is searched).
// Throws std::invalid_argument for bad options, EngineUnavailable when the engine can neither run
// nor compile here.
TuneResult tune(const Tape& tape, const RunConfig& config, const TuneOptions& options);

// "window 16 | lanes=1,sums=registers,...": one shortlist line; and back (throws naming the line).
std::string shortlistLine(const TuneCandidate& c, const std::string& engine);
std::pair<std::string, std::string> parseShortlistLine(const std::string& line);
// The plan a label names ("plain", "<strategy> <segments>", "two-level <segments>x<inner>").
Plan planForLabel(const Tape& tape, const std::string& label, int markets);

// The tuning key of a run: its engine, the device the engine reports, the tape's structure, markets,
// precision, math contract and whether it computes Greeks.
TuningKey tuningKey(const Tape& tape, const std::string& engine, const EngineCaps& caps, int markets,
                    Precision precision, MathContract math, bool greeks);

}  // namespace tapelab
