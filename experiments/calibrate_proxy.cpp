// How well the planner's register-pressure proxy predicts a compiler's
// registers and spills, without a GPU.
//
//   calibrate_proxy [--engine cuda] [--steps 252] [--markets 1,2,4,7,8]
//                   [--segments 8,16,24,32] [--strategies window,optimal,two-level,revolve]
//                   [--budgets 40,60,90] [--plan FILE] [--jobs N] [--out FILE.csv] [--quick]
//
// For every strategy x requested segment count (revolve: snapshots; budget:
// each --budgets value at the first --segments count) x markets per dispatch,
// the register kernel of the 252-step Asian (value + 5 Greeks, fp32) is
// compiled by the engine (cuda: NVRTC + ptxas for TAPELAB_CUDA_ARCH, default
// sm_90, compile-only without a driver) and its registers and spill (local
// memory: spills and call frames; and spill stores alone where the compiler
// says) bytes per thread are read from the compiler. One CSV row per kernel,
// with the plan's metrics (planner/metrics.h); then Spearman's rank correlation
// of peak_live x markets with registers and with spill bytes, over all rows and
// per market count, and the least-squares line registers ~ a + b * peak_live x
// markets over the rows that do not spill (what a register budget is derived from).
// --out gets each row as its kernel finishes (util/files.h's OutputFile: never the
// --plan file, a directory or a block device, refused before anything runs).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <sstream>
#include <numeric>
#include <thread>

#include "api/knobs.h"
#include "api/montecarlo.h"
#include "api/registry.h"
#include "engine/tangent_chunks.h"
#include "planner/metrics.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "util/files.h"
#include "util/threads.h"
#include "util/process.h"

using namespace tapelab;

namespace {

struct Job {
  std::string strategy;
  int requested = 0;
  int32_t budget = 0;
  int markets = 1;
  Plan plan;
  PlanMetrics metrics;
  int registers = -1;
  int64_t spill = -1, spillStores = -1;
  double compileSeconds = 0;
  bool cacheHit = false;
  std::string error;
};

// Average ranks (ties share their mean rank).
std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = 0.5 * double(i + j) + 1;
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = double(a.size());
  if (n < 2) return NAN;
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : NAN;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) { return pearson(ranks(a), ranks(b)); }

// The command line, with --quick's values for the flags not given.
struct Options {
  std::string engineName = "cuda", out, planFile;
  int steps = 252, jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> markets{1, 2, 4, 7, 8}, segments{8, 16, 24, 32}, budgets;
  std::vector<std::string> strategyNames{"window", "optimal", "two-level", "revolve"};
  uint64_t maxNodes = 0;
  bool quick = false;
};

constexpr int kGoOn = -1;  // a step's "no exit yet"

int parseOptions(int argc, char** argv, Options& o) {
  CLI::App app{"calibrate_proxy: the planner's peak_live against a compiler's registers and spills"};
  app.add_option("--engine", o.engineName, "engine whose compiler reports registers (cuda; hip)")->capture_default_str();
  app.add_option("--steps", o.steps, "Asian time steps")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--markets", o.markets, "markets per dispatch")->delimiter(',')->check(CLI::Range(1, 8));
  app.add_option("--segments", o.segments, "requested segment counts (revolve: snapshots)")->delimiter(',')->check(CLI::Range(1, 100000));
  app.add_option("--strategies", o.strategyNames, "cut strategies")->delimiter(',');
  app.add_option("--budgets", o.budgets, "budget strategy rows: peak_live limits")->delimiter(',')->check(CLI::Range(1, 100000));
  app.add_option("--plan", o.planFile, "also a plan file (tapelab plan --out) as one more strategy");
  app.add_option("--jobs", o.jobs, "kernels compiled at once")->check(CLI::Range(1, 256));
  app.add_option("--out", o.out, "CSV file");
  app.add_option("--max-nodes", o.maxNodes, "the most nodes the Asian may record (default: TAPELAB_MAX_NODES, else 2000000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_flag("--quick", o.quick, "a few small kernels (CI smoke test)");
  try {
    app.parse(argc, argv);
    for (const auto& s : o.strategyNames) findStrategy(s);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {  // one line, exit 2 (docs/cli.md), not CLI11's two lines and exit 105
    std::fprintf(stderr, "calibrate_proxy: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "calibrate_proxy: --strategies: %s\n", e.what());
    return 2;
  }
  // Refused before anything runs (exit 2): an --out that is the --plan file, a directory, ... (util/files.h).
  try {
    if (!o.out.empty()) checkOutputFile(o.out, {o.planFile});
  } catch (const OutputRefused& e) {
    std::fprintf(stderr, "calibrate_proxy: %s\n", e.what());
    return 2;
  }
  if (o.quick) {  // --quick's values for the flags not given: a flag given is never silently replaced
    if (!app.count("--steps")) o.steps = 24;
    if (!app.count("--markets")) o.markets = {1, 2};
    if (!app.count("--segments")) o.segments = {4};
    if (!app.count("--strategies")) o.strategyNames = {"window", "two-level"};
  }
  return kGoOn;
}

// The environment's configuration, the Asian and the engine's capabilities; an exit code where one fails.
int setUp(const Options& o, RunConfig& config, Tape& tape, EngineCaps& caps) {
  try {
    config = RunConfig::fromEnvironment();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "calibrate_proxy: %s\n", e.what());
    return 2;
  }
  try {  // the Asian at --steps (at most 100,000), its size checked against TAPELAB_MAX_NODES
    tape = products::byName("asian", {{"steps", o.steps}}, static_cast<double>(o.maxNodes ? o.maxNodes : config.maxNodes));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "calibrate_proxy: --steps: %s\n", e.what());
    return 2;
  }
  caps = engineCaps(findEngine(o.engineName), config.engineSettings);
  config.engine = o.engineName;
  try {
    resolveConfig(config, caps, Precision::F32);  // a bad TAPELAB_CONFIG is an error before any kernel
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "calibrate_proxy: %s\n", e.what());
    return 2;
  }
  if (!caps.usable && !caps.compileOnly) {
    std::fprintf(stderr, "calibrate_proxy: engine %s cannot compile here: %s\n", o.engineName.c_str(), caps.reason.c_str());
    return 3;
  }
  return kGoOn;
}

