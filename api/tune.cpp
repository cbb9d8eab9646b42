#include "api/tune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <set>
#include <atomic>
#include <mutex>
#include <thread>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "api/montecarlo.h"
#include "api/registry.h"
#include "api/tune_steps.h"
#include "engine/tangent_chunks.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "util/stats.h"
#include "util/threads.h"
#include "util/warmup.h"

namespace tapelab {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The fields of a config that change bits, as text: kernels sharing it must agree bit for bit.
std::string bitsKey(const KernelConfig& c) {
  std::string key;
  for (const ConfigField& f : configFields())
    if (!keepsBits(f)) key += std::string(f.name) + "=" + f.get(c) + ",";
  return key;
}

// The job's input sets: the tape's defaults, with a spot ladder 1% apart where there is a "spot".
std::vector<std::vector<double>> jobInputs(const Tape& tape, const std::vector<double>& base, int markets) {
  std::vector<std::vector<double>> sets(markets, base);
  const int spot = tape.inputIndex("spot");
  if (spot >= 0)
    for (int m = 0; m < markets; ++m) sets[m][spot] = base[spot] * (1.0 + 0.01 * (m - markets / 2));
  return sets;
}

// The kind a plan label runs: the tangent kernel, the plain kernel (one segment) or the register kernel.
KernelKind kindOf(const std::string& label, const Plan& cuts) {
  return label == kTangentLabel ? KernelKind::Tangent : cuts.segments() > 1 ? KernelKind::Register : KernelKind::Plain;
}

struct Search {
  Search(const Tape& t, const RunConfig& r, const TuneOptions& o, EngineCaps c)
      : tape(t), run(r), opt(o), caps(std::move(c)) {}
  const Tape& tape;
  const RunConfig& run;
  const TuneOptions& opt;
  const EngineCaps caps;
  std::unique_ptr<Engine> engine;
  Precision precision = Precision::F32;
  bool compileOnly = false;
  uint64_t paths = 0;
  std::vector<std::vector<double>> inputs;
  std::vector<std::string> fixed;  // fields the caller's --config set: not searched
  KernelOptions base;              // the baseline: what a run asking nothing gets
  // auto's chunk, worked out once a search for each of what it depends on in a candidate's configuration (its
  // time loop rolled or not, the markets' shared inputs read once or not)
  mutable std::map<std::pair<bool, bool>, std::optional<AutoTangentChunk>> tangentChunks;
  bool fixedPlan = false;          // a plan given (--plan FILE, or as data): kept, the configuration alone searched
  std::string fixedLabel;          // the baseline's plan label
  std::map<std::string, RunResult> plainBits;  // bitsKey -> the plain kernel's result
  std::set<std::string> plainCompiled;         // compile-only: bitsKeys whose plain kernel is compiled
  // Kernels compiled ahead, several at once (a shortlist): by candidate id, and plain ones by bitsKey.
  std::map<std::string, std::shared_ptr<Kernel>> ahead, aheadPlain;
  std::mutex aheadMutex;

  std::string idOf(const TuneCandidate& c) const { return c.plan + " | " + configText(c.config, run.engine); }

