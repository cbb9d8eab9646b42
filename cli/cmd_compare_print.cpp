// tapelab compare's output (cli/compare_parts.h): the rows as one JSON object or as a table with the
// engines' devices, configurations, auto's kinds, errors and --peer's ratios.
#include <algorithm>
#include <cstdio>

#include "api/registry.h"
#include "cli/cli.h"
#include "cli/compare_parts.h"

namespace tapelab::cli {
namespace {

// Mpath/s of a row: market-paths of one ladder (points x paths) over its median time.
double mpathPerSecond(const CompareJob& job, const CompareRow& r) {
  return static_cast<double>(job.paths) * job.ladderPoints / (r.medianMs * 1e3);
}
// Greeks a path of the row computes (a tangent kernel's --wrt, else every input; none without Greeks):
// "many Greeks per second" is Greeks x Mpath/s (issue 48).
int greeksPerPath(const CompareJob& job, const CompareRow& r) {
  if (!r.result.kernel.greeks) return 0;
  const bool subset = r.result.kernel.kind == KernelKind::Tangent && !r.result.kernel.wrt.empty();
  return subset ? static_cast<int>(r.result.kernel.wrt.size()) : job.tape.numInputs();
}

std::string rowJson(const CompareJob& job, const CompareRow& r) {
  if (!r.error.empty())
    return Json().str("engine", r.engine).str("kernel", r.kernel).integer("markets", r.markets).str("error", r.error).done();
  std::vector<std::string> ms;
  for (double x : r.ladderMs) ms.push_back(num(x));
  Json j;
  j.str("engine", r.engine).str("kernel", r.kernel).str("plan", r.plan).integer("segments", r.segments)
      .integer("markets", r.markets)
      .number("ms_per_ladder", r.medianMs).field("ms_ladders", jsonArray(ms))
      .number("mpaths_per_second", mpathPerSecond(job, r))
      .integer("greeks_per_path", greeksPerPath(job, r))
      .number("mgreek_paths_per_second", greeksPerPath(job, r) * mpathPerSecond(job, r))
      .str("identical_to_plain", r.identical)
      .field("result", resultJson(r.result, job.center, &r.stats));
  if (job.peerPath) {
    std::vector<std::string> ps;
    for (const PeerRow* p : matchingPeers(job.peers, job.cfg.greeks, job.paths, job.ladderPoints, r.markets, job.steps))
      ps.push_back(Json().str("who", p->who).str("formulation", p->formulation).integer("line", p->line)
                       .number("mpaths_per_second", p->mpathPerSecond)
                       .number("ratio", mpathPerSecond(job, r) / p->mpathPerSecond).done());
    j.field("peers", jsonArray(ps));
  }
  return j.done();
}

// The third column: d/d vol where there is one, else the first other input's Greek.
int vegaOf(const CompareJob& job) {
  const Tape& tape = job.tape;
  int vega = tape.inputIndex("vol");
  if (vega < 0 || vega == job.spot)
    for (int k = 0; k < tape.numInputs() && (vega < 0 || vega == job.spot); ++k) vega = k == job.spot ? -1 : k;
  return vega;
}

void printHeader(const CompareJob& job, const CompareOut& out) {
  std::printf("%s: %d nodes | %llu paths per call | %d-point %s ladder, median of %d | %s | %s\n", job.tape.name.c_str(),
              job.tape.size(), static_cast<unsigned long long>(job.paths), job.ladderPoints,
              job.tape.inputNames[job.spot].c_str(), job.ladders, job.cfg.greeks ? "value + Greeks" : "value only",
              job.cfg.precision ? toString(*job.cfg.precision) : "each engine's default precision (fp32 on GPUs, fp64 on CPUs)");
  std::vector<std::string> named;  // the device behind each engine: the GPU's name, lavapipe, PoCL, the CPU
  for (const CompareRow& r : out.rows)
    if (std::find(named.begin(), named.end(), r.engine) == named.end()) {
      named.push_back(r.engine);
      const EngineCaps c = engineCaps(findEngine(r.engine), job.cfg.engineSettings);
      std::printf("device %s: %s%s\n", r.engine.c_str(), c.reason.c_str(),
                  c.cpuDevice ? " (a CPU serving a GPU API: its times say nothing about a GPU)" : "");
    }
}

std::vector<std::string> rowCells(const CompareJob& job, const CompareRow& r, int vega) {
  if (!r.error.empty())
    return {r.engine, r.kernel, "-", std::to_string(r.markets), "error", "-", "-", "-", "-", "-", "-", "-",
            "see below", "-", "-"};  // compile s, Greeks x Mpath/s, plan
  auto greekAt = [&](int idx) {
    return idx >= 0 && r.result.kernel.greeks ? num(r.result.run.markets[job.center].greeks[idx]) : std::string("-");
  };
  char ms[32], mps[32], comp[32], gps[32];
  std::snprintf(ms, sizeof ms, "%.2f", r.medianMs);
  std::snprintf(mps, sizeof mps, "%.2f", mpathPerSecond(job, r));
  std::snprintf(gps, sizeof gps, "%.4g", greeksPerPath(job, r) * mpathPerSecond(job, r));
  std::snprintf(comp, sizeof comp, "%.2f%s", r.stats.compileSeconds, r.stats.cacheHit ? " (cached)" : "");
  const bool tangentRow = r.result.kernel.kind == KernelKind::Tangent;
  return {r.engine + " " + toString(r.result.kernel.precision), r.kernel,
          tangentRow ? std::string("-") : std::to_string(r.segments), std::to_string(r.markets), ms, mps,
          num(r.result.run.markets[job.center].value), greekAt(job.spot), greekAt(vega), r.identical,
          r.stats.registers >= 0 ? std::to_string(r.stats.registers) : "-",
          r.stats.spillBytes >= 0 ? std::to_string(r.stats.spillBytes) : "-", comp, gps, r.plan};
}

void printPeers(const CompareJob& job, const CompareOut& out) {
  std::vector<std::vector<std::string>> pr;
  for (const CompareRow& r : out.rows) {
    if (!r.error.empty()) continue;
    char mps[32];
    std::snprintf(mps, sizeof mps, "%.2f", mpathPerSecond(job, r));
    const auto match = matchingPeers(job.peers, job.cfg.greeks, job.paths, job.ladderPoints, r.markets, job.steps);
    const std::string engine = r.engine + " " + toString(r.result.kernel.precision);
    if (match.empty()) pr.push_back({engine, r.kernel, std::to_string(r.markets), mps, "-", "-", "-"});
    for (const PeerRow* p : match) {
      char pm[32], ratio[32];
      std::snprintf(pm, sizeof pm, "%.4g", p->mpathPerSecond);
      std::snprintf(ratio, sizeof ratio, "%.2fx", mpathPerSecond(job, r) / p->mpathPerSecond);
      pr.push_back({engine, r.kernel, std::to_string(r.markets), mps,
                    p->who + " " + p->formulation + " (line " + std::to_string(p->line) + ")", pm, ratio});
    }
  }
  std::printf("\nagainst %s: tapelab's Mpath/s / the peer's, rows of the same pass, paths and ladder points,\n"
              "fused rows (mkts > 1) against fused peer rows, one-market rows against one market per call:\n%s",
              job.peerPath->c_str(), table({"engine", "kernel", "mkts", "Mpath/s", "peer", "peer Mpath/s", "ratio"}, pr).c_str());
}

}  // namespace

void printJson(const CompareJob& job, const CompareOut& out) {
  std::vector<std::string> items;
  for (const CompareRow& r : out.rows) items.push_back(rowJson(job, r));
  Json top;
  std::vector<std::string> values;
  for (const auto& s : job.ladder) values.push_back(num(s[job.spot]));
  top.str("tape", job.tape.name).integer("nodes", job.tape.size()).integer("paths", static_cast<int64_t>(job.paths))
      .field("seed", std::to_string(job.seed)).boolean("greeks", job.cfg.greeks).str("ladder_input", job.tape.inputNames[job.spot])
      .field("ladder_values", jsonArray(values)).integer("ladders", job.ladders).field("rows", jsonArray(items));
  std::vector<std::string> configs;
  for (const EngineConfig& e : out.engineConfigs)
    configs.push_back(Json().str("engine", e.engine).str("config", e.config).str("tuned", e.tuned).str("provenance", e.provenance).done());
  top.field("configs", jsonArray(configs));
  std::vector<std::string> autos;
  for (const std::string& a : out.autoKinds) autos.push_back(jsonString(a));
  top.field("kernel_auto", jsonArray(autos));
  std::printf("%s\n", top.done().c_str());
}

void printTable(const CompareJob& job, const CompareOut& out) {
  printHeader(job, out);
  const int vega = vegaOf(job);
  const std::string spotName = job.tape.inputNames[job.spot], vegaName = vega >= 0 ? job.tape.inputNames[vega] : "-";
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> errors;
  for (const CompareRow& r : out.rows) {
    if (!r.error.empty()) errors.push_back(r.engine + " " + r.kernel + " (" + marketsLabel(r.markets) + "): " + r.error);
    cells.push_back(rowCells(job, r, vega));
  }
  std::printf("%s", table({"engine", "kernel", "segs", "mkts", "ms/ladder", "Mpath/s", "value", "d/d " + spotName, "d/d " + vegaName,
                           "same bits", "regs", "spill B", "compile s", "Greeks x Mpath/s", "plan"},
                          cells)
                        .c_str());
  std::printf("value and Greeks at %s = %s; 'same bits': every value, Greek and stderr of the ladder equals the\n"
              "engine's plain single-market kernel bit for bit ('value': the tangent kernel's values and their\n"
              "stderrs do; its Greeks are forward-mode sums, equal within rounding; it has no plan: segs '-').\n"
              "'Greeks x Mpath/s': the Greeks a path computes (every input; a tangent kernel's --wrt) times Mpath/s.\n",
              spotName.c_str(), num(job.ladder[job.center][job.spot]).c_str());
  for (const EngineConfig& e : out.engineConfigs)
    std::printf("config %s: %s%s; from %s\n", e.engine.c_str(), e.config.c_str(),
                e.tuned.empty() ? " (the engine's defaults)" : (" (tuned: " + e.tuned + ")").c_str(), e.provenance.c_str());
  for (const std::string& a : out.autoKinds) std::printf("kernel auto on %s\n", a.c_str());
  for (const std::string& e : errors) std::printf("error: %s\n", e.c_str());
  if (job.peerPath) printPeers(job, out);
}

}  // namespace tapelab::cli