// Each strategy x segment count, each budget, the plan file: a kernel per market count. Throws on a bad plan.
std::vector<Job> plannedJobs(const Options& o, const Tape& tape) {
  std::vector<Job> work;
  auto add = [&](const std::string& strategy, int requested, int32_t budget, Plan plan) {
    const PlanMetrics m = planMetrics(tape, plan);
    for (int mk : o.markets) {
      Job j;
      j.strategy = strategy;
      j.requested = requested;
      j.budget = budget;
      j.markets = mk;
      j.plan = plan;
      j.metrics = m;
      work.push_back(j);
    }
  };
  for (const auto& s : o.strategyNames)
    for (int seg : o.segments) {
      PlanOptions po;
      po.segments = seg;
      add(s, seg, 0, makeStrategyPlan(s, tape, po));
    }
  for (int32_t b : o.budgets) {
    PlanOptions po;
    po.segments = o.segments.front();
    po.budget = b;
    add("budget", o.segments.front(), b, makeStrategyPlan("budget", tape, po));
  }
  if (!o.planFile.empty()) {
    const Plan p = readPlanFile(o.planFile, tape);
    add("file:" + p.strategy, p.segments(), 0, p);
  }
  return work;
}

// Compiles one job's kernel and reads the compiler's statistics into it (an error as one CSV field).
void compileJob(Job& j, Engine& engine, const Tape& tape, const RunConfig& config, const EngineCaps& caps) {
  try {
    KernelOptions o;
    o.precision = Precision::F32;
    o.kind = KernelKind::Register;
    o.plan = j.plan;
    o.markets = j.markets;
    o.config = resolveConfig(config, caps, Precision::F32, j.markets);  // the engine's defaults and TAPELAB_CONFIG
    o.dispatch = config.dispatch;
    o.dumpDir = config.dumpDir;
    const auto kernel = compileKernel(engine, tape, o);
    const KernelStats st = kernel->stats();
    j.registers = st.registers;
    j.spill = st.spillBytes;
    j.spillStores = st.spillStoreBytes;
    j.compileSeconds = st.compileSeconds;
    j.cacheHit = st.cacheHit;
  } catch (const std::exception& e) {
    j.error = e.what();
    for (char& c : j.error)  // one CSV field on one line
      if (c == '"' || c == '\n' || c == '\r') c = c == '"' ? '\'' : ' ';
  }
}

std::string csvRow(const Options& o, const EngineCaps& caps, const Job& j) {
  std::ostringstream row;
  row << o.engineName << ",\"" << caps.reason << "\"," << o.steps << ',' << j.strategy << ',' << j.requested << ','
      << j.budget << ',' << j.metrics.segments << ',' << j.metrics.depth << ',' << j.markets << ','
      << j.metrics.persistent << ',' << j.metrics.peakLive << ',' << j.metrics.peakLive * j.markets << ','
      << j.metrics.recomputeOps << ',' << j.metrics.recomputeCost << ',' << j.registers << ',' << j.spill << ','
      << j.spillStores << ',' << j.compileSeconds << ',' << (j.cacheHit ? 1 : 0) << ",\"" << j.error << "\"\n";
  return row.str();
}