  // Compiles `cs` and their plain kernels on up to `jobs` threads (NVRTC and the drivers' compilers
  // take seconds to a minute a kernel; the timing after it stays one kernel at a time). A failure is
  // left for evaluate() to meet again and report.
  void compileAhead(const std::vector<TuneCandidate>& cs, unsigned jobs) {
    std::vector<std::pair<std::string, KernelOptions>> work;
    std::set<std::string> plains;
    for (const TuneCandidate& c : cs) {
      work.push_back({idOf(c), optionsFor(c)});
      if (plains.insert(bitsKey(c.config)).second) {
        plainCompiled.insert(bitsKey(c.config));
        TuneCandidate p;
        p.kind = KernelKind::Plain;
        p.cuts = plainPlan(tape);
        p.config = c.config;
        work.push_back({"plain:" + bitsKey(c.config), optionsFor(p)});
      }
    }
    say("compiling " + std::to_string(work.size()) + " kernels (candidates and their plain kernels), " +
        std::to_string(jobs) + " at once");
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next.fetch_add(1)) < work.size();) {
        try {
          std::shared_ptr<Kernel> k = compileKernel(*engine, tape, work[i].second, 1);  // already side by side
          std::lock_guard<std::mutex> lock(aheadMutex);
          if (work[i].first.rfind("plain:", 0) == 0) aheadPlain[work[i].first.substr(6)] = std::move(k);
          else ahead[work[i].first] = std::move(k);
        } catch (const std::exception&) {
        }
      }
    };
    runWorkers(static_cast<unsigned>(std::min<size_t>(jobs, work.size())), worker);  // util/threads.h
    say("compiled in " + std::to_string(static_cast<int>(since(start))) + " s");
  }
  std::map<std::string, size_t> tried;         // plan label + config text -> candidate
  std::vector<TuneCandidate> candidates;
  TimingWarmup warmup;
  Clock::time_point start = Clock::now();
  bool budgetSpent = false;

  void say(const std::string& s) const {
    if (opt.progress) opt.progress(s);
  }
  // A candidate starts only if the longest one so far would still end within the budget (a cold
  // compile can take minutes on a CPU-served device: the budget is a bound on the search, not on
  // when its last candidate may start). The first candidate always runs: a shortlist's compile phase
  // that outlasts the budget (NVIDIA's OpenCL and Vulkan compilers took 256 s and more for twelve
  // 7-market kernels on the H200, 2026-12-02b) still gives a timed winner, not none.
  double longest = 0;
  size_t started = 0;
  bool overBudget() {
    return budgetSpent = budgetSpent || (started > 0 && since(start) + longest > opt.budgetSeconds);
  }

  KernelOptions optionsFor(const TuneCandidate& c) const {
    KernelOptions o;
    o.precision = precision;
    o.greeks = run.greeks;
    o.kind = c.kind;
    o.plan = c.cuts;
    o.markets = opt.markets;
    o.sharedInputs = sharedInputsOf(inputs, static_cast<size_t>(opt.markets));
    o.config = c.config;
    o.dispatch = run.dispatch;
    return o;
  }

  // The plain kernel's result under `config`'s bit-changing fields (compiled and run once).
  const RunResult& plainResult(const KernelConfig& config) {
    const std::string key = bitsKey(config);
    auto it = plainBits.find(key);
    if (it != plainBits.end()) return it->second;
    std::shared_ptr<Kernel> kernel;
    if (auto a = aheadPlain.find(key); a != aheadPlain.end()) kernel = a->second;
    if (!kernel) {
      TuneCandidate p;
      p.kind = KernelKind::Plain;
      p.cuts = plainPlan(tape);
      p.config = config;
      kernel = compileKernel(*engine, tape, optionsFor(p));
    }
    return plainBits.emplace(key, kernel->run(inputs, paths, opt.seed)).first->second;
  }

  // Compiles, times and checks one candidate (once per plan and config); returns its index.
  size_t evaluate(TuneCandidate c) {
    const std::string id = idOf(c);
    if (auto it = tried.find(id); it != tried.end()) return it->second;
    const size_t index = candidates.size();
    tried[id] = index;
    if (overBudget()) {
      c.status = CandidateStatus::NotTried;
      c.why = "budget";
      candidates.push_back(c);
      return index;
    }
    const auto began = Clock::now();
    ++started;
    try {
      std::shared_ptr<Kernel> kernel;
      if (auto a = ahead.find(id); a != ahead.end()) kernel = a->second;
      if (!kernel) kernel = compileKernel(*engine, tape, optionsFor(c));
      c.stats = kernel->stats();
      if (compileOnly) {
        c.status = CandidateStatus::Compiled;
        // The plain kernel its bits will be checked against where it runs: compiled now, so that a
        // machine given this cache (scripts/gpu-cache-pack.sh) spends its time timing.
        if (plainCompiled.insert(bitsKey(c.config)).second) {
          TuneCandidate p;
          p.kind = KernelKind::Plain;
          p.cuts = plainPlan(tape);
          p.config = c.config;
          compileKernel(*engine, tape, optionsFor(p));
        }
      } else {
        warmup.run(caps.gpu, [&] { kernel->run(inputs, paths, opt.seed + 1); });
        const BenchRuns b = benchRuns([&](uint64_t seed) { return kernel->run(inputs, paths, seed); }, opt.repeats, opt.seed);
        warmup.busyUntilNow();
        c.seconds = b.seconds;
        c.median = b.median;
        c.spread = b.spread;
        c.mpathsPerSecond = c.median > 0 ? double(opt.markets) * double(paths) / c.median / 1e6 : 0;
        c.bits = checkBits(b.last, plainResult(c.config), c.kind);
        c.status = CandidateStatus::Timed;
      }
    } catch (const EngineUnavailable&) {
      throw;
    } catch (const std::exception& e) {
      c.status = CandidateStatus::Failed;
      c.why = e.what();
    }
    std::string line = "[" + std::to_string(index + 1) + "] " + c.step + ": " + c.plan + ", " + configText(c.config, run.engine);
    if (c.timed()) {
      char buf[96];
      std::snprintf(buf, sizeof buf, ": %.4g Mpath/s (spread %.1f%%), %s", c.mpathsPerSecond, 100 * c.spread, toString(c.bits));
      line += buf;
    } else {
      line += ": " + c.statusText();
    }
    if (c.stats.registers >= 0) line += ", " + std::to_string(c.stats.registers) + " registers";
    if (c.stats.spillBytes > 0) line += ", " + std::to_string(c.stats.spillBytes) + " B local";
    if (c.stats.instructions >= 0) line += ", " + std::to_string(c.stats.instructions) + " instructions";
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, " [%.0f s]", since(start));
    say(line + elapsed);
    longest = std::max(longest, since(began));
    candidates.push_back(std::move(c));
    return index;
  }

  // The winner against the baseline before either is stored: `runs` rounds of both, interleaved
  // (A B, B A, ...) after a warm-up, so that a load change hits both. gain: the baseline's median over
  // the winner's, less 1; noise: the wider of the two relative ranges ((slowest - fastest) / median).
  struct Confirmation {
    double gain = 0, noise = 0;
    int runs = 0;
  };
  Confirmation confirm(const TuneCandidate& w, const TuneCandidate& d, int runs) {
    std::shared_ptr<Kernel> kw = compileKernel(*engine, tape, optionsFor(w)), kd = compileKernel(*engine, tape, optionsFor(d));
    warmup.run(caps.gpu, [&] {
      kw->run(inputs, paths, opt.seed + 1);
      kd->run(inputs, paths, opt.seed + 1);
    });
    std::vector<double> tw, td;
    for (int r = 0; r < runs; ++r)
      for (int k = 0; k < 2; ++k) {
        const bool winnerFirst = (r % 2 == 0) == (k == 0);
        const auto t0 = Clock::now();
        (winnerFirst ? kw : kd)->run(inputs, paths, opt.seed);
        (winnerFirst ? tw : td).push_back(since(t0));
      }
    warmup.busyUntilNow();
    auto range = [&](const std::vector<double>& v) {
      return (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) / median(v);
    };
    return {median(td) / median(tw) - 1, std::max(range(tw), range(td)), runs};
  }

  bool beats(const TuneCandidate& a, const TuneCandidate& b) const { return tapelab::beats(a, b, compileOnly, opt.markets); }

  // A plan label's cuts: the plan given for its label, else the label's strategy's.
  Plan cutsOf(const std::string& label) const { return fixedPlan && label == fixedLabel ? base.plan : planForLabel(tape, label, opt.markets); }
  // The configuration a plan label runs where `from` is at hand: `from` itself for a plan of `fromKind`, else (or
  // with no kind) the defaults of the kind the label runs (what --kernel KIND would run: cuda's min_blocks differ
  // by kind) with from's fields that change bits.
  KernelConfig configFor(const std::string& label, const KernelConfig& from, std::optional<KernelKind> fromKind) const {
    const KernelKind kind = kindOf(label, cutsOf(label));
    return fromKind == kind ? from : kindRowConfig(from, true, run, caps, precision, opt.markets, kind, from);
  }

  // The candidate of a plan label under `c`, for the search's step `step`.
  TuneCandidate candidate(const std::string& label, const KernelConfig& c, const std::string& step) const {
    TuneCandidate t;
    t.cuts = cutsOf(label);
    t.plan = label;
    t.kind = kindOf(label, t.cuts);
    t.metrics = planMetrics(tape, t.cuts);
    t.config = c;
    t.step = step;
    if (t.kind == KernelKind::Tangent && t.config.tangentChunk == 0) {  // auto's chunk where nothing names one
      const std::pair<bool, bool> key{t.config.loopsRolled, t.config.sharedInputs};
      auto it = tangentChunks.find(key);
      if (it == tangentChunks.end()) {
        const KernelOptions o = optionsFor(t);
        it = tangentChunks.emplace(key, autoTangentChunkOf(tape, run, o, opt.markets, o.sharedInputs)).first;
      }
      if (it->second) t.config.tangentChunk = it->second->chunk;
    }
    return t;
  }
};

