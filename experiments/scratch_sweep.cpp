// scratch_sweep: the article's Part eight, measured. For one tape (default the
// 252-step Asian, value + 5 Greeks, fp32, 1,000,000 paths) and each GPU engine
// asked for, it times the plain kernel, register checkpointing, and scratch
// checkpointing in both layouts (aos, soa) at a ladder of segment lengths, and
// writes one CSV row per kernel: ms (median of the timed runs after warm-up;
// ms_min and ms_max their spread, reps their count), Mpath/s, ratio to plain,
// registers and spill bytes, whether the kernel returned plain's bits exactly, and the
// tape that ran (its file name for --tape FILE, else asian-STEPS).
//
//   scratch_sweep [--engines cuda,opencl] [--paths N] [--steps N] [--seglens 24,48,...]
//                 [--reps N] [--segments N | --plan FILE] [--markets M] [--seed S] [--jobs N]
//                 [--out FILE.csv] [--quick]
//
// --plan FILE (tapelab plan --out, for the same tape): the register kernel runs
// that plan instead of window's at --segments; the scratch rows keep their
// uniform segment lengths.
//
// Kernels are compiled first, --jobs at a time (default: every core; NVRTC
// and the OpenCL compilers take seconds per long kernel), then timed one by
// one, so compilation never overlaps a timed run.
//
// An engine that cannot run here is reported on stderr with the reason; a
// compile-only engine (cuda without a driver) still compiles every kernel and
// reports its statistics with empty timings. --quick (CTest's smoke test)
// shrinks everything so PoCL finishes in seconds. Exit 0 on success, 1 when a
// kernel failed or differed from plain or a row could not be written, 2 on bad
// flags (an --out that is --tape or --plan, a directory, ...: refused before
// anything runs; util/files.h's OutputFile).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api/montecarlo.h"
#include "engine/tangent_chunks.h"
#include "experiments/experiment_csv.h"
#include "experiments/experiment_tape.h"
#include "api/registry.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "util/files.h"
#include "util/stats.h"
#include "util/threads.h"
#include "util/warmup.h"
#include "util/process.h"

using namespace tapelab;
using experiments::csvQuoted;

