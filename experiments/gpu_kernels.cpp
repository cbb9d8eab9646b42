// Plain against checkpointed GPU kernels on one engine, the article's way:
// for each configuration, one kernel, a warm-up call on another seed, then a
// seven-point spot ladder (spots 85..115), three ladders, median. Also the
// register kernel with the opaque identity switched off (config opaque=off),
// to show whether the shader compiler merges the recomputation without it.
//
//   gpu_kernels [--engine vulkan] [--steps 252] [--paths 1000000,4000000]
//               [--markets 1,4] [--greeks on,off] [--segments 16[,8,...] | --plan FILE]
//               [--kinds plain,register,register-noopq,tangent] [--reps 3]
//               [--config NAME=VALUE,...] [--out FILE.csv] [--quick]
//
// --plan FILE (tapelab plan --out, for the same tape): the register kernels
// run that plan instead of window's at each --segments count.
//
// Prints one row per configuration: compile seconds, cache hit, registers and
// spills where the driver reports them, ms per ladder, Mpath/s (7 x paths per
// second), price/delta/vega at spot 100 with 17 digits (vega empty for a tape
// without a `vol` input), and whether the bits equal the plain kernel's; the CSV
// names the tape in its last column. CSV with --out, written whole at the end (through
// util/files.h's writeOutputFile: never over --tape or --plan, refused before
// anything runs).
//
// On a compile-only engine (cuda where NVRTC is installed but no driver, hip
// where hipcc is) every kernel is compiled and only its statistics are printed
// (ptxas registers and spills for sm_90, or TAPELAB_CUDA_ARCH; for hip, VGPRs,
// SGPRs, scratch bytes and waves per SIMD of each TAPELAB_HIP_ARCH target in
// the notes line, the first target's VGPRs and scratch in the columns): the
// register map of markets x segments, without a GPU.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "api/montecarlo.h"
#include "engine/tangent_chunks.h"
#include "experiments/experiment_csv.h"
#include "experiments/experiment_tape.h"
#include "api/registry.h"
#include "cli/options.h"
#include "engine/config.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "util/files.h"
#include "util/stats.h"
#include "util/process.h"

using namespace tapelab;
using experiments::csvQuoted;
using experiments::g17;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// g17, or `none` for NaN (a vega the tape does not have).
std::string orEmpty(double v, const char* none) { return std::isnan(v) ? none : g17(v); }

int positive(const std::string& text, const std::string& flag) {
  try {
    return parsePositiveInt(text, flag);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
}

// A comma list of positive integers, or of words in `allowed`; UsageError naming the flag otherwise.
std::vector<std::string> list(const std::string& text, const std::string& flag,
                              const std::vector<std::string>& allowed = {}) {
  const std::vector<std::string> out = split(text);
  if (out.empty()) throw cli::UsageError(flag + ": empty list");
  for (const std::string& v : out) {
    if (allowed.empty()) positive(v, flag);
    else if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
      throw cli::UsageError(flag + ": unknown '" + v + "'");
  }
  return out;
}

struct Row {
  std::string kind;
  int segments = 1;
  uint64_t paths;
  int markets;
  bool greeks;
  double compileS = 0;
  bool cacheHit = false;
  int registers = -1;
  int64_t spill = -1;
  double msPerLadder = 0, mpaths = 0;
  double price = 0, delta = 0, vega = 0;
  std::string identical = "-";
};

// The ladder in groups of M markets (the last group padded with its last spot).
std::vector<std::vector<std::vector<double>>> ladderGroups(const Tape& tape, const std::vector<double>& spots, int spotIndex,
                                                          int markets) {
  std::vector<std::vector<std::vector<double>>> groups;
  for (size_t s = 0; s < spots.size(); s += markets) {
    std::vector<std::vector<double>> g;
    for (int m = 0; m < markets; ++m) {
      std::vector<double> in = tape.inputDefaults;
      in[spotIndex] = spots[std::min(spots.size() - 1, s + m)];
      g.push_back(in);
    }
    groups.push_back(g);
  }
  return groups;
}

// A warm-up ladder on another seed, then `reps` timed ladders: the median into the row; returns the
// result at the ladder's fourth point (spot 100).
MarketResult timeLadders(Kernel& k, const std::vector<std::vector<std::vector<double>>>& groups, int reps, Row& row) {
  k.run(groups[0], row.paths, 7);  // warm-up, another seed
  std::vector<double> times;
  RunResult at100;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      RunResult res = k.run(groups[gi], row.paths, 42);
      const size_t first = gi * row.markets;
      if (first <= 3 && 3 < first + row.markets) {
        at100 = res;
        at100.markets = {res.markets[3 - first]};
      }
    }
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double med = median(times);
  row.msPerLadder = med * 1e3;
  row.mpaths = 7.0 * static_cast<double>(row.paths) / med / 1e6;
  return at100.markets.at(0);
}