// What a run asking nothing gets: the engine's defaults with the default plan (or the plan given).
TuneCandidate baselineOf(const Tape& tape, const KernelOptions& base) {
  TuneCandidate d;
  d.cuts = base.plan;
  d.kind = base.kind;
  d.plan = base.kind == KernelKind::Plain     ? "plain"
           : base.kind == KernelKind::Tangent ? kTangentLabel
                                              : labelOf(base.plan.strategy, base.plan);
  d.metrics = planMetrics(tape, d.cuts);
  d.config = base.config;
  d.step = "defaults";
  return d;
}

constexpr int kConfirmRuns = 7;  // interleaved runs of the winner and of the defaults before storing

}  // namespace

TuningKey tuningKey(const Tape& tape, const std::string& engine, const EngineCaps& caps, int markets,
                    Precision precision, MathContract math, bool greeks) {
  TuningKey k;
  k.greeks = greeks;
  k.engine = engine;
  k.device = caps.reason;
  k.tape = structureHash(tape);
  k.markets = markets;
  k.precision = precision;
  k.math = math;
  return k;
}

Plan planForLabel(const Tape& tape, const std::string& label, int markets) {
  if (label == "plain" || label == kTangentLabel) return plainPlan(tape);
  const size_t space = label.rfind(' ');
  if (space == std::string::npos) throw std::invalid_argument("plan '" + label + "': expected plain or STRATEGY SEGMENTS");
  PlanOptions po;
  po.markets = markets;
  std::string count = label.substr(space + 1);
  if (const size_t x = count.find('x'); x != std::string::npos) {
    po.innerSegments = parsePositiveInt(count.substr(x + 1), "plan '" + label + "'");
    count = count.substr(0, x);
  }
  po.segments = parsePositiveInt(count, "plan '" + label + "'");
  return makeStrategyPlan(label.substr(0, space), tape, po);
}

