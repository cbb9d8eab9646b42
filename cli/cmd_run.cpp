// tapelab run FILE.tape / tapelab price --product ...: one pricing, or one
// ladder of markets, printed as a table or JSON.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "api/registry.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/text.h"

namespace tapelab::cli {
namespace {

// "auto": the first usable of the real GPUs, then cpu-jit, then the reference.
std::string pickEngine(const std::string& requested, const EngineSettings& settings) {
  if (requested != "auto") return requested;
  for (const char* name : {"cuda", "vulkan", "opencl"}) {
    const EngineCaps c = engineCaps(findEngine(name), settings);
    if (c.usable && !c.cpuDevice) return name;
  }
  if (engineCaps(findEngine("cpu-jit"), settings).usable) return "cpu-jit";
  return "reference";
}

// TAPELAB_TIMELINE=1: one line per dispatch, where the run's time went (engine.h DispatchTiming).
void printTimeline(const RunResult& run) {
  const bool timed = std::any_of(run.dispatches.begin(), run.dispatches.end(),
                                 [](const DispatchTiming& d) { return d.kernelSeconds >= 0; });
  if (!timed) return;
  double kernels = 0;
  for (const DispatchTiming& d : run.dispatches) kernels += std::max(0.0, d.kernelSeconds);
  std::printf("timeline: setup %.3f ms, %zu dispatches, kernels %.3f ms of %.3f ms (%.1f%%)\n", run.setupSeconds * 1e3,
              run.dispatches.size(), kernels * 1e3, run.seconds * 1e3, run.seconds > 0 ? 100 * kernels / run.seconds : 0.0);
  std::vector<std::vector<std::string>> rows;
  auto ms = [](double s) { return s < 0 ? std::string("-") : num(s * 1e3); };
  for (size_t i = 0; i < run.dispatches.size(); ++i) {
    const DispatchTiming& d = run.dispatches[i];
    rows.push_back({std::to_string(i), std::to_string(d.groups), ms(d.gapSeconds), ms(d.kernelSeconds), ms(d.readySeconds),
                    ms(d.sumSeconds)});
  }
  std::printf("%s", table({"dispatch", "groups", "gap ms", "kernel ms", "partials ready at ms", "host sum ms"}, rows).c_str());
}

int priceOne(const Flags& f, const Tape& tape, RunConfig cfg);

// --strategy a,b,...: one run per strategy, a row each, every row's bits against the first's.
int priceStrategies(const Flags& f, const Tape& tape, RunConfig cfg, const std::vector<std::string>& names) {
  const uint64_t paths = f.count("paths");
  const uint64_t seed = f.count("seed");
  if (paths < 2) throw UsageError(f.label("paths") + ": need at least 2 paths for a standard error");
  if (f.given("ladder")) throw UsageError("--strategy A,B,...: one market per run (give --ladder with one strategy)");
  const std::vector<double> inputs = inputsFrom(f, tape);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<std::string>> greeks(1 + tape.inputNames.size());  // value, then d/d each input
  greeks[0].push_back("value");
  for (size_t i = 0; i < tape.inputNames.size(); ++i) greeks[i + 1].push_back("d/d " + tape.inputNames[i]);
  std::vector<std::string> items;
  std::optional<Result> first;
  bool differ = false;
  for (const std::string& name : names) {
    RunConfig c = cfg;
    c.strategy = name;
    Pricer pricer = MonteCarlo::of(tape).config(c).build();
    pricer.inputs = inputs;
    const Result r = pricer.run(paths, seed);
    const KernelStats stats = pricer.stats();
    for (const std::string& n : r.notUsed) std::fprintf(stderr, "tapelab: %s\n", escapeControls(n).c_str());
    const MarketResult& m = r.run.markets[0];
    bool same = true;
    if (first) {
      const MarketResult& a = first->run.markets[0];
      same = a.value == m.value && a.valueStderr == m.valueStderr && a.greeks == m.greeks && a.greeksStderr == m.greeksStderr;
      differ = differ || !same;
    }
    const KernelOptions& k = r.kernel;
    rows.push_back({name, toString(k.kind), std::to_string(k.plan.segments()), sig3(r.run.seconds * 1e3),
                    sig3(r.pathsPerSecond()), first ? (same ? "yes" : "NO") : "-",
                    stats.registers >= 0 ? std::to_string(stats.registers) : "-"});
    greeks[0].push_back(rounded(m.value, m.valueStderr));
    for (size_t i = 0; i < tape.inputNames.size(); ++i)
      greeks[i + 1].push_back(k.greeks && i < m.greeks.size() ? rounded(m.greeks[i], m.greeksStderr[i]) : "-");
    items.push_back(resultJson(r, 0, &stats));
    if (!first) first = r;
  }
  if (f.given("json")) {
    std::printf("%s\n", jsonArray(items).c_str());
  } else {
    std::printf("%s: %d nodes | engine %s (%s) | %llu paths, seed %llu | config %s\n", tape.name.c_str(), tape.size(),
                first->engine.c_str(), toString(first->kernel.precision), static_cast<unsigned long long>(paths),
                static_cast<unsigned long long>(seed), configText(first->kernel.config, first->engine).c_str());
    std::printf("%s", table({"strategy", "kernel", "segments", "ms", "paths/s", "same bits as first", "regs"}, rows).c_str());
    std::vector<std::string> header{"quantity"};
    header.insert(header.end(), names.begin(), names.end());
    std::printf("\nvalue and Greeks, estimate +- standard error, rounded to the error (--json: 17 digits):\n%s",
                table(header, greeks).c_str());
  }
  if (differ) {
    std::fprintf(stderr, "tapelab: the strategies' results differ bit for bit (a bug: plain and checkpointed "
                         "kernels promise the same bits)\n");
    return kExitFailure;
  }
  return kExitOk;
}

int price(const Flags& f) {
  const Tape tape = tapeFrom(f);
  RunConfig cfg = runConfigFrom(f);
  if (cfg.strategy && cfg.strategy->find(',') != std::string::npos) {
    cfg.engine = pickEngine(cfg.engine, cfg.engineSettings);
    std::vector<std::string> names;
    try {
      names = parseNameList(*cfg.strategy, f.label("strategy"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    return priceStrategies(f, tape, cfg, names);
  }
  return priceOne(f, tape, cfg);
}

int priceOne(const Flags& f, const Tape& tape, RunConfig cfg) {
  cfg.engine = pickEngine(cfg.engine, cfg.engineSettings);
  const uint64_t paths = f.paths("paths");
  const uint64_t seed = f.count("seed");
  if (paths < 2) throw UsageError(f.label("paths") + ": need at least 2 paths for a standard error");
  const std::vector<double> base = inputsFrom(f, tape);
  std::string ladderInput;
  std::vector<std::vector<double>> sets = ladderFrom(f, tape, base, &ladderInput);
  const bool ladder = !sets.empty();
  if (!ladder) sets.push_back(base);
  const int markets = f.given("markets") ? f.integer("markets") : static_cast<int>(std::min<size_t>(sets.size(), 8));
  if (markets < 1 || markets > 8) throw UsageError("--markets: expected 1..8, got " + std::to_string(markets));
  if (!ladder && f.given("markets")) throw UsageError("--markets needs --ladder");

  Pricer pricer = MonteCarlo::of(tape).config(cfg).markets(markets).sets(sets).build();
  Result r = pricer.runMarkets(sets, paths, seed);
  const KernelStats stats = pricer.stats();
  warnUnusedConfig(cfg, stats);
  warnNonFinite(r);
  for (const std::string& n : r.notUsed) std::fprintf(stderr, "tapelab: %s\n", escapeControls(n).c_str());

  if (f.given("json")) {
    if (!ladder) {
      std::printf("%s\n", resultJson(r, 0, &stats).c_str());
    } else {
      std::vector<std::string> items;
      for (size_t m = 0; m < sets.size(); ++m) items.push_back(resultJson(r, m, &stats));
      std::printf("%s\n", jsonArray(items).c_str());
    }
    return kExitOk;
  }
  const KernelOptions& k = r.kernel;
  std::string kernel = toString(k.kind);
  const bool tangent = k.kind == KernelKind::Tangent;
  if (tangent)
    kernel += " (vector forward mode, no plan: no reverse sweep to cut; " +
              std::to_string(differentiatedInputs(k, tape.numInputs()).size()) + " inputs differentiated)";
  else if (k.kind != KernelKind::Plain)
    kernel += ", " + std::to_string(k.plan.segments()) + " segments (" + k.plan.strategy + ")";
  if (k.kind == KernelKind::Scratch) kernel += std::string(", ") + toString(k.config.layout);
  if (sequentialMarkets(k) && engineCaps(findEngine(r.engine), cfg.engineSettings).marketOrder)
    kernel += ", markets sequential";
  std::printf("%s: %d nodes | engine %s (%s) | kernel %s | %llu paths, seed %llu | %.3f s, %.4g paths/s\n",
              tape.name.c_str(), tape.size(), r.engine.c_str(), toString(k.precision), kernel.c_str(),
              static_cast<unsigned long long>(paths), static_cast<unsigned long long>(seed), r.run.seconds,
              r.pathsPerSecond());
  std::printf("config %s%s\n", configText(k.config, r.engine).c_str(),
              r.tuned.empty() ? "" : ("  (tuned: " + r.tuned + "; --untuned for the engine's defaults)").c_str());
  if (!r.kindWhy.empty()) std::printf("kernel %s; --kernel names one\n", r.kindWhy.c_str());
  std::printf("from %s\n", r.provenance.text().c_str());
  printTimeline(r.run);
  if (!ladder) {
    std::vector<std::vector<std::string>> rows;
    const MarketResult& m = r.run.markets[0];
    rows.push_back({"value", num(m.value), num(m.valueStderr), rounded(m.value, m.valueStderr)});
    if (k.greeks)
      for (size_t i = 0; i < tape.inputNames.size(); ++i) {
        if (tangent && !k.wrt.empty() && std::find(k.wrt.begin(), k.wrt.end(), static_cast<int>(i)) == k.wrt.end()) {
          rows.push_back({"d/d " + tape.inputNames[i], "not computed (--wrt)", "", ""});
          continue;
        }
        rows.push_back({"d/d " + tape.inputNames[i], num(m.greeks[i]), num(m.greeksStderr[i]),
                        rounded(m.greeks[i], m.greeksStderr[i])});
      }
    std::printf("%s", table({"quantity", "estimate", "stderr", "rounded to the error"}, rows).c_str());
  } else {
    std::vector<std::string> header{ladderInput, "value", "stderr"};
    if (k.greeks)
      for (const auto& n : tape.inputNames) header.push_back("d/d " + n);
    std::vector<std::vector<std::string>> rows;
    const int li = tape.inputIndex(ladderInput);
    for (size_t s = 0; s < sets.size(); ++s) {
      const MarketResult& m = r.run.markets[s];
      std::vector<std::string> row{num(sets[s][li]), num(m.value), num(m.valueStderr)};
      if (k.greeks)
        for (double g : m.greeks) row.push_back(num(g));
      rows.push_back(row);
    }
    std::printf("%s", table(header, rows).c_str());
    std::printf("(%d markets per dispatch)\n", markets);
  }
  return kExitOk;
}

// The flags of run and price: the tape's, then the pricing run's.
Runner setupPricing(CLI::App& app, TapeSource source) {
  app.footer("Prices the tape's output with Monte-Carlo and reports the adjoint of every input\n"
             "(the Greeks), each with its standard error. --engine auto picks a GPU if there is\n"
             "one, else cpu-jit, else the reference interpreter. --kernel tangent computes the\n"
             "Greeks in vector forward mode instead (each node carries d/d every input, or the\n"
             "--wrt subset; same draws and value bits as plain; checkpointing does not apply).");
  auto f = std::make_shared<Flags>(app);
  addTapeFlags(*f, source);
  f->knob("engine", "NAME", RunConfig().engine, "auto: a GPU, else cpu-jit, else reference");
  f->knob("paths", "N", "100000");
  f->knob("seed", "S", "42");
  addSetFlag(*f);
  f->value("ladder", "NAME=V1,V2,...", "price one market per value, several markets per dispatch");
  f->value("markets", "M", "markets per dispatch for --ladder (1-8; default: all values, at most 8)");
  addRunConfigFlags(*f);
  f->flag("json", "print one JSON object (one per market with --ladder: an array)");
  return [f] { return price(*f); };
}

}  // namespace

Runner setupRun(CLI::App& app) { return setupPricing(app, TapeSource::File); }
Runner setupPrice(CLI::App& app) { return setupPricing(app, TapeSource::Product); }

}  // namespace tapelab::cli
