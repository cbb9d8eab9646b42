// tapelab compare: the main job. For one tape (default: the 252-step Asian,
// 300,000 paths, value + 5 Greeks, fp32), on every usable engine: the plain
// kernel and a checkpointed one, each timed the article's way (warm up on
// another seed, then a ladder of spot values, one call per value, the median
// of several ladders), and the same ladder fused into multi-market dispatches.
// Reports whether checkpointed and fused results are the same bits as plain.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <optional>

#include "api/ranks.h"
#include "api/registry.h"
#include "api/tune.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/compare_parts.h"
#include "cli/peer_file.h"
#include "engine/tangent_chunks.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "tape/tangent.h"
#include "util/stats.h"
#include "util/warmup.h"

namespace tapelab::cli {
namespace {

// The tangent kind promises the plain kernel's value bits only (its Greeks sum in another order).
bool sameValues(const Result& a, const Result& b) {
  if (a.run.markets.size() != b.run.markets.size()) return false;
  for (size_t m = 0; m < a.run.markets.size(); ++m)
    if (!bitsEqual(a.run.markets[m].value, b.run.markets[m].value) ||
        !bitsEqual(a.run.markets[m].valueStderr, b.run.markets[m].valueStderr))
      return false;
  return true;
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void progress(const std::string& s) {
  if (ranks::rank() == 0) std::fprintf(stderr, "compare: %s\n", s.c_str());
}

// --engines, else every usable GPU engine and cpu-jit (else the reference); split over ranks, every
// rank must compare the same engines in the same order.
std::vector<std::string> enginesOf(const Flags& f, const RunConfig& cfg, bool split) {
  std::vector<std::string> engines;
  if (auto e = f.text("engines")) {
    engines = splitList(*e);
    if (engines.empty()) throw UsageError("--engines: no engine named in '" + *e + "' (tapelab engines lists them)");
    for (const auto& name : engines) {
      const EngineCaps c = engineCaps(findEngine(name), cfg.engineSettings);
      if (!c.usable) throwUnusable(name, c);
    }
  } else {
    for (const char* name : {"cuda", "vulkan", "opencl", "hip", "cpu-jit"})
      if (engineCaps(findEngine(name), cfg.engineSettings).usable) engines.push_back(name);
    if (engines.empty()) engines.push_back("reference");
  }
  if (split) {
    std::string list;
    for (const auto& e : engines) list += e + ",";
    ranks::agreeOn("the usable engines (" + list + ")", list);
  }
  return engines;
}

// --strategy A,B,...: each checkpointed kernel once per strategy (a row each, every row's bits against
// the engine's plain row); one name, or none, as before. Unknown names are refused before anything runs.
std::vector<std::optional<std::string>> strategyRunsOf(const Flags& f, RunConfig& cfg) {
  std::vector<std::optional<std::string>> strategyRuns{cfg.strategy};
  if (cfg.strategy && cfg.strategy->find(',') != std::string::npos) {
    strategyRuns.clear();
    try {
      for (const std::string& name : parseNameList(*cfg.strategy, f.label("strategy"))) {
        findStrategy(name);
        strategyRuns.push_back(name);
      }
    } catch (const std::invalid_argument& e) {
      throw UsageError(f.label("strategy") + ": " + e.what());
    }
    cfg.strategy = strategyRuns.front();  // the job is not a tuned one (a strategy was asked for)
  }
  return strategyRuns;
}

std::vector<KernelKind> kindsOf(const Flags& f) {
  std::vector<KernelKind> kinds;
  for (const auto& k : splitList(*f.textOrDefault("kernels"))) {
    try {
      const KernelKind kind = parseKernelKind(k, "--kernels");
      if (kind != KernelKind::Plain) kinds.push_back(kind);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  return kinds;
}

// compare's default kernels (register,tangent) on a wide tape: a tangent kernel of every input whose
// derivative terms pass --max-nodes' bound (api/montecarlo.cpp says why it is bounded) is left out, and
// said, rather than failing the run; named with --kernels it fails with the bound's message. With
// --config tangent_chunk=N, or auto's chunk on a GPU engine (planner/tangent_chunk.h), the bound is each
// chunk's (engine/tangent_chunks.h).
void dropOversizedTangent(CompareJob& job) {
  const auto at = std::find(job.kinds.begin(), job.kinds.end(), KernelKind::Tangent);
  if (at == job.kinds.end() || !job.cfg.wrt.empty()) return;
  // Left out where it is over the bound on every engine of the job (each engine's chunk: the user's, or auto's
  // on a GPU engine at one market); an engine where it fits runs it.
  std::optional<OversizedChunk> over;
  for (const std::string& engine : job.engines) {
    KernelOptions o;
    o.kind = KernelKind::Tangent;
    o.greeks = job.cfg.greeks;
    o.config = defaultConfig(engine, false, 1, "tangent");
    o.config.tangentChunk = job.cfg.userConfig.values.tangentChunk;
    RunConfig c = job.cfg;
    c.engine = engine;
    if (const std::optional<AutoTangentChunk> a = autoTangentChunkOf(job.tape, c, o)) o.config.tangentChunk = a->chunk;
    over = oversizedTangentChunk(job.tape, o, job.cfg.maxNodes);
    if (!over) return;
  }
  if (!over) return;
  job.kinds.erase(at);
  std::fprintf(stderr, "compare: the tangent kernel is left out: by %zu inputs it carries %.3g derivative terms, "
               "over --max-nodes %llu (--config tangent_chunk=N splits it into kernels of N inputs)\n",
               over->inputs, static_cast<double>(over->terms), static_cast<unsigned long long>(job.cfg.maxNodes));
}

// The ladder: --ladder NAME=V1,V2,... (those values), --ladder NAME (--points values 1% apart around
// the input's value; 0.01 apart where it is 0), else over "spot", else over the first input.
void ladderOf(const Flags& f, int points, CompareJob& job) {
  const Tape& tape = job.tape;
  const std::vector<double> base = inputsFrom(f, tape);
  if (tape.numInputs() == 0) throw UsageError("compare ladders over an input; this tape has none");
  const std::string ladderText = f.text("ladder").value_or(tape.inputIndex("spot") >= 0 ? "spot" : tape.inputNames[0]);
  if (ladderText.find('=') != std::string::npos) {
    if (f.given("points")) throw UsageError("--points: --ladder NAME=V1,V2,... gives the points itself");
    job.ladder = ladderFrom(f, tape, base, &job.ladderName);
  } else {
    job.ladderName = ladderText;
    const int k = tape.inputIndex(job.ladderName);
    if (k < 0) {
      std::string known;
      for (const std::string& n : tape.inputNames) known += (known.empty() ? "" : ", ") + n;
      throw UsageError("--ladder: no input named '" + job.ladderName + "' (inputs: " + known + ")");
    }
    for (int i = 0; i < points; ++i) {
      std::vector<double> s = base;
      const double step = 0.01 * (i - points / 2);
      s[k] = base[k] != 0 ? base[k] * (1.0 + step) : step;
      job.ladder.push_back(s);
    }
  }
  job.spot = tape.inputIndex(job.ladderName);
  job.ladderPoints = static_cast<int>(job.ladder.size());
  job.center = static_cast<size_t>(job.ladderPoints / 2);
}

CompareJob readJob(const Flags& f, int* warmupMs) {
  CompareJob job;
  job.tape = tapeFrom(f);
  job.cfg = runConfigFrom(f);
  job.paths = f.paths("paths");
  job.seed = f.count("seed");
  const int points = f.integer("points");
  job.ladders = f.integer("ladders");
  job.fusedMarkets = f.integer("markets");
  const auto warmupText = f.text("warmup-ms");  // unset: TimingWarmup decides (util/warmup.h)
  *warmupMs = warmupText ? f.integerIn("warmup-ms", 0, 600000) : -1;  // -1: unset, never given
  if (job.paths < 2) throw UsageError(f.label("paths") + ": need at least 2");
  if (points < 1 || points > 64) throw UsageError("--points: expected 1..64");
  if (job.ladders < 1 || job.ladders > 100) throw UsageError("--ladders: expected 1..100");
  if (job.fusedMarkets < 1 || job.fusedMarkets > 8) throw UsageError("--markets: expected 1..8");
  // A bad plan file is bad input, not a failed row: read it once before any kernel.
  if (!job.cfg.planFile.empty()) readPlanFile(job.cfg.planFile, job.tape);
  // So is a bad peer file.
  job.peerPath = f.text("peer");
  job.peers = job.peerPath ? readPeerFile(*job.peerPath) : std::vector<PeerRow>{};
  job.steps = productSteps(f);
  job.split = ranks::size() > 1;
  job.engines = enginesOf(f, job.cfg, job.split);
  job.strategyRuns = strategyRunsOf(f, job.cfg);
  job.kinds = kindsOf(f);
  if (!f.given("kernels")) dropOversizedTangent(job);
  ladderOf(f, points, job);
  return job;
}

// Each row's configuration is its own job's (the tuning cache's winner for that market count,
// tapelab tune, where there is one and nothing asks otherwise, else the engine's defaults for it;
// the user's --config over either), but the fields that change bits are the fused job's on every
// row, so that every row's bits compare with the engine's plain single-market row.
struct JobConfig {
  KernelConfig config;
  std::string tuned;
  std::optional<Plan> plan;
  std::string provenance;
  bool defaults = true;  // the engine's defaults (no tuned winner): each kernel kind's row takes its kind's own
  std::optional<KernelKind> tunedKind;  // a tuned winner's kind: a row of the other family (tangent, or plain and
                                        // checkpointed) takes its kind's defaults, as `--kernel KIND` would
};
// Whether a `kind` row of job `j` is of the other family than its tuned winner (api/montecarlo.h
// tunedWinnerServes): it then runs its kind's defaults, not the winner's configuration.
bool otherFamily(const JobConfig& j, KernelKind kind) { return j.tunedKind && !tunedWinnerServes(*j.tunedKind, kind); }
// The one resolution of a job's configuration (api/montecarlo.h).
JobConfig jobConfig(const CompareJob& job, const RunConfig& base, const EngineCaps& caps, const std::string& engine, int m) {
  const Tape& tape = job.tape;
  const ConfigResolution r = resolveJobConfig(tape, base, caps, *base.precision, m);
  JobConfig j{r.config, "", std::nullopt, "", true, std::nullopt};
  Provenance from = r.from;
  try {
    if (r.winner && r.winner->kind != KernelKind::Plain && r.winner->kind != KernelKind::Tangent)
      j.plan = parsePlanFile(r.winner->plan, tape, r.winner->path);
    if (r.winner) {
      j.tuned = r.winner->path;
      j.tunedKind = r.winner->kind;
    }
  } catch (const std::exception& e) {  // an entry this version cannot read: the defaults
    progress(engine + ": tuning cache entry " + r.winner->path + " not used: " + e.what());
    j.config = resolveConfig(base, caps, *base.precision, m);
    j.tuned.clear();
    j.tunedKind.reset();
    from.config = Origin::Default;
  }
  j.defaults = from.config == Origin::Default;
  const std::string text = from.text();
  j.provenance = text.substr(0, text.find(' '));  // the rows name their plans and kinds
  if (!r.entryProblem.empty()) progress(engine + ": tuning cache entry not used: " + r.entryProblem);
  return j;
}

// One engine's two jobs (one market, and fused) and what it prints of them: their configurations and
// the kind `--kernel auto` picks for each.
struct EngineJobs {
  int fused = 1;
  JobConfig fusedJob, oneJob;
  // Each kernel kind's configuration at each market count where it differs from the job's (api/montecarlo.h
  // kindRowConfig: a kind's own defaults where the job's are the defaults).
  std::map<std::pair<int, KernelKind>, KernelConfig> kindConfigs;
  const JobConfig& of(int markets) const { return markets == 1 ? oneJob : fusedJob; }
  const KernelConfig& configOf(int markets, std::optional<KernelKind> kind) const {
    const auto it = kind ? kindConfigs.find({markets, *kind}) : kindConfigs.end();
    return it == kindConfigs.end() ? of(markets).config : it->second;
  }
  bool tunedPlan() const { return fusedJob.plan || oneJob.plan; }
};
EngineJobs engineJobs(const CompareJob& job, const RunConfig& base, const EngineCaps& caps, const std::string& engine,
                      CompareOut& out) {
  EngineJobs e;
  e.fused = std::min(job.fusedMarkets, caps.maxMarkets);
  e.fusedJob = jobConfig(job, base, caps, engine, e.fused);
  e.oneJob = e.fused == 1 ? e.fusedJob : jobConfig(job, base, caps, engine, 1);
  for (const ConfigField& f : configFields())
    if (!keepsBits(f)) f.set(e.oneJob.config, f.get(e.fusedJob.config), f.name);
  for (const int m : e.fused == 1 ? std::vector<int>{1} : std::vector<int>{1, e.fused})
    for (const KernelKind kind : caps.kinds) {
      const JobConfig& j = e.of(m);
      KernelConfig c = kindRowConfig(j.config, j.defaults || otherFamily(j, kind), base, caps, *base.precision, m, kind,
                                     e.fusedJob.config);
      if (kind == KernelKind::Tangent) {  // auto's chunk where nothing names one (planner/tangent_chunk.h)
        KernelOptions t;
        t.kind = kind;
        t.greeks = base.greeks;
        t.config = c;
        for (const std::string& name : job.cfg.wrt)  // the --wrt subset the tangent row differentiates by
          if (const int k = job.tape.inputIndex(name); k >= 0) t.wrt.push_back(k);
        std::sort(t.wrt.begin(), t.wrt.end());
        RunConfig named = base;
        named.engine = engine;
        if (const std::optional<AutoTangentChunk> a =
                autoTangentChunkOf(job.tape, named, t, m, sharedInputsOf(job.ladder, static_cast<size_t>(m))))
          c.tangentChunk = a->chunk;
      }
      if (!(c == j.config)) e.kindConfigs[{m, kind}] = c;
    }
  out.engineConfigs.push_back({engine, configText(e.fusedJob.config, engine), e.fusedJob.tuned, e.fusedJob.provenance});
  for (const auto& [key, c] : e.kindConfigs)  // a kind whose defaults differ says so, as the one-market job does
    out.engineConfigs.push_back({engine + " (" + toString(key.second) + (e.fused == 1 ? "" : key.first == 1 ? ", one market" : ", fused") + ")",
                                 configText(c, engine), "",
                                 otherFamily(e.of(key.first), key.second) ? "config=default" : e.of(key.first).provenance});
  for (const int m : e.fused == 1 ? std::vector<int>{1} : std::vector<int>{1, e.fused}) {
    RunConfig probe = base;  // nothing named: the kind --kernel auto picks for this job
    probe.useTuned = false;  // decided above, as for every row
    probe.engine = engine;
    probe.kernel.reset();
    probe.checkpoint = Checkpoint::automatic();
    probe.strategy.reset();
    probe.planFile.clear();
    probe.userConfig = wholeConfig(e.of(m).config, engine, job.cfg.userConfig.what);
    const std::vector<std::string>& named = job.cfg.userConfig.fields;
    if (std::find(named.begin(), named.end(), "tangent_chunk") == named.end()) {  // auto's chunk, as a run gets it
      std::vector<std::string>& fields = probe.userConfig.fields;
      fields.erase(std::remove(fields.begin(), fields.end(), "tangent_chunk"), fields.end());
    }
    std::string why;
    try {
      resolveKernel(job.tape, probe, caps, m, nullptr, nullptr, &why, sharedInputsOf(job.ladder, static_cast<size_t>(m)));
    } catch (const std::exception&) {  // the rows say what is wrong with the job
    }
    if (!why.empty()) out.autoKinds.push_back(engine + " x" + std::to_string(m) + ": " + why.substr(why.find(' ') + 1));
  }
  if (e.fused != 1 && (configText(e.oneJob.config, engine) != configText(e.fusedJob.config, engine) || !e.oneJob.tuned.empty()))
    out.engineConfigs.push_back({engine + " (one market)", configText(e.oneJob.config, engine), e.oneJob.tuned, e.oneJob.provenance});
  return e;
}

// The rows of one engine: plain, then each kind it has (register and scratch once per strategy).
std::vector<std::pair<std::string, RunConfig>> variantsOf(const CompareJob& job, RunConfig& base, const EngineCaps& caps,
                                                          const std::string& engine, bool tunedPlan) {
  std::vector<std::pair<std::string, RunConfig>> variants;
  RunConfig plain = base;
  plain.engine = engine;
  plain.strategy.reset();  // no cuts: the strategy names the checkpointed rows' plans
  plain.checkpoint = Checkpoint::off();
  plain.kernel = KernelKind::Plain;
  plain.planFile.clear();  // a plan file cuts the checkpointed kernels only
  plain.wrt.clear();       // --wrt picks the tangent kernel's inputs only
  base.wrt.clear();
  variants.push_back({"plain", plain});
  for (KernelKind kind : job.kinds) {
    if (std::find(caps.kinds.begin(), caps.kinds.end(), kind) == caps.kinds.end()) {
      progress(engine + ": no " + toString(kind) + " kernel, skipped");
      continue;
    }
    if ((kind == KernelKind::Register || kind == KernelKind::Scratch) && job.tape.size() < 2) {
      progress(engine + ": a tape of one node has nothing to checkpoint: no " + toString(kind) + " row");
      continue;
    }
    for (const std::optional<std::string>& strategy : job.strategyRuns) {
      RunConfig c = base;
      c.engine = engine;
      c.kernel = kind;
      c.strategy = strategy;
      if (kind == KernelKind::Tangent) {  // no reverse sweep: no plan, no cuts
        c.strategy.reset();
        c.checkpoint = Checkpoint::off();
        c.planFile.clear();
        c.wrt = job.cfg.wrt;
      } else if (kind == KernelKind::Register && tunedPlan) {
        // the tuned winners' cuts: set per job in kernelJobs
      } else if (c.planFile.empty() && c.checkpoint.mode != Checkpoint::Mode::Segments)  // a plan file sets the cuts
        // Without a strategy, auto's cuts as run takes them (a named checkpointed kernel checkpoints a short tape
        // too): scratch's uniform segment length, a rolled register kernel's segment count (planner/strategies.h)
        c.checkpoint = !strategy ? Checkpoint::automatic() : Checkpoint::count(std::min(job.cfg.segments, job.tape.size()));
      variants.push_back({toString(kind), c});
      if (kind == KernelKind::Tangent) break;  // one tangent row: it has no plan
    }
  }
  return variants;
}

struct KernelJob {
  std::string label;
  RunConfig config;
  int markets;
};
// Each variant at one market and fused, under its job's configuration (and tuned cuts).
std::vector<KernelJob> kernelJobs(const CompareJob& job, const std::vector<std::pair<std::string, RunConfig>>& variants,
                                  const EngineJobs& e, const std::string& engine) {
  std::vector<KernelJob> jobs;
  for (const auto& [label, c] : variants)
    for (int m : job.fusedMarkets > 1 ? std::vector<int>{1, e.fused} : std::vector<int>{1}) {
      const JobConfig& jc = e.of(m);
      RunConfig rc = c;
      rc.userConfig = wholeConfig(e.configOf(m, c.kernel), engine, job.cfg.userConfig.what);
      if (c.kernel == KernelKind::Register && c.planFile.empty() && !job.cfg.plan && e.tunedPlan()) {
        if (jc.plan) rc.plan = jc.plan;  // this job's tuned cuts
        else rc.checkpoint = c.strategy ? Checkpoint::count(std::min(job.cfg.segments, job.tape.size())) : Checkpoint::automatic();
      }
      jobs.push_back({label, rc, m});
    }
  return jobs;
}

// One row: its kernel (built ahead) timed the article's way. A kernel that fails (a driver that cannot
// build an 8-market shader, say) costs its row, not the comparison: the error is printed in the row.
CompareRow timeRow(const CompareJob& job, const KernelJob& kj, std::future<Pricer>& built, const EngineCaps& caps,
            const std::string& engine, const EngineJobs& e, TimingWarmup& warmup) {
  CompareRow row;
  row.engine = engine;
  row.kernel = kj.label;
  row.markets = kj.markets;
  try {
    Pricer pricer = built.get();
    // The fused rows' reverse sweep one market at a time, where the engine has a market order.
    if (caps.marketOrder && sequentialMarkets(pricer.options())) row.kernel += "/seq";
    const Plan& p = pricer.options().plan;
    row.segments = p.segments();
    row.plan = pricer.options().kind == KernelKind::Tangent ? "none (tangent)"
               : p.segments() <= 1                          ? "plain"
                                                            : p.strategy + " " + std::to_string(p.segments());
    if (pricer.options().kind == KernelKind::Register && e.of(kj.markets).plan) row.plan += " (tuned)";
    row.stats = pricer.stats();
    auto runLadder = [&](uint64_t s) {
      if (kj.markets > 1) return pricer.runMarkets(job.ladder, job.paths, s);
      Result all;
      for (const auto& set : job.ladder) {
        Result one = pricer.runMarkets({set}, job.paths, s);
        if (all.run.markets.empty()) all = one;
        else all.run.markets.push_back(one.run.markets[0]);
      }
      return all;
    };
    // Warm-up on another seed: first-use costs stay out of the numbers, and a GPU's clocks climb.
    warmup.run(caps.gpu, [&] { runLadder(job.seed + 1); });
    for (int l = 0; l < job.ladders; ++l) {
      progress(engine + " " + kj.label + ": ladder " + std::to_string(l + 1) + "/" + std::to_string(job.ladders));
      const auto t0 = std::chrono::steady_clock::now();
      row.result = runLadder(job.seed);
      row.ladderMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    warmup.busyUntilNow();
    row.medianMs = median(row.ladderMs);
    warnNonFinite(row.result);  // a row whose estimates are not finite says so (cli.h)
  } catch (const std::exception& ex) {
    row.error = ex.what();
    row.ladderMs.clear();
    progress(engine + " " + kj.label + " (" + marketsLabel(kj.markets) + "): " + row.error);
  }
  return row;
}

// Identity against the engine's plain single-market ladder, its first row.
void markIdentity(std::vector<CompareRow>& rows, size_t plainRow) {
  const CompareRow& plainRowRef = rows[plainRow];
  for (size_t r = plainRow; r < rows.size(); ++r) {
    if (!rows[r].error.empty() || (rows[r].kernel == "plain" && rows[r].markets == 1) || !plainRowRef.error.empty())
      rows[r].identical = "-";
    else if (rows[r].kernel == toString(KernelKind::Tangent))
      rows[r].identical = sameValues(rows[r].result, plainRowRef.result) ? "value" : "NO";
    else rows[r].identical = bitsEqual(rows[r].result.run, plainRowRef.result.run) ? "yes" : "NO";
  }
}

void compareEngine(const CompareJob& job, const std::string& engine, TimingWarmup& warmup, CompareOut& out) {
  const EngineCaps caps = engineCaps(findEngine(engine), job.cfg.engineSettings);
  RunConfig base = job.cfg;
  base.engine = engine;
  if (!base.precision) base.precision = caps.defaultPrecision;  // as run and price: fp32 on GPUs, fp64 on CPUs
  const EngineJobs e = engineJobs(job, base, caps, engine, out);
  base.useTuned = false;  // decided here, for every row
  const auto variants = variantsOf(job, base, caps, engine, e.tunedPlan());
  const size_t plainRow = out.rows.size();  // the engine's plain single-market row comes first
  // Compile every kernel of this engine first, in parallel where the engine's
  // compiler allows it (NVRTC and OpenCL builds take seconds each), then time
  // them one at a time so no compile overlaps a timed run.
  const std::vector<KernelJob> jobs = kernelJobs(job, variants, e, engine);
  progress(engine + ": compiling " + std::to_string(jobs.size()) + " kernels");
  std::vector<std::future<Pricer>> built;
  const Tape& tape = job.tape;
  const auto& ladder = job.ladder;
  for (const KernelJob& j : jobs)
    // Split, each build agrees with the other ranks: one at a time, in order, on this thread.
    built.push_back(std::async(job.split ? std::launch::deferred : std::launch::async,
                               [&tape, &ladder, j] { return MonteCarlo::of(tape).config(j.config).markets(j.markets).sets(ladder).build(); }));
  for (size_t ji = 0; ji < jobs.size(); ++ji) out.rows.push_back(timeRow(job, jobs[ji], built[ji], caps, engine, e, warmup));
  markIdentity(out.rows, plainRow);
}

// 1 when a row failed or differs from plain, naming the first.
int exitStatus(const std::vector<CompareRow>& rows) {
  for (const CompareRow& r : rows)
    if (!r.error.empty()) {
      std::fprintf(stderr, "tapelab: %s %s (%s) failed: %s\n", r.engine.c_str(), r.kernel.c_str(),
                   marketsLabel(r.markets).c_str(), r.error.c_str());
      return kExitFailure;
    }
  for (const CompareRow& r : rows)
    if (r.identical == "NO") {
      std::fprintf(stderr, "tapelab: %s %s (%s) differs from plain\n", r.engine.c_str(), r.kernel.c_str(),
                   marketsLabel(r.markets).c_str());
      return kExitFailure;
    }
  return kExitOk;
}

int compare(const Flags& f) {
  int warmupMs = -1;
  const CompareJob job = readJob(f, &warmupMs);
  TimingWarmup warmup(warmupMs);
  CompareOut out;
  for (const std::string& engine : job.engines) compareEngine(job, engine, warmup, out);
  if (f.given("json")) printJson(job, out);
  else printTable(job, out);
  return exitStatus(out.rows);
}

}  // namespace

Runner setupCompare(CLI::App& app) {
  app.footer("Runs the plain kernel and the checkpointed kernels on each engine, timing a\n"
             "ladder of one input's values (--ladder; the article's: spot) the article's way (one kernel,\n"
             "one call per point, warm-up\n"
             "on another seed (--warmup-ms), median of --ladders ladders), then the same ladder fused into\n"
             "dispatches of --markets markets (a last dispatch with fewer points is padded with\n"
             "copies of its last point, so 7 points at 4 markets cost two full dispatches).\n"
             "Prints ms per ladder, Mpath/s (points x paths / median ladder time), the value and two\n"
             "Greeks (the ladder input's, and vol's or the next input's) with 17 significant digits, kernel\n"
             "statistics, each row's plan, each engine's configuration (the tuning cache's winner, tapelab\n"
             "tune, where there is one; --untuned: the defaults), and whether every checkpointed and\n"
             "fused result is bit-identical to plain. Each engine runs in its default precision, as run\n"
             "does (--fp32, --fp64: every engine). Progress goes to stderr.\n"
             "--peer FILE adds a table of each row's Mpath/s over a peer's (JAX, a hand-written\n"
             "kernel: the CSV of experiments/drivers/peers.py or experiments/peers/jax_peers.py),\n"
             "matched on pass, paths, ladder points (--points), fused or one market per call, and\n"
             "steps where the file gives them; a row with no match shows '-'.");
  auto f = std::make_shared<Flags>(app);
  addTapeFlags(*f, TapeSource::FileOrProduct, "asian");
  f->value("engines", "A,B,...", "engines to compare (default: every usable GPU engine and cpu-jit)");
  f->value("kernels", "K,...", "kernels after plain: register, scratch, tangent (where the engine has it)", "register,tangent");
  f->value("points", "N", "ladder points: the input's value * (1 + 0.01 (i - N/2))", "7");
  f->value("ladder", "NAME[=V1,V2,...]", "the input the ladder steps (default spot where the tape has one, else its "
                                         "first input); with values, those points");
  f->value("ladders", "N", "timed ladders; the median is reported", "3");
  f->value("warmup-ms", "MS", "warm-up ladders (another seed) until this many ms have passed "
                              "(default: " + std::to_string(TimingWarmup::kGpuMs) + " before the first kernel on a real GPU, whose clocks "
                              "must climb, and after an idle gap; else one ladder)");
  f->knob("paths", "N", "300000", "per call");
  f->knob("seed", "S", "42");
  addSetFlag(*f);
  f->value("markets", "M", "markets per fused dispatch", "4");
  f->value("peer", "FILE", "also print each row's ratio to the matching rows of this peer CSV "
                           "(experiments/drivers/peers.py's or experiments/peers/jax_peers.py's)");
  // compare runs a checkpointed kernel beside plain on every engine, whatever the tape's length: its
  // --checkpoint says how many segments (auto: run's count for a named kernel), not whether to cut.
  f->knob("checkpoint", "off|auto|SEGMENTS", RunConfig().checkpoint.text(),
          "the checkpointed rows' segments; auto: " + std::to_string(RunConfig().segments) +
              " on every engine and tape, or what run takes for a named kernel (a GPU register kernel that rolls "
              "its segments at one market: about 64 nodes a segment; scratch: uniform's length; run and price "
              "cut only long tapes, and not on cpu-jit)");
  addRunConfigFlags(*f, {"kernel", "checkpoint"});  // --wrt applies to the tangent rows
  f->option("fp32")->description("single precision on every engine (default: each engine's, as run uses)");
  f->flag("json", "print one JSON object with every row");
  return [f] { return compare(*f); };
}

}  // namespace tapelab::cli