std::string csvText(const std::vector<Row>& rows, const std::string& engineName, const std::string& steps, bool compileOnly,
                    const Tape& tape) {
  std::ostringstream f;
  f << "engine,steps,segments,kind,paths,markets,greeks,compile_s,cache_hit,registers,spill_bytes,ms_per_ladder,"
       "mpaths_per_s,price,delta,vega,identical_to_plain,tape\n";
  for (const Row& r : rows) {
    f << engineName << ',' << steps << ',' << r.segments << ',' << r.kind << ',';
    if (compileOnly) f << ',';  // nothing ran: no paths, times or results
    else f << r.paths << ',';
    f << r.markets << ',' << (r.greeks ? "on" : "off") << ',' << r.compileS << ',' << (r.cacheHit ? 1 : 0) << ','
      << r.registers << ',' << r.spill << ',';
    if (compileOnly) f << ",,,,,";
    else f << r.msPerLadder << ',' << r.mpaths << ',' << g17(r.price) << ',' << g17(r.delta) << ',' << orEmpty(r.vega, "") << ',';
    f << r.identical << ',' << csvQuoted(tape.name) << '\n';
  }
  return f.str();
}

// One row's kernel: the engine's defaults and --config, window cuts at `segs` (or the --plan file's).
KernelOptions kernelOptions(const RunConfig& env, const EngineCaps& caps, const Tape& tape, const std::optional<Plan>& filePlan,
                            const std::string& kind, int segs, int markets, bool greeks, int spotIndex) {
  KernelOptions o;
  o.dispatch = env.dispatch;
  o.dumpDir = env.dumpDir;
  o.precision = Precision::F32;
  o.greeks = greeks;
  o.markets = markets;
  o.kind = kind == "plain" ? KernelKind::Plain : kind == "tangent" ? KernelKind::Tangent : KernelKind::Register;
  o.config = resolveConfig(env, caps, Precision::F32, o.markets, toString(o.kind));  // the kind's defaults and --config
  if (o.kind == KernelKind::Register) {
    PlanOptions po;
    po.segments = segs;
    o.plan = filePlan ? *filePlan : makeStrategyPlan("window", tape, po);
  }
  if (kind == "register-noopq") o.config.opaque = false;
  // A spot ladder: the other inputs are every market's (config shared_inputs computes them once).
  for (int k = 0; k < tape.numInputs() && o.markets > 1; ++k)
    if (k != spotIndex) o.sharedInputs.push_back(k);
  return o;
}

// One row on standard output as it is measured.
void printRow(const Row& row, bool compileOnly) {
  const char* gs = row.greeks ? "on" : "off";
  if (compileOnly)
    std::printf("%-15s %4d %9s %3d %6s %9.3f %5s %5d %8lld %10s %9s  (compile only)\n", row.kind.c_str(),
                row.segments, "-", row.markets, gs, row.compileS, row.cacheHit ? "hit" : "miss",
                row.registers, static_cast<long long>(row.spill), "-", "-");
  else
    std::printf("%-15s %4d %9llu %3d %6s %9.3f %5s %5d %8lld %10.2f %9.2f  %-20s %-20s %-20s %s\n",
                row.kind.c_str(), row.segments, static_cast<unsigned long long>(row.paths), row.markets, gs,
                row.compileS, row.cacheHit ? "hit" : "miss", row.registers, static_cast<long long>(row.spill),
                row.msPerLadder, row.mpaths, g17(row.price).c_str(), g17(row.delta).c_str(),
                orEmpty(row.vega, "-").c_str(), row.identical.c_str());
  std::fflush(stdout);
}

