// tapelab run FILE.tape / tapelab price --product ...: one pricing, or one
// ladder of markets, printed as a table or JSON.
#include <cstdio>

#include "api/registry.h"
#include "cli/cli.h"
#include "cli/commands.h"

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

int price(const Argv& argv, bool fromFile) {
  std::vector<Flag> flags = pricingFlags();
  if (!fromFile) {
    flags.insert(flags.begin(), {{"product", "NAME", "european, asian or basket (required)", ""},
                                 {"steps", "N", "time steps (default 252)", ""},
                                 {"assets", "M", "basket assets (default 5)", ""}});
  }
  Args a(fromFile ? "run" : "price", argv, flags);
  if (a.help()) {
    std::printf("%s", a.usage(fromFile ? "FILE.tape [flags]" : "--product NAME [--steps N] [--assets M] [flags]",
                              "Prices the tape's output with Monte-Carlo and reports the adjoint of every input\n"
                              "(the Greeks), each with its standard error. --engine auto picks a GPU if there is\n"
                              "one, else cpu-jit, else the reference interpreter.")
                          .c_str());
    return kExitOk;
  }
  const Tape tape = tapeFrom(a, fromFile);
  RunConfig cfg = runConfigFrom(a);
  cfg.engine = pickEngine(cfg.engine, cfg.engineSettings);
  const uint64_t paths = a.getU64("paths", 100000);
  const uint64_t seed = a.getU64("seed", 42);
  if (paths < 2) throw UsageError("--paths: need at least 2 paths for a standard error");
  const std::vector<double> base = inputsFrom(a, tape);
  std::string ladderInput;
  std::vector<std::vector<double>> sets = ladderFrom(a, tape, base, &ladderInput);
  const bool ladder = !sets.empty();
  if (!ladder) sets.push_back(base);
  int markets = a.getInt("markets", static_cast<int>(std::min<size_t>(sets.size(), 8)));
  if (markets < 1 || markets > 8) throw UsageError("--markets: expected 1..8, got " + std::to_string(markets));
  if (!ladder && a.has("markets")) throw UsageError("--markets needs --ladder");

  Pricer pricer = MonteCarlo::of(tape).config(cfg).markets(markets).build();
  Result r = pricer.runMarkets(sets, paths, seed);
  const KernelStats stats = pricer.stats();

  if (a.has("json")) {
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
  if (k.kind != KernelKind::Plain)
    kernel += ", " + std::to_string(k.plan.segments()) + " segments (" + k.plan.strategy + ")";
  if (k.kind == KernelKind::Scratch) kernel += std::string(", ") + toString(k.layout);
  char head[512];
  std::snprintf(head, sizeof head, "%s: %d nodes | engine %s (%s) | kernel %s | %llu paths, seed %llu | %.3f s, %.4g paths/s\n",
                tape.name.c_str(), tape.size(), r.engine.c_str(), toString(k.precision), kernel.c_str(),
                static_cast<unsigned long long>(paths), static_cast<unsigned long long>(seed), r.run.seconds,
                r.pathsPerSecond());
  std::printf("%s", head);
  if (!ladder) {
    std::vector<std::vector<std::string>> rows;
    const MarketResult& m = r.run.markets[0];
    rows.push_back({"value", num(m.value), num(m.valueStderr)});
    if (k.greeks)
      for (size_t i = 0; i < tape.inputNames.size(); ++i)
        rows.push_back({"d/d " + tape.inputNames[i], num(m.greeks[i]), num(m.greeksStderr[i])});
    std::printf("%s", table({"quantity", "estimate", "stderr"}, rows).c_str());
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

}  // namespace

int cmdRun(const Argv& argv) { return price(argv, true); }
int cmdPrice(const Argv& argv) { return price(argv, false); }

}  // namespace tapelab::cli