namespace {

struct Options {
  std::vector<std::string> engines;
  uint64_t paths = 0;
  int steps = 0;
  std::vector<int> segLens;
  int reps = 0;
  int warmupMs = -1;  // warm-up runs go on until this long has passed; -1: TimingWarmup's default
  int registerSegments = 0;  // register checkpointing: window strategy, this many segments
  int markets = 1;
  uint64_t seed = 0;
  unsigned jobs = 1;
  std::string out;
  std::vector<std::string> inputs;  // --tape and --plan: never overwritten by --out
  RunConfig knobs;  // --plan, --dump and the kernel and engine variables
  Tape tape;        // --tape FILE, else the Asian at --steps
};

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// An integer from 1 to `most`; beyond it bad input, never clamped (a silent choice: --jobs 100000 ran 256).
int positive(const std::string& text, const std::string& flag, int most) {
  int v = 0;
  try {
    v = parsePositiveInt(text, flag);
  } catch (const std::invalid_argument&) {
  }
  if (v < 1 || v > most)
    throw cli::UsageError(flag + ": expected an integer in 1.." + std::to_string(most) + ", got '" + text + "'");
  return v;
}

Options parse(const cli::Flags& f) {
  Options o;
  // A flag's text, or --quick's value (small enough for PoCL in seconds) for a flag not given.
  const bool quick = f.given("quick");
  auto text = [&](const std::string& name, const char* quickValue) {
    return quick && !f.given(name) ? std::string(quickValue) : *f.textOrDefault(name);
  };
  o.engines = splitList(*f.textOrDefault("engines"));
  o.paths = quick && !f.given("paths") ? 2048 : f.count("paths");
  if (o.paths == 0) throw cli::UsageError(f.label("paths") + ": expected a positive integer, got '0'");
  o.steps = positive(text("steps", "20"), "--steps", 100000);
  for (const auto& s : splitList(text("seglens", "24,100"))) o.segLens.push_back(positive(s, "--seglens", 1 << 30));
  o.reps = positive(text("reps", "2"), "--reps", 1000);
  if (const auto warmup = f.text("warmup-ms")) o.warmupMs = *warmup == "0" ? 0 : positive(*warmup, "--warmup-ms", 600000);
  o.registerSegments = f.positive("segments");
  o.markets = positive(*f.textOrDefault("markets"), "--markets", 8);
  o.seed = f.count("seed");
  o.jobs = static_cast<unsigned>(positive(*f.textOrDefault("jobs"), "--jobs", 256));
  o.out = f.text("out").value_or("");
  o.knobs = cli::runConfigFrom(f);
  o.tape = experiments::experimentTape(f, o.steps);
  o.inputs = {f.text("tape").value_or(""), o.knobs.planFile};
  if (!o.out.empty()) checkOutputFile(o.out, o.inputs);  // exit 2 before anything runs
  if (!o.knobs.planFile.empty() && f.given("segments")) throw cli::UsageError("--plan replaces --segments: give one of them");
  const std::vector<std::string>& fixed = o.knobs.userConfig.fields;  // the sweep sets layout row by row
  if (std::find(fixed.begin(), fixed.end(), "layout") != fixed.end())
    throw cli::UsageError(o.knobs.userConfig.what + ": layout is what scratch_sweep varies (scratch rows both, the "
                          "plain and register rows soa): give it no layout");
  if (o.engines.empty()) throw cli::UsageError("--engines: empty list");
  for (const std::string& e : o.engines) {
    try {
      findEngine(e);
    } catch (const std::exception& ex) {
      throw cli::UsageError(std::string("--engines: ") + ex.what());
    }
  }
  return o;
}

struct Row {
  std::string engine, kernel, layout, strategy;
  int segLen = 0, segments = 1, slots = 0;
  bool ran = false;
  double ms = 0, mpaths = 0, ratio = 0;
  double msMin = 0, msMax = 0;  // the spread of the timed runs (clocks that ramp show here)
  KernelStats stats;
  std::string exact = "n/a";  // yes / NO / n/a
  double price = 0, delta = 0;
  std::string note;
  std::string math, config;  // the kernel's configuration (engine/config.h), canonical text
};

std::string fmt(double v, const char* f = "%.17g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The input sets of the markets: the tape's defaults, a spot ladder 100, 101, ... where there is one.
std::vector<std::vector<double>> marketSets(const Tape& tape, int count) {
  std::vector<std::vector<double>> markets;
  for (int m = 0; m < count; ++m) {
    std::vector<double> in = tape.inputDefaults;
    if (const int k = experiments::ladderInput(tape); k >= 0)
      in[k] = in[k] != 0 ? in[k] * (1.0 + 0.01 * m) : 0.01 * m;
    markets.push_back(in);
  }
  return markets;
}

std::string csvLine(const Options& opt, const Tape& tape, const Row& r) {
  std::ostringstream csv;
  csv << r.engine << ',' << r.kernel << ',' << r.layout << ',' << r.strategy << ',' << r.segLen << ',' << r.segments
      << ',' << r.slots << ',' << opt.paths << ',' << opt.markets << ',' << (r.ran ? fmt(r.ms, "%.4f") : "") << ','
      << (r.ran ? fmt(r.msMin, "%.4f") : "") << ',' << (r.ran ? fmt(r.msMax, "%.4f") : "") << ','
      << (r.ran ? std::to_string(opt.reps) : "") << ',' << (r.ran ? fmt(r.mpaths, "%.3f") : "") << ',' << (r.ran ? fmt(r.ratio, "%.4f") : "") << ','
      << r.stats.registers << ',' << r.stats.spillBytes << ',' << r.stats.scratchBytes << ','
      << fmt(r.stats.compileSeconds, "%.3f") << ',' << (r.stats.cacheHit ? "yes" : "no") << ',' << r.exact << ','
      << (r.ran ? fmt(r.price) : "") << ',' << (r.ran ? fmt(r.delta) : "") << ',' << csvQuoted(r.stats.notes) << ','
      << csvQuoted(r.note) << ',' << r.math << ',' << csvQuoted(r.config) << ',' << csvQuoted(tape.name) << '\n';
  return csv.str();
}

struct Variant {
  KernelKind kind;
  ScratchLayout layout;
  int segLen;  // scratch: uniform segment length
};

// One engine's kernels: plain, register (window at --segments, or the --plan file's), and scratch in
// each layout at each segment length below the tape's size.
struct EngineSweep {
  const Options& opt;
  const Tape& tape;
  const std::vector<std::vector<double>>& markets;
  const std::optional<Plan>& filePlan;
  const std::string& engineName;
  const EngineCaps& caps;
  KernelConfig config;  // the engine's defaults and --config, before a kernel kind's own (kindConfigs)
  std::unique_ptr<Engine> engine;
  std::vector<Variant> variants;
  std::vector<KernelOptions> kopts;
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<std::string> errors;
  RunResult plainResult;
  double plainMs = 0;
  std::map<KernelKind, KernelConfig> kindConfigs;  // each kind's defaults and --config (engine/config.h)

  KernelOptions optionsOf(const Variant& v) const {
    KernelOptions ko;
    const auto kc = kindConfigs.find(v.kind);
    ko.config = kc == kindConfigs.end() ? config : kc->second;
    ko.dispatch = opt.knobs.dispatch;
    ko.dumpDir = opt.knobs.dumpDir;
    ko.precision = Precision::F32;
    ko.greeks = true;
    ko.kind = v.kind;
    ko.config.layout = v.layout;  // the field this sweep varies (over --config's)
    ko.markets = opt.markets;
    ko.sharedInputs = sharedInputsOf(markets, size_t(opt.markets));  // a spot ladder: all but spot, once
    PlanOptions po;
    if (v.kind == KernelKind::Plain) {
      ko.plan = plainPlan(tape);
    } else if (v.kind == KernelKind::Register && filePlan) {
      ko.plan = *filePlan;
    } else if (v.kind == KernelKind::Register) {
      po.segments = std::min(opt.registerSegments, tape.size());
      ko.plan = makeStrategyPlan("window", tape, po);
    } else {
      po.segLen = v.segLen;
      ko.plan = makeStrategyPlan("uniform", tape, po);
    }
    return ko;
  }

  // Options of every variant, then all compiled (in parallel); timed later, in order.
  void compileAll() {
    variants = {{KernelKind::Plain, ScratchLayout::SoA, 0}, {KernelKind::Register, ScratchLayout::SoA, 0}};
    for (ScratchLayout layout : {ScratchLayout::AoS, ScratchLayout::SoA})
      for (int len : opt.segLens)
        if (len < tape.size()) variants.push_back({KernelKind::Scratch, layout, len});
    for (const Variant& v : variants) kopts.push_back(optionsOf(v));
    kernels.resize(variants.size());
    errors.resize(variants.size());
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next.fetch_add(1)) < variants.size();) {
        const auto c0 = std::chrono::steady_clock::now();
        try {
          kernels[i] = compileKernel(*engine, tape, kopts[i]);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
        std::fprintf(stderr, "    compiled %s %s seglen %d in %.1f s%s\n", toString(variants[i].kind),
                     variants[i].kind == KernelKind::Scratch ? toString(variants[i].layout) : "", variants[i].segLen,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count(),
                     errors[i].empty() ? "" : " (failed)");
      }
    };
    runWorkers(static_cast<unsigned>(std::min<size_t>(opt.jobs, variants.size())), worker);  // util/threads.h
    std::fprintf(stderr, "    compiled %zu kernels in %.1f s (%u jobs)\n", variants.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), opt.jobs);
  }

  // --reps timed runs after a warm-up on another seed: their median and spread, the bits of the
  // repeats against the first and of the first against plain's. Returns false where bits differ.
  bool time(Row& row, Kernel& kernel, const Variant& v, TimingWarmup& warmup) {
    bool ok = true;
    warmup.run(caps.gpu, [&] { kernel.run(markets, opt.paths, opt.seed + 1); });  // on another seed
    std::vector<double> ms;
    RunResult first;
    for (int r = 0; r < opt.reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      RunResult res = kernel.run(markets, opt.paths, opt.seed);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (r == 0) {
        first = std::move(res);
      } else if (!bitsEqual(first, res)) {
        row.note += "repeat differs; ";
        ok = false;
      }
    }
    row.stats = kernel.stats();  // scratch bytes are known once it ran
    row.ran = true;
    warmup.busyUntilNow();
    row.ms = median(ms);
    row.msMin = *std::min_element(ms.begin(), ms.end());
    row.msMax = *std::max_element(ms.begin(), ms.end());
    row.mpaths = double(opt.paths) / (row.ms * 1e3);
    row.price = first.markets.at(0).value;
    row.delta = first.markets.at(0).greeks.at(0);
    if (v.kind == KernelKind::Plain) {
      plainResult = first;
      plainMs = row.ms;
      row.exact = "yes";
    } else {
      const bool same = bitsEqual(plainResult, first);
      row.exact = same ? "yes" : "NO";
      ok = ok && same;
    }
    row.ratio = row.ms > 0 ? plainMs / row.ms : 0;
    return ok;
  }

  // Variant vi's row; `failed` is set where it failed or its bits differ.
  Row rowOf(size_t vi, TimingWarmup& warmup, bool& failed) {
    const Variant& v = variants[vi];
    const KernelOptions& ko = kopts[vi];
    Row row;
    row.engine = engineName;
    row.math = toString(config.math);
    row.config = configText(ko.config, engineName);
    row.kernel = toString(v.kind);
    row.layout = v.kind == KernelKind::Scratch ? toString(v.layout) : "";
    row.strategy = ko.plan.strategy;
    row.segLen = v.segLen;
    row.segments = ko.plan.segments();
    row.slots = ko.plan.scratchSlots;
    try {
      if (!kernels[vi]) throw std::runtime_error(errors[vi]);
      row.stats = kernels[vi]->stats();
      if (caps.usable) {
        if (!time(row, *kernels[vi], v, warmup)) failed = true;
      } else {
        row.note += caps.reason;  // "compile-only: ..."
      }
    } catch (const std::exception& e) {
      row.note += std::string("FAILED: ") + e.what();
      failed = true;
    }
    kernels[vi].reset();  // frees its device buffers before the next one runs
    // OpenCL reports a kernel's private memory; on a GPU that is its spills and stack, on a CPU device
    // (PoCL) the work-item's locals, never spills: said as such, and no spill bytes in the CSV.
    const bool privateMemory = caps.cpuDevice && row.stats.spillBytes >= 0 && engineName == "opencl";
    if (privateMemory) {
      row.note += (row.note.empty() ? "" : "; ") + std::string("private memory ") +
                  std::to_string(row.stats.spillBytes) + " B/work-item (a CPU device's locals, not spills)";
      row.stats.spillBytes = -1;
    }
    return row;
  }
};