int run(const cli::Flags& f) {
  // A flag's text, or --quick's value for a flag not given.
  const bool quick = f.given("quick");
  auto text = [&](const std::string& name, const char* quickValue) {
    return quick && !f.given(name) ? std::string(quickValue) : *f.textOrDefault(name);
  };
  const int steps = positive(text("steps", "24"), "--steps");
  const int reps = positive(text("reps", "1"), "--reps");
  std::vector<std::string> paths = list(text("paths", "4000"), "--paths");
  const std::vector<std::string> markets = list(text("markets", "1,2"), "--markets");
  for (const std::string& m : markets)  // bad input (exit 2), not a kernel that fails to build (exit 1)
    if (positive(m, "--markets") > 8) throw cli::UsageError("--markets: expected markets per dispatch in 1..8, got '" + m + "'");
  const std::vector<std::string> greeks = list(text("greeks", "on"), "--greeks", {"on", "off"});
  std::vector<int> segmentList;
  for (const std::string& v : list(text("segments", "4"), "--segments")) segmentList.push_back(std::stoi(v));
  const std::vector<std::string> kinds =
      list(*f.textOrDefault("kinds"), "--kinds", {"plain", "register", "register-noopq", "tangent"});
  const std::string out = f.text("out").value_or("");

  // The engine, --plan and --dump from flags or TAPELAB_* variables; kernel knobs and engine settings
  // from the variables (api/knobs.h).
  const RunConfig env = cli::runConfigFrom(f);
  const std::string engineName = env.engine;
  const Tape tape = experiments::experimentTape(f, steps);
  const bool userTape = f.given("tape");  // the CSV's steps column is the Asian's: empty for a --tape
  std::optional<Plan> filePlan;
  if (!env.planFile.empty()) {
    if (f.given("segments")) throw cli::UsageError("--plan replaces --segments: give one of them");
    filePlan = readPlanFile(env.planFile, tape);  // PlanFileError: FILE: field: reason
    if (filePlan->segments() < 2) throw cli::UsageError(env.planFile + ": one segment: the register kernels need cuts");
    segmentList = {filePlan->segments()};
  }
  // --out is written whole at the end (util/files.h's writeOutputFile); what it would refuse, it refuses now.
  const std::vector<std::string> inputs = {f.text("tape").value_or(""), env.planFile};
  if (!out.empty()) checkOutputFile(out, inputs);
  const EngineEntry& entry = findEngine(engineName);
  const EngineCaps caps = engineCaps(entry, env.engineSettings);
  // A bad --config is an error before any kernel; the first market count's configuration is said.
  std::printf("# config %s (each kind's own defaults over it: tapelab config --kernel KIND)\n",
              configText(resolveConfig(env, caps, Precision::F32, std::stoi(markets.front())), engineName).c_str());
  const bool compileOnly = !caps.usable && caps.compileOnly;
  if (!caps.usable && !compileOnly) {
    std::fprintf(stderr, "gpu_kernels: %s unavailable: %s\n", engineName.c_str(), caps.reason.c_str());
    return 3;
  }
  if (compileOnly) {
    paths = {"0"};  // one row per kernel, nothing timed
    std::printf("# %s is compile-only here: kernel statistics only, no timing\n", engineName.c_str());
  }
  std::printf("# engine %s: %s\n", engineName.c_str(), caps.reason.c_str());
  std::printf("# tape %s: %d nodes; register kernels cut by %s\n", tape.name.c_str(), tape.size(),
              filePlan ? ("the plan in " + env.planFile).c_str() : "strategy window");
  const int spotIndex = experiments::ladderInput(tape), volIndex = tape.inputIndex("vol");
  if (spotIndex < 0) throw cli::UsageError("--tape: a tape without inputs has nothing to ladder over");
  // The seven-point ladder: 85..115 around the Asian's spot of 100, i.e. the input's value x 0.85..1.15.
  std::vector<double> spots;
  for (double pct : {85, 90, 95, 100, 105, 110, 115}) spots.push_back(tape.inputDefaults[spotIndex] * pct / 100);

  std::vector<Row> rows;
  std::map<std::string, MarketResult> plainBits;  // config -> the plain kernel's result at spot 100
  std::printf("%-15s %4s %9s %3s %6s %9s %5s %5s %8s %10s %9s  %-20s %-20s %-20s %s\n", "kind", "segs", "paths", "M", "greeks",
              "compile_s", "cache", "regs", "spill", "ms/ladder", "Mpath/s", "price", "delta", "vega", "==plain");
  for (const std::string& ms : markets)
    for (const std::string& gs : greeks)
      for (const std::string& kind : kinds)
        for (int segs : segmentList) {
          if ((kind == "plain" || kind == "tangent") && segs != segmentList.front()) continue;  // no segments
          const KernelOptions o = kernelOptions(env, caps, tape, filePlan, kind, segs, std::stoi(ms), gs == "on", spotIndex);
          std::unique_ptr<Kernel> k;
          double compileS = 0;
          try {
            const auto t0 = std::chrono::steady_clock::now();
            k = compileKernel(*entry.make(env.engineSettings), tape, o);
            compileS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          } catch (const std::exception& e) {
            std::fprintf(stderr, "gpu_kernels: %s compile failed: %s\n", kind.c_str(), e.what());
            return 1;
          }
          const KernelStats st = k->stats();
          if (!st.notes.empty()) std::printf("    %s, %s markets, greeks %s, %d segments: %s\n", kind.c_str(), ms.c_str(),
                                             gs.c_str(), o.kind == KernelKind::Register ? segs : 1, st.notes.c_str());
          for (const std::string& ps : paths) {
            Row row;
            row.kind = kind;
            row.segments = o.kind == KernelKind::Register ? segs : 1;
            row.paths = std::stoull(ps);
            row.markets = o.markets;
            row.greeks = o.greeks;
            row.compileS = compileS;
            row.cacheHit = st.cacheHit;
            row.registers = st.registers;
            row.spill = st.spillBytes;
            if (compileOnly) {
              printRow(row, true);
              rows.push_back(row);
              continue;
            }
            const MarketResult mr = timeLadders(*k, ladderGroups(tape, spots, spotIndex, row.markets), reps, row);
            row.price = mr.value;
            row.delta = mr.greeks.at(spotIndex);
            row.vega = volIndex >= 0 ? mr.greeks.at(volIndex) : std::nan("");  // a --tape without vol: no vega
            const std::string config = ps + "/" + ms + "/" + gs;
            if (kind == "plain") plainBits[config] = mr;
            else if (plainBits.count(config) && o.kind == KernelKind::Tangent)  // its values are plain's bits
              row.identical = bitsEqual(plainBits[config].value, mr.value) ? "value" : "NO";
            else if (plainBits.count(config)) row.identical = bitsEqual(plainBits[config], mr) ? "yes" : "NO";
            printRow(row, false);
            rows.push_back(row);
          }
        }
  if (!out.empty())  // a failed write: "--out FILE: cannot write: reason", exit 1
    writeOutputFile(out, csvText(rows, engineName, userTape ? "" : std::to_string(steps), compileOnly, tape), inputs);
  for (const Row& r : rows)
    if (r.identical == "NO") {
      std::fprintf(stderr, "gpu_kernels: %s differs from plain (%llu paths, %d markets)\n", r.kind.c_str(),
                   static_cast<unsigned long long>(r.paths), r.markets);
      return 1;
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tapelab::installStopHandlers();  // util/process.h: no temporary file survives a signal; ulimit -f is one line
  tapelab::guardRunInputs();       // util/files.h: no output replaces a file this run read
  CLI::App app("Plain against checkpointed GPU kernels on one engine, the article's way: one kernel per\n"
               "configuration, a warm-up call, then a seven-point spot ladder, median of --reps ladders.",
               "gpu_kernels");
  cli::useTapelabHelp(app);
  cli::Flags f(app);
  f.knob("engine", "NAME", "vulkan");
  f.value("steps", "N", "time steps of the Asian call", "252");
  experiments::addTapeFlag(f);
  f.value("paths", "N,...", "paths per call, one row each", "1000000,4000000");
  f.value("markets", "M,...", "markets per dispatch", "1,4");
  f.value("greeks", "on|off,...", "value and Greeks, or the value only", "on,off");
  f.value("segments", "S,...", "segment counts of the register kernels (window strategy)", "16");
  f.knob("plan", "FILE", "", "the register kernels run it instead of window at --segments");
  f.value("kinds", "K,...", "plain, register, register-noopq (register without the opaque identity), tangent (its values "
          "checked against plain's bits)",
          "plain,register,register-noopq");
  f.value("reps", "N", "timed ladders; the median is reported", "3");
  f.value("out", "FILE.csv", "write the rows as CSV");
  f.flag("quick", "CTest's smoke test: 24 steps, 4000 paths, markets 1,2, greeks on, 4 segments, 1 ladder "
                  "(flags given win)");
  f.knob("dump", "DIR");
  f.knob("compile-timeout", "SECONDS", "900");
  f.knob("config", "NAME=VALUE,...", "", "over each kernel kind's defaults (tapelab config --list), the fields given alike in every kernel");
  return cli::runCommandLine(app, argc, argv, [&] { return run(f); });
}