// Compiles every job on --jobs threads. Rows are written as kernels finish (completion order), so a run
// cut short keeps what it compiled: in place, through util/files.h's OutputFile (its refusals; a failed
// write names the file and ends the run, exit 1).
int compileAll(const Options& o, std::vector<Job>& work, Engine& engine, const Tape& tape, const RunConfig& config,
               const EngineCaps& caps) {
  std::unique_ptr<OutputFile> csv;
  std::string writeError;  // the first failed write, from any worker
  try {
    if (!o.out.empty()) {
      csv = std::make_unique<OutputFile>(o.out, std::vector<std::string>{o.planFile});
      csv->write("engine,target,steps,strategy,requested,budget,segments,depth,markets,persistent,peak_live,"
                 "peak_live_x_markets,recompute_ops,recompute_cost,registers,local_bytes,spill_store_bytes,compile_s,"
                 "cache_hit,error\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "calibrate_proxy: %s\n", e.what());
    return dynamic_cast<const OutputRefused*>(&e) ? 2 : 1;
  }
  std::atomic<size_t> next{0}, done{0};
  std::mutex printing;
  auto worker = [&] {
    for (size_t k; (k = next.fetch_add(1)) < work.size();) {
      Job& j = work[k];
      compileJob(j, engine, tape, config, caps);
      std::lock_guard<std::mutex> lock(printing);
      if (csv && writeError.empty()) {
        try {
          csv->write(csvRow(o, caps, j));
        } catch (const std::exception& e) {
          writeError = e.what();
          next = work.size();  // no more kernels: their rows could not be kept
        }
      }
      std::fprintf(stderr, "[%zu/%zu] %s %d x%d: peak_live %d, %d registers, %lld B local, %lld B spill stores (%.1f s)%s\n", ++done,
                   work.size(), j.strategy.c_str(), j.requested, j.markets, j.metrics.peakLive, j.registers,
                   static_cast<long long>(j.spill), static_cast<long long>(j.spillStores), j.compileSeconds, j.error.empty() ? "" : (" ERROR " + j.error).c_str());
    }
  };
  runWorkers(static_cast<unsigned>(o.jobs), worker);  // util/threads.h: a thread refused is one fewer worker
  if (csv && writeError.empty()) {
    try {
      csv->close();
    } catch (const std::exception& e) {
      writeError = e.what();
    }
  }
  if (!writeError.empty()) {
    std::fprintf(stderr, "calibrate_proxy: %s\n", writeError.c_str());
    return 1;
  }
  return kGoOn;
}

// Rank correlations of one set of rows.
void report(const std::string& label, const std::vector<const Job*>& rows) {
  std::vector<double> proxy, regs, spill;
  for (const Job* j : rows)
    if (j->error.empty() && j->registers >= 0) {
      proxy.push_back(double(j->metrics.peakLive) * j->markets);
      regs.push_back(j->registers);
      spill.push_back(double(j->spillStores >= 0 ? j->spillStores : j->spill));
    }
  std::printf("%-12s %4zu kernels  spearman(peak_live x markets, registers) %6.3f  (, spill bytes) %6.3f\n",
              label.c_str(), proxy.size(), spearman(proxy, regs), spearman(proxy, spill));
}

// The least-squares line registers ~ a + b * peak_live x markets over the rows that do not spill.
void noSpillLine(const std::vector<Job>& work) {
  std::vector<double> x, y;
  for (const Job& j : work)
    if (j.error.empty() && (j.spillStores >= 0 ? j.spillStores : j.spill) == 0 && j.registers > 0) {
      x.push_back(double(j.metrics.peakLive) * j.markets);
      y.push_back(j.registers);
    }
  if (x.size() < 2) return;
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / double(x.size());
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / double(y.size());
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  const double b = sxx > 0 ? sxy / sxx : NAN, a = my - b * mx;
  std::printf("no-spill rows: registers ~ %.1f + %.3f * peak_live x markets (%zu kernels, pearson %.3f)\n", a, b,
              x.size(), pearson(x, y));
}

}  // namespace

int main(int argc, char** argv) {
  tapelab::installStopHandlers();  // util/process.h: no temporary file survives a signal; ulimit -f is one line
  tapelab::guardRunInputs();       // util/files.h: no output replaces a file this run read
  Options o;
  if (const int code = parseOptions(argc, argv, o); code != kGoOn) return code;
  RunConfig config;
  Tape tape;
  EngineCaps caps;
  if (const int code = setUp(o, config, tape, caps); code != kGoOn) return code;
  auto engine = findEngine(o.engineName).make(config.engineSettings);
  std::vector<Job> work;
  try {
    work = plannedJobs(o, tape);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "calibrate_proxy: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr, "calibrate_proxy: %zu kernels on %s (%s), %d at once\n", work.size(), o.engineName.c_str(),
               caps.reason.c_str(), o.jobs);
  if (const int code = compileAll(o, work, *engine, tape, config, caps); code != kGoOn) return code;
  std::vector<const Job*> all;
  for (const Job& j : work) all.push_back(&j);
  report("all", all);
  for (int mk : o.markets) {
    std::vector<const Job*> rows;
    for (const Job& j : work)
      if (j.markets == mk) rows.push_back(&j);
    report(std::to_string(mk) + " market" + (mk > 1 ? "s" : ""), rows);
  }
  noSpillLine(work);
  int errors = 0;
  for (const Job& j : work) errors += !j.error.empty();
  return errors ? 1 : 0;
}
