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
#include <memory>
#include <optional>

#include "api/ranks.h"
#include "api/registry.h"
#include "api/tune.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/peer_file.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "util/warmup.h"

namespace tapelab::cli {
namespace {

struct Row {
  std::string engine, kernel;
  std::string plan;  // "plain", "window 16", ...: the strategy and segments the row ran
  int segments = 1;
  int markets = 1;
  std::vector<double> ladderMs;
  double medianMs = 0;
  Result result;  // of the last ladder
  KernelStats stats;
  std::string identical;  // "yes", "NO", or "-" for the plain row
  std::string error;      // the compile or run failed: the message (the row has no numbers)
};

// "1 market", "4 markets": for messages.
std::string marketsLabel(int m) { return std::to_string(m) + (m == 1 ? " market" : " markets"); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool sameBits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

bool sameResults(const Result& a, const Result& b) {
  if (a.run.markets.size() != b.run.markets.size()) return false;
  for (size_t m = 0; m < a.run.markets.size(); ++m) {
    const MarketResult &x = a.run.markets[m], &y = b.run.markets[m];
    if (!sameBits(x.value, y.value) || !sameBits(x.valueStderr, y.valueStderr)) return false;
    for (size_t i = 0; i < x.greeks.size(); ++i)
      if (!sameBits(x.greeks[i], y.greeks[i]) || !sameBits(x.greeksStderr[i], y.greeksStderr[i])) return false;
  }
  return true;
}

// The tangent kind promises the plain kernel's value bits only (its Greeks sum in another order).
bool sameValues(const Result& a, const Result& b) {
  if (a.run.markets.size() != b.run.markets.size()) return false;
  for (size_t m = 0; m < a.run.markets.size(); ++m)
    if (!sameBits(a.run.markets[m].value, b.run.markets[m].value) ||
        !sameBits(a.run.markets[m].valueStderr, b.run.markets[m].valueStderr))
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

int compare(const Flags& f) {
  const Tape tape = tapeFrom(f);
  RunConfig cfg = runConfigFrom(f);
  const uint64_t paths = f.paths("paths");
  const uint64_t seed = f.count("seed");
  const int points = f.integer("points");
  const int ladders = f.integer("ladders");
  const int fusedMarkets = f.integer("markets");
  const auto warmupText = f.text("warmup-ms");  // unset: TimingWarmup decides (util/warmup.h)
  const int warmupMs = warmupText ? f.integerIn("warmup-ms", 0, 600000) : -1;  // -1: unset, never given
  TimingWarmup warmup(warmupMs);
  if (paths < 2) throw UsageError(f.label("paths") + ": need at least 2");
  if (points < 1 || points > 64) throw UsageError("--points: expected 1..64");
  if (ladders < 1 || ladders > 100) throw UsageError("--ladders: expected 1..100");
  if (fusedMarkets < 1 || fusedMarkets > 8) throw UsageError("--markets: expected 1..8");
  // A bad plan file is bad input, not a failed row: read it once before any kernel.
  if (!cfg.planFile.empty()) readPlanFile(cfg.planFile, tape);
  // So is a bad peer file.
  const auto peerPath = f.text("peer");
  const std::vector<PeerRow> peers = peerPath ? readPeerFile(*peerPath) : std::vector<PeerRow>{};
  const int steps = productSteps(f);

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
  // Split over ranks (api/ranks.h), every rank must compare the same engines in the same order.
  const bool split = ranks::size() > 1;
  if (split) {
    std::string list;
    for (const auto& e : engines) list += e + ",";
    ranks::agreeOn("the usable engines (" + list + ")", list);
  }
  // --strategy A,B,...: each checkpointed kernel once per strategy (a row each, every row's bits against
  // the engine's plain row); one name, or none, as before. Unknown names are refused before anything runs.
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
  std::vector<KernelKind> kinds;
  for (const auto& k : splitList(*f.textOrDefault("kernels"))) {
    try {
      const KernelKind kind = parseKernelKind(k, "--kernels");
      if (kind != KernelKind::Plain) kinds.push_back(kind);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }

  // The ladder: --ladder NAME=V1,V2,... (those values), --ladder NAME (--points values 1% apart around
  // the input's value; 0.01 apart where it is 0), else over "spot", else over the first input.
  const std::vector<double> base = inputsFrom(f, tape);
  if (tape.numInputs() == 0) throw UsageError("compare ladders over an input; this tape has none");
  std::vector<std::vector<double>> ladder;
  std::string ladderName;
  const std::string ladderText = f.text("ladder").value_or(tape.inputIndex("spot") >= 0 ? "spot" : tape.inputNames[0]);
  if (ladderText.find('=') != std::string::npos) {
    if (f.given("points")) throw UsageError("--points: --ladder NAME=V1,V2,... gives the points itself");
    ladder = ladderFrom(f, tape, base, &ladderName);
  } else {
    ladderName = ladderText;
    const int k = tape.inputIndex(ladderName);
    if (k < 0) {
      std::string known;
      for (const std::string& n : tape.inputNames) known += (known.empty() ? "" : ", ") + n;
      throw UsageError("--ladder: no input named '" + ladderName + "' (inputs: " + known + ")");
    }
    for (int i = 0; i < points; ++i) {
      std::vector<double> s = base;
      const double step = 0.01 * (i - points / 2);
      s[k] = base[k] != 0 ? base[k] * (1.0 + step) : step;
      ladder.push_back(s);
    }
  }
  const int spot = tape.inputIndex(ladderName);  // the ladder's input (the article's: spot)
  const int ladderPoints = static_cast<int>(ladder.size());
  const size_t center = static_cast<size_t>(ladderPoints / 2);

  auto progress = [](const std::string& s) {
    if (ranks::rank() == 0) std::fprintf(stderr, "compare: %s\n", s.c_str());
  };
  std::vector<Row> rows;
  struct EngineConfig {
    std::string engine, config, tuned, provenance;  // provenance: the configuration's (Provenance::text's config=)
  };
  std::vector<EngineConfig> engineConfigs;
  std::vector<std::string> autoKinds;  // what `--kernel auto` (price, run with nothing named) runs, per engine
  for (const std::string& engine : engines) {
    const EngineCaps caps = engineCaps(findEngine(engine), cfg.engineSettings);
    std::vector<std::pair<std::string, RunConfig>> variants;
    RunConfig base = cfg;
    base.engine = engine;
    if (!base.precision) base.precision = caps.defaultPrecision;  // as run and price: fp32 on GPUs, fp64 on CPUs
    // Each row's configuration is its own job's (the tuning cache's winner for that market count,
    // tapelab tune, where there is one and nothing asks otherwise, else the engine's defaults for it;
    // the user's --config over either), but the fields that change bits are the fused job's on every
    // row, so that every row's bits compare with the engine's plain single-market row.
    struct JobConfig {
      KernelConfig config;
      std::string tuned;
      std::optional<Plan> plan;
      std::string provenance;
    };
    auto jobConfig = [&](int m) {  // the one resolution of a job's configuration (api/montecarlo.h)
      const ConfigResolution r = resolveJobConfig(tape, base, caps, *base.precision, m);
      JobConfig j{r.config, "", std::nullopt, ""};
      Provenance from = r.from;
      try {
        if (r.winner && r.winner->kind != KernelKind::Plain) j.plan = parsePlanFile(r.winner->plan, tape, r.winner->path);
        if (r.winner) j.tuned = r.winner->path;
      } catch (const std::exception& e) {  // an entry this version cannot read: the defaults
        progress(engine + ": tuning cache entry " + r.winner->path + " not used: " + e.what());
        j.config = resolveConfig(base, caps, *base.precision, m);
        j.tuned.clear();
        from.config = Origin::Default;
      }
      const std::string text = from.text();
      j.provenance = text.substr(0, text.find(' '));  // the rows name their plans and kinds
      if (!r.entryProblem.empty()) progress(engine + ": tuning cache entry not used: " + r.entryProblem);
      return j;
    };
    const int fused = std::min(fusedMarkets, caps.maxMarkets);
    const JobConfig fusedJob = jobConfig(fused);
    JobConfig oneJob = fused == 1 ? fusedJob : jobConfig(1);
    for (const ConfigField& f : configFields())
      if (!keepsBits(f)) f.set(oneJob.config, f.get(fusedJob.config), f.name);
    base.useTuned = false;  // decided here, for every row
    engineConfigs.push_back({engine, configText(fusedJob.config, engine), fusedJob.tuned, fusedJob.provenance});
    for (const int m : fused == 1 ? std::vector<int>{1} : std::vector<int>{1, fused}) {
      RunConfig probe = base;  // nothing named: the kind --kernel auto picks for this job
      probe.engine = engine;
      probe.kernel.reset();
      probe.checkpoint = Checkpoint::automatic();
      probe.strategy.reset();
      probe.planFile.clear();
      probe.userConfig = wholeConfig((m == 1 ? oneJob : fusedJob).config, engine, cfg.userConfig.what);
      std::string why;
      try {
        resolveKernel(tape, probe, caps, m, nullptr, nullptr, &why, sharedInputsOf(ladder, static_cast<size_t>(m)));
      } catch (const std::exception&) {  // the rows say what is wrong with the job
      }
      if (!why.empty()) autoKinds.push_back(engine + " x" + std::to_string(m) + ": " + why.substr(why.find(' ') + 1));
    }
    if (fused != 1 && (configText(oneJob.config, engine) != configText(fusedJob.config, engine) || !oneJob.tuned.empty()))
      engineConfigs.push_back({engine + " (one market)", configText(oneJob.config, engine), oneJob.tuned, oneJob.provenance});
    RunConfig plain = base;
    plain.engine = engine;
    plain.strategy.reset();  // no cuts: the strategy names the checkpointed rows' plans
    plain.checkpoint = Checkpoint::off();
    plain.kernel = KernelKind::Plain;
    plain.planFile.clear();  // a plan file cuts the checkpointed kernels only
    plain.wrt.clear();       // --wrt picks the tangent kernel's inputs only
    base.wrt.clear();
    variants.push_back({"plain", plain});
    for (KernelKind kind : kinds) {
      if (std::find(caps.kinds.begin(), caps.kinds.end(), kind) == caps.kinds.end()) {
        progress(engine + ": no " + toString(kind) + " kernel, skipped");
        continue;
      }
      if ((kind == KernelKind::Register || kind == KernelKind::Scratch) && tape.size() < 2) {
        progress(engine + ": a tape of one node has nothing to checkpoint: no " + toString(kind) + " row");
        continue;
      }
      for (const std::optional<std::string>& strategy : strategyRuns) {
        RunConfig c = base;
        c.engine = engine;
        c.kernel = kind;
        c.strategy = strategy;
        if (kind == KernelKind::Tangent) {  // no reverse sweep: no plan, no cuts
          c.strategy.reset();
          c.checkpoint = Checkpoint::off();
          c.planFile.clear();
          c.wrt = cfg.wrt;
        } else if (kind == KernelKind::Register && (fusedJob.plan || oneJob.plan)) {
          // the tuned winners' cuts: set per job below
        } else if (c.planFile.empty() && c.checkpoint.mode != Checkpoint::Mode::Segments)  // a plan file sets the cuts
          c.checkpoint = kind == KernelKind::Scratch && !strategy ? Checkpoint::automatic()
                                                                  : Checkpoint::count(std::min(cfg.segments, tape.size()));
        variants.push_back({toString(kind), c});
        if (kind == KernelKind::Tangent) break;  // one tangent row: it has no plan
      }
    }
    const size_t plainRow = rows.size();  // the engine's plain single-market row comes first
    // Compile every kernel of this engine first, in parallel where the engine's
    // compiler allows it (NVRTC and OpenCL builds take seconds each), then time
    // them one at a time so no compile overlaps a timed run.
    struct Job {
      std::string label;
      RunConfig config;
      int markets;
    };
    std::vector<Job> jobs;
    for (const auto& [label, c] : variants)
      for (int m : fusedMarkets > 1 ? std::vector<int>{1, fused} : std::vector<int>{1}) {
        const JobConfig& jc = m == 1 ? oneJob : fusedJob;
        RunConfig rc = c;
        rc.userConfig = wholeConfig(jc.config, engine, cfg.userConfig.what);
        if (c.kernel == KernelKind::Register && c.planFile.empty() && !cfg.plan && (fusedJob.plan || oneJob.plan)) {
          if (jc.plan) rc.plan = jc.plan;  // this job's tuned cuts
          else rc.checkpoint = Checkpoint::count(std::min(cfg.segments, tape.size()));
        }
        jobs.push_back({label, rc, m});
      }
    progress(engine + ": compiling " + std::to_string(jobs.size()) + " kernels");
    std::vector<std::future<Pricer>> built;
    for (const Job& j : jobs)
      // Split, each build agrees with the other ranks: one at a time, in order, on this thread.
      built.push_back(std::async(split ? std::launch::deferred : std::launch::async,
                                 [&tape, &ladder, j] { return MonteCarlo::of(tape).config(j.config).markets(j.markets).sets(ladder).build(); }));
    for (size_t ji = 0; ji < jobs.size(); ++ji) {
      const std::string& label = jobs[ji].label;
      const int markets = jobs[ji].markets;
      Row row;
      row.engine = engine;
      row.kernel = label;
      row.markets = markets;
      // One kernel that fails (a driver that cannot build an 8-market shader, say)
      // costs its row, not the comparison: the error is printed in the row.
      try {
        Pricer pricer = built[ji].get();
        // The fused rows' reverse sweep one market at a time, where the engine has a market order.
        if (caps.marketOrder && sequentialMarkets(pricer.options())) row.kernel += "/seq";
        row.segments = pricer.options().plan.segments();
        {
          const Plan& p = pricer.options().plan;
          row.plan = pricer.options().kind == KernelKind::Tangent ? "none (tangent)"
                     : p.segments() <= 1                          ? "plain"
                                                                  : p.strategy + " " + std::to_string(p.segments());
          if (pricer.options().kind == KernelKind::Register && (markets == 1 ? oneJob : fusedJob).plan) row.plan += " (tuned)";
        }
        row.stats = pricer.stats();
        auto runLadder = [&](uint64_t s) {
          if (markets > 1) return pricer.runMarkets(ladder, paths, s);
          Result all;
          for (const auto& set : ladder) {
            Result one = pricer.runMarkets({set}, paths, s);
            if (all.run.markets.empty()) all = one;
            else all.run.markets.push_back(one.run.markets[0]);
          }
          return all;
        };
        // Warm-up on another seed: first-use costs stay out of the numbers, and a GPU's clocks climb.
        warmup.run(caps.gpu, [&] { runLadder(seed + 1); });
        for (int l = 0; l < ladders; ++l) {
          progress(engine + " " + label + ": ladder " + std::to_string(l + 1) + "/" + std::to_string(ladders));
          const auto t0 = std::chrono::steady_clock::now();
          row.result = runLadder(seed);
          row.ladderMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        warmup.busyUntilNow();
        row.medianMs = median(row.ladderMs);
        warnNonFinite(row.result);  // a row whose estimates are not finite says so (cli.h)
      } catch (const std::exception& e) {
        row.error = e.what();
        row.ladderMs.clear();
        progress(engine + " " + label + " (" + marketsLabel(markets) + "): " + row.error);
      }
      rows.push_back(row);
    }
    // Identity against this engine's plain single-market ladder.
    const Row& plainRowRef = rows[plainRow];
    for (size_t r = plainRow; r < rows.size(); ++r) {
      if (!rows[r].error.empty() || (rows[r].kernel == "plain" && rows[r].markets == 1) || !plainRowRef.error.empty())
        rows[r].identical = "-";
      else if (rows[r].kernel == toString(KernelKind::Tangent))
        rows[r].identical = sameValues(rows[r].result, plainRowRef.result) ? "value" : "NO";
      else rows[r].identical = sameResults(rows[r].result, plainRowRef.result) ? "yes" : "NO";
    }
  }

  // The third column: d/d vol where there is one, else the first other input's Greek.
  int vega = tape.inputIndex("vol");
  if (vega < 0 || vega == spot)
    for (int k = 0; k < tape.numInputs() && (vega < 0 || vega == spot); ++k) vega = k == spot ? -1 : k;
  const std::string spotName = tape.inputNames[spot], vegaName = vega >= 0 ? tape.inputNames[vega] : "-";
  auto greekAt = [&](const Row& r, int idx) {
    return idx >= 0 && r.result.kernel.greeks ? num(r.result.run.markets[center].greeks[idx]) : std::string("-");
  };
  const double callsPaths = static_cast<double>(paths) * ladderPoints;
  // Mpath/s of a row: market-paths of one ladder (points x paths) over its median time.
  const auto mpathPerSecond = [&](const Row& r) { return callsPaths / (r.medianMs * 1e3); };
  // Greeks a path of the row computes (a tangent kernel's --wrt, else every input; none without Greeks):
  // "many Greeks per second" is Greeks x Mpath/s (issue 48).
  const auto greeksPerPath = [&](const Row& r) -> int {
    if (!r.result.kernel.greeks) return 0;
    const bool subset = r.result.kernel.kind == KernelKind::Tangent && !r.result.kernel.wrt.empty();
    return subset ? static_cast<int>(r.result.kernel.wrt.size()) : tape.numInputs();
  };
  if (f.given("json")) {
    std::vector<std::string> items;
    for (const Row& r : rows) {
      if (!r.error.empty()) {
        items.push_back(Json().str("engine", r.engine).str("kernel", r.kernel).integer("markets", r.markets)
                            .str("error", r.error).done());
        continue;
      }
      std::vector<std::string> ms;
      for (double x : r.ladderMs) ms.push_back(num(x));
      Json j;
      j.str("engine", r.engine).str("kernel", r.kernel).str("plan", r.plan).integer("segments", r.segments)
          .integer("markets", r.markets)
          .number("ms_per_ladder", r.medianMs).field("ms_ladders", jsonArray(ms))
          .number("mpaths_per_second", mpathPerSecond(r))
          .integer("greeks_per_path", greeksPerPath(r))
          .number("mgreek_paths_per_second", greeksPerPath(r) * mpathPerSecond(r))
          .str("identical_to_plain", r.identical)
          .field("result", resultJson(r.result, center, &r.stats));
      if (peerPath) {
        std::vector<std::string> ps;
        for (const PeerRow* p : matchingPeers(peers, cfg.greeks, paths, ladderPoints, r.markets, steps))
          ps.push_back(Json().str("who", p->who).str("formulation", p->formulation).integer("line", p->line)
                           .number("mpaths_per_second", p->mpathPerSecond)
                           .number("ratio", mpathPerSecond(r) / p->mpathPerSecond).done());
        j.field("peers", jsonArray(ps));
      }
      items.push_back(j.done());
    }
    Json top;
    std::vector<std::string> values;
    for (const auto& s : ladder) values.push_back(num(s[spot]));
    top.str("tape", tape.name).integer("nodes", tape.size()).integer("paths", static_cast<int64_t>(paths))
        .field("seed", std::to_string(seed)).boolean("greeks", cfg.greeks).str("ladder_input", spotName).field("ladder_values", jsonArray(values))
        .integer("ladders", ladders).field("rows", jsonArray(items));
    std::vector<std::string> configs;
    for (const EngineConfig& e : engineConfigs)
      configs.push_back(Json().str("engine", e.engine).str("config", e.config).str("tuned", e.tuned).str("provenance", e.provenance).done());
    top.field("configs", jsonArray(configs));
    std::vector<std::string> autos;
    for (const std::string& a : autoKinds) autos.push_back(jsonString(a));
    top.field("kernel_auto", jsonArray(autos));
    std::printf("%s\n", top.done().c_str());
  } else {
    std::printf("%s: %d nodes | %llu paths per call | %d-point %s ladder, median of %d | %s | %s\n",
                tape.name.c_str(), tape.size(), static_cast<unsigned long long>(paths), ladderPoints, spotName.c_str(), ladders,
                cfg.greeks ? "value + Greeks" : "value only",
                cfg.precision ? toString(*cfg.precision) : "each engine's default precision (fp32 on GPUs, fp64 on CPUs)");
    std::vector<std::string> named;  // the device behind each engine: the GPU's name, lavapipe, PoCL, the CPU
    for (const Row& r : rows)
      if (std::find(named.begin(), named.end(), r.engine) == named.end()) {
        named.push_back(r.engine);
        const EngineCaps c = engineCaps(findEngine(r.engine), cfg.engineSettings);
        std::printf("device %s: %s%s\n", r.engine.c_str(), c.reason.c_str(),
                    c.cpuDevice ? " (a CPU serving a GPU API: its times say nothing about a GPU)" : "");
      }
    std::vector<std::vector<std::string>> out;
    std::vector<std::string> errors;
    for (const Row& r : rows) {
      if (!r.error.empty()) {
        errors.push_back(r.engine + " " + r.kernel + " (" + marketsLabel(r.markets) + "): " + r.error);
        out.push_back({r.engine, r.kernel, "-", std::to_string(r.markets), "error", "-", "-", "-", "-", "-", "-", "-",
                       "see below", "-", "-"});  // compile s, Greeks x Mpath/s, plan
        continue;
      }
      char ms[32], mps[32], comp[32], gps[32];
      std::snprintf(ms, sizeof ms, "%.2f", r.medianMs);
      std::snprintf(mps, sizeof mps, "%.2f", mpathPerSecond(r));
      std::snprintf(gps, sizeof gps, "%.4g", greeksPerPath(r) * mpathPerSecond(r));
      std::snprintf(comp, sizeof comp, "%.2f%s", r.stats.compileSeconds, r.stats.cacheHit ? " (cached)" : "");
      const bool tangentRow = r.result.kernel.kind == KernelKind::Tangent;
      out.push_back({r.engine + " " + toString(r.result.kernel.precision), r.kernel,
                     tangentRow ? std::string("-") : std::to_string(r.segments), std::to_string(r.markets), ms, mps,
                     num(r.result.run.markets[center].value), greekAt(r, spot), greekAt(r, vega), r.identical,
                     r.stats.registers >= 0 ? std::to_string(r.stats.registers) : "-",
                     r.stats.spillBytes >= 0 ? std::to_string(r.stats.spillBytes) : "-", comp, gps, r.plan});
    }
    std::printf("%s", table({"engine", "kernel", "segs", "mkts", "ms/ladder", "Mpath/s", "value", "d/d " + spotName, "d/d " + vegaName,
                             "same bits", "regs", "spill B", "compile s", "Greeks x Mpath/s", "plan"},
                            out)
                          .c_str());
    std::printf("value and Greeks at %s = %s; 'same bits': every value, Greek and stderr of the ladder equals the\n"
                "engine's plain single-market kernel bit for bit ('value': the tangent kernel's values and their\n"
                "stderrs do; its Greeks are forward-mode sums, equal within rounding; it has no plan: segs '-').\n"
                "'Greeks x Mpath/s': the Greeks a path computes (every input; a tangent kernel's --wrt) times Mpath/s.\n",
                spotName.c_str(), num(ladder[center][spot]).c_str());
    for (const EngineConfig& e : engineConfigs)
      std::printf("config %s: %s%s; from %s\n", e.engine.c_str(), e.config.c_str(),
                  e.tuned.empty() ? " (the engine's defaults)" : (" (tuned: " + e.tuned + ")").c_str(), e.provenance.c_str());
    for (const std::string& a : autoKinds) std::printf("kernel auto on %s\n", a.c_str());
    for (const std::string& e : errors) std::printf("error: %s\n", e.c_str());
    if (peerPath) {
      std::vector<std::vector<std::string>> pr;
      for (const Row& r : rows) {
        if (!r.error.empty()) continue;
        char mps[32];
        std::snprintf(mps, sizeof mps, "%.2f", mpathPerSecond(r));
        const auto match = matchingPeers(peers, cfg.greeks, paths, ladderPoints, r.markets, steps);
        const std::string engine = r.engine + " " + toString(r.result.kernel.precision);
        if (match.empty()) pr.push_back({engine, r.kernel, std::to_string(r.markets), mps, "-", "-", "-"});
        for (const PeerRow* p : match) {
          char pm[32], ratio[32];
          std::snprintf(pm, sizeof pm, "%.4g", p->mpathPerSecond);
          std::snprintf(ratio, sizeof ratio, "%.2fx", mpathPerSecond(r) / p->mpathPerSecond);
          pr.push_back({engine, r.kernel, std::to_string(r.markets), mps,
                        p->who + " " + p->formulation + " (line " + std::to_string(p->line) + ")", pm, ratio});
        }
      }
      std::printf("\nagainst %s: tapelab's Mpath/s / the peer's, rows of the same pass, paths and ladder points,\n"
                  "fused rows (mkts > 1) against fused peer rows, one-market rows against one market per call:\n%s",
                  peerPath->c_str(),
                  table({"engine", "kernel", "mkts", "Mpath/s", "peer", "peer Mpath/s", "ratio"}, pr).c_str());
    }
  }
  for (const Row& r : rows)
    if (!r.error.empty()) {
      std::fprintf(stderr, "tapelab: %s %s (%s) failed: %s\n", r.engine.c_str(), r.kernel.c_str(),
                   marketsLabel(r.markets).c_str(), r.error.c_str());
      return kExitFailure;
    }
  for (const Row& r : rows)
    if (r.identical == "NO") {
      std::fprintf(stderr, "tapelab: %s %s (%s) differs from plain\n", r.engine.c_str(), r.kernel.c_str(),
                   marketsLabel(r.markets).c_str());
      return kExitFailure;
    }
  return kExitOk;
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
  // --checkpoint says how many segments (auto: the default count), not whether to cut.
  f->knob("checkpoint", "off|auto|SEGMENTS", RunConfig().checkpoint.text(),
          "the checkpointed rows' segments; auto: " + std::to_string(RunConfig().segments) +
              " on every engine and tape (run and price cut only long tapes, and not on cpu-jit)");
  addRunConfigFlags(*f, {"kernel", "checkpoint"});  // --wrt applies to the tangent rows
  f->option("fp32")->description("single precision on every engine (default: each engine's, as run uses)");
  f->flag("json", "print one JSON object with every row");
  return [f] { return compare(*f); };
}

}  // namespace tapelab::cli
