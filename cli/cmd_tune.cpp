// tapelab tune: the fastest plan and kernel configuration for one job, searched and timed
// (api/tune.h), its bits checked against its own plain kernel, the winner kept in the tuning cache.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "api/registry.h"
#include "api/tune.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/files.h"

namespace tapelab::cli {
namespace {

// A shortlist is a few hundred configuration lines; 16 MiB is far past any real one.
constexpr uint64_t kMaxShortlistBytes = uint64_t{16} << 20;

std::vector<int> intList(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    try {
      out.push_back(parsePositiveInt(item, flag));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (out.empty()) throw UsageError(flag + ": empty list");
  return out;
}

// The fields of `c` that differ from the engine's defaults, or "defaults".
std::string configDiff(const KernelConfig& c, const KernelConfig& defaults, const std::string& engine) {
  std::string out;
  for (const ConfigField& f : configFields())
    if (fieldAppliesTo(f, engine) && f.get(c) != f.get(defaults))
      out += (out.empty() ? "" : ",") + std::string(f.name) + "=" + f.get(c);
  return out.empty() ? "defaults" : out;
}

// 0 when a winner was found and, where asked and beyond the noise, stored; 1 when nothing was timed with
// its plain kernel's bits, or when a winner meant to be kept could not be written to the tuning cache
// (later runs would not use it). A winner within the noise of its own run is not kept, and that is no failure.
int exitCode(const TuneResult& r, const TuneOptions& opt) {
  if (r.winner < 0) return kExitFailure;
  if (opt.store && !r.compileOnly && r.storeFailed) {
    std::fprintf(stderr, "tapelab: tune: the winner is %s (later runs of this job will not use it)\n", r.stored.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

// The search's options from the flags (the shortlist read, bounded).
TuneOptions tuneOptions(const Flags& f, const Tape& tape) {
  TuneOptions opt;
  opt.markets = f.integerIn("markets", 1, 8);
  opt.paths = f.given("paths") ? f.paths("paths") : 0;
  opt.seed = f.count("seed");
  opt.inputs = inputsFrom(f, tape);
  opt.repeats = f.positive("repeats");
  opt.plans = f.positive("plans");
  opt.store = !f.given("no-store");
  opt.storeWithinNoise = f.given("store-within-noise");
  opt.compileOnly = f.given("compile-only");
  if (f.given("jobs")) opt.jobs = static_cast<unsigned>(f.integerIn("jobs", 1, 256));
  {
    const std::string budget = *f.textOrDefault("budget-seconds");
    char* end = nullptr;
    opt.budgetSeconds = std::strtod(budget.c_str(), &end);
    if (budget.empty() || *end || !(opt.budgetSeconds > 0) || !std::isfinite(opt.budgetSeconds))
      throw UsageError("--budget-seconds: expected a positive number of seconds, got '" + budget + "'");
  }
  if (auto s = f.text("strategies")) {
    std::stringstream in(*s);
    for (std::string item; std::getline(in, item, ',');) opt.strategies.push_back(item);
  }
  if (auto s = f.text("segments")) opt.segments = intList(*s, "--segments");
  if (auto path = f.text("shortlist")) {
    std::string text;
    try {
      text = readInputText(*path, kMaxShortlistBytes);
    } catch (const InputError& e) {
      throw UsageError("--shortlist " + *path + ": " + e.what());
    }
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);) opt.shortlist.push_back(line);
  }
  return opt;
}

// --write-shortlist: the best candidates (timed or compiled), each with its compiler's statistics.
void writeShortlist(const Flags& f, const Tape& tape, const RunConfig& cfg, const TuneOptions& opt, const TuneResult& r,
                    const std::vector<std::string>& inputs) {
  const auto path = f.text("write-shortlist");
  const int n = f.positive("shortlist-size");
  std::string text = "# tapelab tune shortlist: " + tape.name + ", " + cfg.engine + ", " + std::to_string(opt.markets) +
                     " market(s), " + toString(r.key.precision) + ", math=" + toString(r.key.math) +
                     (r.compileOnly ? ", ranked by the compiler's statistics (spill stores, local bytes, instructions per market, registers)"
                                    : ", ranked by measured speed") +
                     "\n# PLAN | CONFIG; time it where the engine runs: tapelab tune ... --shortlist FILE\n";
  int written = 0;
  for (const TuneCandidate& c : r.candidates) {
    if (written >= n || (c.status != CandidateStatus::Compiled && !c.timed())) continue;
    char stats[200];
    std::snprintf(stats, sizeof stats, "# %d registers, %lld B local, %lld B spill stores, %lld instructions, peak_live %d\n",
                  c.stats.registers, static_cast<long long>(c.stats.spillBytes),
                  static_cast<long long>(c.stats.spillStoreBytes), static_cast<long long>(c.stats.instructions),
                  c.metrics.peakLive);
    text += stats + shortlistLine(c, cfg.engine) + "\n";
    ++written;
  }
  writeOutputFile(*path, text, inputs, "--write-shortlist");  // never the run's own inputs (util/files.h)
  std::fprintf(stderr, "tune: %d candidates written to %s\n", written, path->c_str());
}

void printJson(const Tape& tape, const RunConfig& cfg, const TuneResult& r) {
  std::vector<std::string> items;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const TuneCandidate& c = r.candidates[i];
    Json j;
    j.integer("rank", static_cast<int64_t>(i + 1)).str("plan", c.plan).str("kind", toString(c.kind))
        .integer("segments", c.cuts.segments()).integer("peak_live", c.metrics.peakLive)
        .number("recompute_cost", c.metrics.recomputeCost).str("config", configText(c.config, cfg.engine))
        .str("step", c.step).str("status", c.statusText()).str("bits", toString(c.bits))
        .number("mpaths_per_s", c.mpathsPerSecond).number("median_s", c.median).number("spread", c.spread)
        .integer("registers", c.stats.registers).integer("local_bytes", c.stats.spillBytes)
        .integer("spill_store_bytes", c.stats.spillStoreBytes).integer("instructions", c.stats.instructions);
    items.push_back(j.done());
  }
  Json out;
  out.str("engine", cfg.engine).str("device", r.key.device).str("tape", tape.name).integer("markets", r.key.markets)
      .str("precision", toString(r.key.precision)).str("math", toString(r.key.math))
      .integer("paths", static_cast<int64_t>(r.paths)).boolean("compile_only", r.compileOnly)
      .number("seconds", r.seconds).boolean("budget_spent", r.budgetSpent).integer("winner", r.winner + 1)
      .integer("defaults", r.defaults + 1).str("stored", r.stored).field("candidates", jsonArray(items));
  std::printf("%s\n", out.done().c_str());
}

void printTable(const Tape& tape, const RunConfig& cfg, const TuneOptions& opt, const EngineCaps& caps, const TuneResult& r) {
  const KernelConfig defaults = r.defaults >= 0 ? r.candidates[r.defaults].config : defaultConfig(cfg.engine, caps.cpuDevice);
  const double baseline = r.defaults >= 0 ? r.candidates[r.defaults].mpathsPerSecond : 0;
  std::printf("tune %s: %d nodes | engine %s (%s) | %d market(s), %s, math=%s, value%s | %llu paths a run, median of %d\n",
              tape.name.c_str(), tape.size(), cfg.engine.c_str(), r.key.device.c_str(), r.key.markets,
              toString(r.key.precision), toString(r.key.math), cfg.greeks ? " + Greeks" : " only",
              static_cast<unsigned long long>(r.paths), opt.repeats);
  if (caps.cpuDevice) std::printf("(a CPU-served device: its times say nothing about a GPU's)\n");
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const TuneCandidate& c = r.candidates[i];
    char mps[32] = "-", spread[32] = "-", ratio[32] = "-";
    if (c.timed()) {
      std::snprintf(mps, sizeof mps, "%.4g", c.mpathsPerSecond);
      std::snprintf(spread, sizeof spread, "%.1f%%", 100 * c.spread);
      if (baseline > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", c.mpathsPerSecond / baseline);
    }
    std::string status = c.timed() ? c.step : c.statusText();
    if (static_cast<int>(i) == r.winner) status += " (winner)";
    else if (static_cast<int>(i) == r.defaults) status += " (the defaults)";
    rows.push_back({std::to_string(i + 1), c.plan, std::to_string(c.metrics.peakLive), configDiff(c.config, defaults, cfg.engine),
                    mps, spread, ratio, c.stats.registers >= 0 ? std::to_string(c.stats.registers) : "-",
                    c.stats.spillBytes >= 0 ? std::to_string(c.stats.spillBytes) : "-",
                    c.stats.instructions >= 0 ? std::to_string(c.stats.instructions) : "-", toString(c.bits), status});
  }
  std::printf("%s", table({"rank", "plan", "peak_live", "config (vs defaults)", "Mpath/s", "spread", "vs defaults",
                           "regs", "local B", "instr", "bits", "step / status"},
                          rows)
                        .c_str());
  std::printf("defaults: %s\n", configText(defaults, cfg.engine).c_str());
  if (r.winner >= 0) {
    const TuneCandidate& w = r.candidates[r.winner];
    std::printf("winner: %s | %s", w.plan.c_str(), configText(w.config, cfg.engine).c_str());
    if (w.timed() && baseline > 0) std::printf(" (%.4g Mpath/s, %.2fx the defaults)", w.mpathsPerSecond, w.mpathsPerSecond / baseline);
    std::printf("\n");
  }
  std::printf("searched %zu candidates in %.0f s%s; %s\n", r.candidates.size(), r.seconds,
              r.budgetSpent ? " (the budget ran out: candidates not tried are listed)" : "", r.stored.c_str());
  if (r.stored.rfind("not stored", 0) != 0)
    std::printf("runs of this job with --checkpoint auto (the default) now use the winner (--untuned: the defaults)\n");
}

int tuneCommand(const Flags& f) {
  const Tape tape = tapeFrom(f);
  RunConfig cfg = runConfigFrom(f);
  if (cfg.engine == "auto") throw UsageError("--engine: tune one engine at a time (tapelab engines lists them)");
  TuneOptions opt = tuneOptions(f, tape);
  const bool json = f.given("json");
  opt.progress = [](const std::string& line) { std::fprintf(stderr, "tune: %s\n", line.c_str()); };
  // The shortlist written at the end never replaces an input of the run (the tape, --plan, --shortlist):
  // refused now, before the search, not after it.
  std::vector<std::string> inputs = f.all("file");
  for (const std::string& in : {cfg.planFile, f.text("shortlist").value_or("")})
    if (!in.empty()) inputs.push_back(in);
  if (auto path = f.text("write-shortlist")) checkOutputFile(*path, inputs, "--write-shortlist");

  const EngineCaps caps = engineCaps(findEngine(cfg.engine), cfg.engineSettings);
  if (f.given("forget")) {
    RunConfig probe = cfg;
    probe.useTuned = false;
    const KernelOptions o = resolveKernel(tape, probe, caps, opt.markets);
    const TuningKey key = tuningKey(tape, cfg.engine, caps, opt.markets, o.precision, o.config.math, cfg.greeks);
    std::printf("%s\n", forgetTuned(cfg.engineSettings.cacheDir, key) ? "tuning cache entry removed"
                                                                        : "no tuning cache entry for this job");
    return kExitOk;
  }

  const TuneResult r = tune(tape, cfg, opt);

  if (f.given("write-shortlist")) writeShortlist(f, tape, cfg, opt, r, inputs);
  if (json) printJson(tape, cfg, r);
  else printTable(tape, cfg, opt, caps, r);
  return exitCode(r, opt);
}

}  // namespace

Runner setupTune(CLI::App& app) {
  app.footer("Searches plans (strategies x segment counts; on cuda and hip pruned by the plan model's peak_live\n"
             "against the calibrated sm_90 register budget, elsewhere not) and the kernel kind (the tangent kernel\n"
             "beside them, where the engine has one and the job computes Greeks: PLAN 'tangent'; its values must\n"
             "be the plain kernel's bits, ==value) times kernel configurations (each\n"
             "field's search values, one at a time, from the engine's defaults) for one job: the tape on --engine\n"
             "with --markets input sets per dispatch, in its precision, at the math contract --config math=...\n"
             "asks (default: the engine's). Each candidate is timed after a warm-up (median of --repeats runs)\n"
             "and must give the bits of its own plain kernel. The winner and the defaults are then timed again,\n"
             "interleaved, 7 runs each: the winner goes to the tuning cache only if it beats the defaults by more\n"
             "than the noise of those runs (--store-within-noise: always). Later runs of the job that ask for no\n"
             "plan (tapelab run and price with their default checkpointing) use it and say so, with its margin,\n"
             "noise and date. An engine that can only compile here (cuda without a driver) ranks candidates\n"
             "by the compiler's statistics: --write-shortlist keeps the best for a machine where the engine\n"
             "runs (--shortlist). Fields given with --config stay fixed; with --plan FILE the plan does too,\n"
             "and the configuration alone is searched for it.");
  auto f = std::make_shared<Flags>(app);
  addTapeFlags(*f, TapeSource::FileOrProduct, "asian");
  f->knob("engine", "NAME", RunConfig().engine);
  f->value("markets", "M", "input sets per dispatch (1-8): a spot ladder 1% apart where the tape has 'spot'", "1");
  f->knob("paths", "N", "", "per timed run; default 1,000,000 on a GPU, 100,000 elsewhere");
  f->knob("seed", "S", "42");
  addSetFlag(*f);
  f->value("budget-seconds", "S", "start a candidate only if the longest so far would still end within S seconds (the first always runs, a shortlist's compile phase counts)", "300");
  f->value("repeats", "N", "timed runs per candidate (their median)", "3");
  f->value("strategies", "NAME,...", "strategies whose plans are tried", "window,marginal,auto,budget,two-level");
  f->value("segments", "N,...", "segment counts tried per strategy", "8,12,16,24,32");
  f->value("plans", "N", "checkpointed plans timed after the model's pruning (plain is always timed)", "4");
  f->flag("compile-only", "rank by the compiler's statistics even where the engine runs");
  f->value("shortlist", "FILE", "time exactly the candidates in FILE (PLAN | CONFIG lines) instead of searching");
  f->value("jobs", "N", "a shortlist's kernels compiled this many at once (default: one per hardware thread)");
  f->value("write-shortlist", "FILE", "write the best candidates as a shortlist");
  f->value("shortlist-size", "N", "candidates --write-shortlist keeps", "8");
  f->flag("no-store", "do not keep the winner in the tuning cache");
  f->flag("store-within-noise", "keep the winner even if it does not beat the defaults beyond the noise of its own run");
  f->flag("forget", "remove this job's tuning cache entry and stop");
  f->flag("json", "print the ranked candidates as one JSON object");
  addRunConfigFlags(*f, {"checkpoint", "ckpt-nodes", "strategy", "budget", "inner", "seglen", "kernel", "wrt",
                         "dump", "untuned"});
  return [f] { return tuneCommand(*f); };
}

}  // namespace tapelab::cli