std::string shortlistLine(const TuneCandidate& c, const std::string& engine) {
  return c.plan + " | " + configText(c.config, engine);
}

std::pair<std::string, std::string> parseShortlistLine(const std::string& line) {
  const size_t bar = line.find('|');
  if (bar == std::string::npos) throw std::invalid_argument("shortlist line '" + line + "': expected PLAN | CONFIG");
  return {trim(line.substr(0, bar)), trim(line.substr(bar + 1))};
}

namespace {

void checkOptions(const TuneOptions& opt) {
  if (opt.markets < 1 || opt.markets > 8) throw std::invalid_argument("--markets: expected 1..8");
  if (opt.repeats < 1 || opt.repeats > 100) throw std::invalid_argument("--repeats: expected 1..100");
  if (!(opt.budgetSeconds > 0)) throw std::invalid_argument("--budget-seconds: expected a positive number");
}

// The engine, the job's inputs and the baseline: what a run asking nothing gets (the engine's defaults,
// the default plan; never a previous winner), with the caller's fixed fields.
void startSearch(Search& s, const EngineEntry& entry) {
  const RunConfig& config = s.run;
  const TuneOptions& opt = s.opt;
  if (!s.caps.usable && !s.caps.compileOnly) throw EngineUnavailable(config.engine + " is not usable here: " + s.caps.reason);
  if (opt.markets > s.caps.maxMarkets)
    throw std::invalid_argument("--markets: " + config.engine + " takes at most " + std::to_string(s.caps.maxMarkets));
  s.compileOnly = !s.caps.usable || opt.compileOnly;
  s.engine = entry.make(config.engineSettings);
  s.paths = opt.paths ? opt.paths : s.caps.gpu ? 1'000'000 : 100'000;
  if (!opt.inputs.empty() && opt.inputs.size() != s.tape.inputDefaults.size())
    throw std::invalid_argument("tune: " + std::to_string(opt.inputs.size()) + " input values for a tape of " +
                                std::to_string(s.tape.inputDefaults.size()) + " inputs");
  s.inputs = jobInputs(s.tape, opt.inputs.empty() ? s.tape.inputDefaults : opt.inputs, opt.markets);
  RunConfig plainRun = config;
  plainRun.useTuned = false;
  s.base = resolveKernel(s.tape, plainRun, s.caps, opt.markets);
  s.precision = s.base.precision;
  s.fixed = config.userConfig.fields;  // resolveKernel above checked they apply to the engine
  s.fixedPlan = !config.planFile.empty() || config.plan.has_value();
  s.fixedLabel = baselineOf(s.tape, s.base).plan;
  s.say(std::string(s.compileOnly ? "compile-only (" + s.caps.reason + "): ranking by the compiler's statistics; " : "") +
        config.engine + ", " + std::to_string(opt.markets) + " market(s), " + toString(s.precision) + ", math=" +
        toString(s.base.config.math) + ", " + std::to_string(s.paths) + " paths a run, budget " +
        std::to_string(static_cast<int>(opt.budgetSeconds)) + " s");
}

// Instead of a search, exactly the caller's candidates, compiled ahead several at once.
void evaluateShortlist(Search& s) {
  std::vector<TuneCandidate> listed;
  for (const std::string& raw : s.opt.shortlist) {
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const auto [label, text] = parseShortlistLine(line);
    KernelConfig c = s.configFor(label, s.base.config, std::nullopt);  // over the defaults of the line's kind
    applyConfigText(c, text, s.run.engine, "shortlist '" + line + "'");
    if (c.math != s.base.config.math)
      throw std::invalid_argument("shortlist '" + line + "': the job's math contract is " +
                                  toString(s.base.config.math) + " (--config math=... sets it)");
    for (const std::string& name : s.fixed)  // the caller's fields stay fixed
      if (findConfigField(name)->get(c) != findConfigField(name)->get(s.base.config))
        throw std::invalid_argument("shortlist '" + line + "': sets " + name + ", which --config fixes");
    listed.push_back(s.candidate(label, c, "shortlist"));
  }
  s.compileAhead(listed, s.opt.jobs ? s.opt.jobs : std::max(1u, std::thread::hardware_concurrency()));
  for (TuneCandidate& c : listed) s.evaluate(std::move(c));
}

// Steps 1 and 2 for the plans: the candidates, pruned by the engine's model; the pruned ones are
// listed as such. Returns the labels to time.
std::vector<std::string> prunedPlanOrder(Search& s) {
  const TuneOptions& opt = s.opt;
  std::vector<std::string> strategies = opt.strategies;
  if (strategies.empty()) strategies = {"window", "marginal", "auto", "budget", "two-level"};
  std::vector<int> counts = opt.segments;
  if (counts.empty()) counts = {8, 12, 16, 24, 32};
  const bool registers = std::find(s.caps.kinds.begin(), s.caps.kinds.end(), KernelKind::Register) != s.caps.kinds.end();
  std::vector<PlanChoice> plans;
  if (s.fixedPlan) for (const std::string& name : strategies) findStrategy(name);  // a typo is an error, not a skip
  else plans = candidatePlans(s.tape, strategies, counts, opt.markets, registers && s.run.greeks);
  const PruneModel model = pruneModelFor(s.run.engine, s.caps, opt.markets);
  PrunedPlans pruned = prunePlans(plans, model, opt.plans);
  // The kind with the plans: the tangent kernel where the engine has one and the job computes Greeks.
  const bool tangent = !s.fixedPlan && s.run.greeks &&
                       std::find(s.caps.kinds.begin(), s.caps.kinds.end(), KernelKind::Tangent) != s.caps.kinds.end();
  if (tangent) pruned.timed.insert(pruned.timed.begin() + (!pruned.timed.empty() && pruned.timed[0] == "plain"), kTangentLabel);
  const std::string timing = "; timing " + std::to_string(pruned.timed.size()) + " (the least recompute first, plain" +
                             (tangent ? " and the tangent kernel)" : ")");
  if (s.fixedPlan) s.say("the plan given (" + s.fixedLabel + "): the configuration alone is searched");
  else if (!model.prunes()) s.say(std::to_string(plans.size()) + " plans (" + model.says + ")" + timing);
  else s.say(std::to_string(plans.size()) + " plans, " + std::to_string(pruned.within) + " within peak_live " +
             std::to_string(model.peakLiveBudget) + " (" + model.says + ")" + timing);
  for (const PlanChoice& p : pruned.over) {
    TuneCandidate t;
    t.plan = p.label;
    t.metrics = p.metrics;
    t.step = "plans";
    t.status = CandidateStatus::Pruned;
    t.why = "peak_live " + std::to_string(p.metrics.peakLive) + " > " + std::to_string(model.peakLiveBudget);
    s.candidates.push_back(t);
  }
  return pruned.timed;
}

// Step 3 over the plans in order, under the best configuration so far; returns the best.
size_t timePlans(Search& s, const std::vector<std::string>& order, size_t best, const std::string& step) {
  for (const std::string& label : order) {
    // A plan of another kind than the best so far runs under that kind's defaults, with the best's bit fields.
    const TuneCandidate& b = s.candidates[best];
    const size_t i = s.evaluate(s.candidate(label, s.configFor(label, b.config, b.kind), step));
    if (s.beats(s.candidates[i], s.candidates[best])) best = i;
  }
  return best;
}

// The search: the baseline; the plans under its configuration; each field, one at a time, with the
// best plan so far; the plans again under the best configuration. Returns the baseline's index.
int search(Search& s) {
  const int defaults = static_cast<int>(s.evaluate(baselineOf(s.tape, s.base)));
  const std::vector<std::string> planOrder = prunedPlanOrder(s);
  size_t best = timePlans(s, planOrder, static_cast<size_t>(defaults), "plans");
  for (const ConfigField& f : configFields()) {
    if (!searchesField(f, s.run.engine, s.fixed)) continue;
    for (const std::string& v : searchValues(f)) {  // each value against the best so far, as it changes
      const TuneCandidate& b = s.candidates[best];
      const std::optional<KernelConfig> c = fieldVariant(f, b.config, v, {toString(b.kind), s.opt.markets, s.run.greeks});
      if (!c) continue;
      const size_t i = s.evaluate(s.candidate(b.plan, *c, std::string("field ") + f.name));
      if (s.beats(s.candidates[i], s.candidates[best])) best = i;
    }
  }
  timePlans(s, planOrder, best, "plans again");
  return defaults;
}

// Step 4, rank: the candidates in order into `result`, the baseline's and the winner's indices with them.
void rankInto(const Search& s, TuneResult& result) {
  const std::vector<size_t> order = rankOrder(s.candidates, s.compileOnly, s.opt.markets);
  const int defaultsBefore = result.defaults;  // its index before the ranking (compared, never reassigned mid-loop)
  for (size_t r = 0; r < order.size(); ++r) {
    result.candidates.push_back(s.candidates[order[r]]);
    if (static_cast<int>(order[r]) == defaultsBefore) result.defaults = static_cast<int>(r);
  }
  result.winner = winnerOf(result.candidates, s.compileOnly);
  result.seconds = since(s.start);
  result.budgetSpent = s.budgetSpent;
}

// Whether the winner is stored: only when it beats the baseline by more than the noise of a run of the
// two, interleaved, in this search (a gain inside the noise is no gain: 2026-12-06, a 3.99x "winner"
// timed against a defaults run of 96.8% spread showed none in five alternating runs after it).
// Returns why not ("" to store it); `confirmed` gets the confirmation's numbers.
std::string confirmWinner(Search& s, const TuneResult& result, Search::Confirmation& confirmed) {
  const TuneCandidate& w = result.candidates[result.winner];
  const TuneCandidate d = baselineOf(s.tape, s.base);
  if (w.plan == d.plan && configText(w.config, s.run.engine) == configText(d.config, s.run.engine))
    return s.opt.storeWithinNoise ? "" : "not stored: the defaults won (nothing to keep)";
  confirmed = s.confirm(w, d, kConfirmRuns);
  char why[200];
  std::snprintf(why, sizeof why, "%+.1f%% against the defaults, noise %.1f%% (%d interleaved runs each)",
                100 * confirmed.gain, 100 * confirmed.noise, confirmed.runs);
  s.say(std::string("confirming the winner (") + w.plan + "): " + why);
  return storeVerdict(confirmed.gain, confirmed.noise, s.opt.storeWithinNoise, why).value_or("");
}

// Step 4, store: the winner into the tuning cache, or why it is not there.
void storeWinner(Search& s, TuneResult& result) {
  std::string notBeyondNoise;
  Search::Confirmation confirmed;
  const bool candidate = result.winner >= 0 && !s.compileOnly && s.opt.store;
  if (candidate) notBeyondNoise = confirmWinner(s, result, confirmed);
  if (!candidate || !notBeyondNoise.empty()) {
    result.stored = s.compileOnly ? "not stored: compile-only (time the shortlist where the engine runs)"
                    : result.winner < 0 ? "not stored: no candidate was timed with its plain kernel's bits"
                    : !notBeyondNoise.empty() ? notBeyondNoise
                                              : "not stored (--no-store)";
    return;
  }
  const TuneCandidate& w = result.candidates[result.winner];
  TunedWinner entry;
  entry.margin = confirmed.gain;
  entry.noise = confirmed.noise;
  entry.config = configText(w.config, s.run.engine);
  entry.kind = w.kind;
  entry.planLabel = w.plan;
  entry.plan = w.kind == KernelKind::Plain || w.kind == KernelKind::Tangent ? "" : planFileText(s.tape, w.cuts);
  entry.mpathsPerSecond = w.mpathsPerSecond;
  entry.defaultsMpathsPerSecond = result.defaults >= 0 ? result.candidates[result.defaults].mpathsPerSecond : 0;
  entry.paths = s.paths;
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  entry.when = when;
  std::string why;
  result.storeFailed = !storeTuned(s.run.engineSettings.cacheDir, result.key, entry, &why);
  result.stored = result.storeFailed ? "not stored: " + why : entry.path;
}

}  // namespace

TuneResult tune(const Tape& tape, const RunConfig& config, const TuneOptions& opt) {
  checkOptions(opt);
  const EngineEntry& entry = findEngine(config.engine);
  Search s(tape, config, opt, engineCaps(entry, config.engineSettings));
  startSearch(s, entry);
  TuneResult result;
  result.key = tuningKey(tape, config.engine, s.caps, opt.markets, s.precision, s.base.config.math, config.greeks);
  result.compileOnly = s.compileOnly;
  result.paths = s.paths;
  if (!opt.shortlist.empty()) evaluateShortlist(s);
  else result.defaults = search(s);
  rankInto(s, result);
  storeWinner(s, result);
  return result;
}

}  // namespace tapelab