void printRow(const Row& row) {
  std::fprintf(stderr, "    %-8s %-3s seglen %4d segs %4d slots %4d  %10s ms %-19s %8s Mpath/s  x%-6s regs %4d spill %6lld  exact %s %s\n",
               row.kernel.c_str(), row.layout.c_str(), row.segLen, row.segments, row.slots,
               row.ran ? fmt(row.ms, "%.3f").c_str() : "-",
               row.ran ? ("(" + fmt(row.msMin, "%.3f") + ".." + fmt(row.msMax, "%.3f") + ")").c_str() : "", row.ran ? fmt(row.mpaths, "%.2f").c_str() : "-",
               row.ran ? fmt(row.ratio, "%.2f").c_str() : "-", row.stats.registers,
               static_cast<long long>(row.stats.spillBytes), row.exact.c_str(), row.note.c_str());
}

int sweep(const Options& opt) {
  const RunConfig& env = opt.knobs;
  const Tape tape = opt.tape;
  TimingWarmup warmup(opt.warmupMs);
  std::optional<Plan> filePlan;
  if (!env.planFile.empty()) filePlan = readPlanFile(env.planFile, tape);  // PlanFileError: FILE: field: reason
  const std::vector<std::vector<double>> markets = marketSets(tape, opt.markets);
  std::fprintf(stderr, "scratch_sweep: %s, %d nodes, %" PRIu64 " paths, %d market(s), fp32, value + %d Greeks, %d timed runs\n",
               tape.name.c_str(), tape.size(), opt.paths, opt.markets, tape.numInputs(), opt.reps);

  // CSV rows are written as each kernel finishes, so a run cut short by a time limit keeps what it
  // measured: to standard output, or to --out in place (util/files.h's OutputFile: never one of the
  // run's inputs, a directory or a block device; a failed write names the file and ends the run).
  std::unique_ptr<OutputFile> file;
  if (!opt.out.empty()) file = std::make_unique<OutputFile>(opt.out, opt.inputs);
  auto emit = [&](const std::string& text) {
    if (file) {
      file->write(text);
    } else {
      std::cout << text << std::flush;
      if (!std::cout) throw std::runtime_error("standard output: cannot write");
    }
  };
  // ms is the median of --reps timed runs; ms_min and ms_max their spread (papers/plot.py's error bars).
  emit("engine,kernel,layout,strategy,seglen,segments,slots,paths,markets,ms,ms_min,ms_max,reps,mpath_s,ratio_to_plain,registers,"
       "spill_bytes,scratch_bytes,compile_s,cache_hit,bit_exact_vs_plain,price,delta,kernel_stats,notes,math,config,tape\n");
  size_t rows = 0;
  bool failed = false;
  for (const std::string& engineName : opt.engines) {
    const EngineEntry* entry = &findEngine(engineName);  // names checked by parse()
    const EngineCaps caps = engineCaps(*entry, env.engineSettings);
    if (!caps.usable && !caps.compileOnly) {
      std::fprintf(stderr, "  %s: skipped: %s\n", engineName.c_str(), caps.reason.c_str());
      continue;
    }
    std::fprintf(stderr, "  %s: %s%s\n", engineName.c_str(), caps.compileOnly ? "compile only: " : "", caps.reason.c_str());
    RunConfig forEngine = env;
    forEngine.engine = engineName;
    EngineSweep e{opt, tape, markets, filePlan, engineName, caps,
                  resolveConfig(forEngine, caps, Precision::F32, opt.markets),  // its defaults, --config
                  entry->make(env.engineSettings), {}, {}, {}, {}, {}, 0, {}};
    for (const KernelKind kind : kKernelKinds)
      e.kindConfigs[kind] = resolveConfig(forEngine, caps, Precision::F32, opt.markets, toString(kind));
    e.compileAll();
    for (size_t vi = 0; vi < e.variants.size(); ++vi, ++rows) {
      const Row row = e.rowOf(vi, warmup, failed);
      printRow(row);
      emit(csvLine(opt, tape, row));
    }
  }

  if (file) {
    file->close();
    std::fprintf(stderr, "scratch_sweep: wrote %zu rows to %s\n", rows, file->name().c_str());
  }
  if (rows == 0) std::fprintf(stderr, "scratch_sweep: no engine could compile here\n");
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  tapelab::installStopHandlers();  // util/process.h: no temporary file survives a signal; ulimit -f is one line
  tapelab::guardRunInputs();       // util/files.h: no output replaces a file this run read
  CLI::App app("Times plain, register and scratch (aos, soa, each segment length) kernels of the Asian call\n"
               "(value + 5 Greeks, fp32) on each engine; CSV to --out or standard output, a summary on stderr.",
               "scratch_sweep");
  cli::useTapelabHelp(app);
  cli::Flags f(app);
  f.value("engines", "A,B,...", "engines to sweep", "cuda,opencl");
  f.knob("paths", "N", "1000000", "--quick: 2048");
  f.value("steps", "N", "time steps of the Asian call (--quick: 20)", "252");
  f.value("seglens", "L,...", "scratch kernels' uniform segment lengths (--quick: 24,100)", "24,48,100,200,300,400,600,800");
  f.value("reps", "N", "timed runs after one warm-up (--quick: 2)", "5");
  f.value("warmup-ms", "MS", "repeat the warm-up run (another seed) until this many ms have passed (default: " +
                                 std::to_string(TimingWarmup::kGpuMs) + " before the first kernel on a real GPU, whose clocks must "
                                 "climb, and after an idle gap; else one run)");
  f.value("segments", "N", "the register kernel: window strategy, this many segments", "16");
  f.knob("plan", "FILE", "", "the register kernel runs it instead of window at --segments");
  f.value("markets", "M", "markets per dispatch: a ladder 1% apart over spot (a --tape without spot: its first input)", "1");
  experiments::addTapeFlag(f);
  f.knob("seed", "S", "42");
  f.value("jobs", "N", "kernels compiled in parallel before timing", std::to_string(std::max(1u, std::thread::hardware_concurrency())));
  f.value("out", "FILE.csv", "write the CSV here instead of standard output");
  f.flag("quick", "CTest's smoke test: PoCL finishes in seconds (flags given win)");
  f.knob("dump", "DIR");
  f.knob("compile-timeout", "SECONDS", "900");
  f.knob("config", "NAME=VALUE,...", "", "over each engine's defaults (tapelab config --list); every row records it");
  return cli::runCommandLine(app, argc, argv, [&] { return sweep(parse(f)); });
}
