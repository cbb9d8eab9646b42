// When does the checkpointed adjoint pay off? Vector forward mode (the tangent
// kernel kind: one tangent per input carried along the forward sweep, no
// reverse sweep) against the plain adjoint kernel and the register / scratch
// checkpointed adjoints, as the number of inputs grows: the basket call with
// 1..64 assets (Greeks with respect to every spot and vol: 2M inputs) and the
// Asian call (5 inputs), per engine; and the wide products (--products bucketed,
// localvol,hestonbasket,lmm), whose tangent kernel is timed at --wrt subsets of
// 1, 2, 4, ... and all inputs (the first k in input order) against their adjoint
// kernels, which give every Greek in one reverse sweep.
//
//   tangent_crossover [--engines cpu-jit,vulkan,opencl] [--paths N] [--assets 1,2,4,...]
//                     [--basket-steps N] [--asian-steps N] [--kinds plain,tangent,register,scratch]
//                     [--products basket,asian,bucketed,localvol,hestonbasket,lmm] [--wide-size quick|table|full]
//                     [--wrt-counts K,...]
//                     [--reps N] [--out FILE.csv] [--commit TEXT] [--quick]
//
// One CSV row per (engine, product, kind) as soon as it is measured (stdout, or
// --out; a comment line first names the machine, driver and commit), progress on
// stderr. Each row: Mpath/s (median of --reps timed calls after a warm-up call on
// another seed), compile seconds, registers and spills where the engine reports
// them, whether the value's bits equal the plain kernel's (every kind promises
// it), and the largest difference of a differentiated Greek from the plain
// kernel's in units of its standard error, and the kernel's configuration (math:
// its math contract; config: the canonical configuration text, engine/config.h).
// A compile-only engine (cuda without a
// driver) gets kernel statistics only. At the end, per engine and product, the
// crossover: the fewest inputs from which the best adjoint kernel (plain,
// register or scratch) beats the tangent kernel at every larger input count
// measured, beside the kind model's (planner/kind_model.h, the one `--kernel auto` uses:
// tangent against plain adjoint instructions a path at a CPU's issue rate, each row's
// predicted_tangent_over_adjoint).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdarg>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "api/montecarlo.h"
#include "api/registry.h"
#include "cli/options.h"
#include "engine/config.h"
#include "engine/tangent_chunks.h"
#include "experiments/experiment_csv.h"
#include "experiments/experiment_tape.h"
#include "planner/kind_model.h"
#include "tape/products/products.h"
#include "util/files.h"
#include "util/process.h"
#include "util/stats.h"

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

int positive(const std::string& text, const std::string& flag) {
  try {
    return parsePositiveInt(text, flag);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
}

// The commit this binary measures: --commit, else `git rev-parse` where the tree is a checkout.
std::string commitOf(const cli::Flags& f) {
  if (auto c = f.text("commit")) return *c;
  std::string out;
  if (FILE* p = popen("git rev-parse --short=12 HEAD 2>/dev/null", "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, p)) out = buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

std::string csvField(std::string s) {
  for (char& c : s)
    if (c == ',' || c == '\n' || c == '"') c = ';';
  return s;
}


// printf's formatting into a string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  va_list a, b;
  va_start(a, fmt);
  va_copy(b, a);
  const int n = std::vsnprintf(nullptr, 0, fmt, a);
  va_end(a);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, b);
  va_end(b);
  return out;
}

struct Case {
  std::string product;  // basket, asian, or a wide product (bucketed, localvol, hestonbasket, lmm)
  int assets = 0;       // basket only
  Tape tape;
  std::vector<std::string> wrt;  // the Greeks asked for (the tangent kernel's --wrt)
  // false: a --wrt subset of a wide product, its tangent kernel alone (the adjoint kernels compute every
  // Greek whatever the subset: they are timed once, with the whole set).
  bool adjoints = true;
  KindPrediction predicted;  // planner/kind_model.h: tangent against plain adjoint instructions for this wrt
};

struct Measured {
  bool ran = false;
  double mpaths = 0, ms = 0;
  RunResult result;
};

// A wide product at --wide-size: quick (CTest), table (the paper's: 64-100 inputs, a cpu-jit compile of
// tens of seconds for the full-wrt tangent kernel), full (the product's defaults: 43-256 inputs).
products::ProductParams wideParams(const std::string& product, const std::string& size) {
  using P = products::ProductParams;
  const bool quick = size == "quick", full = size == "full";
  if (product == "bucketed") return quick ? P{{"steps", 24}, {"buckets", 24}} : full ? P{} : P{{"steps", 64}, {"buckets", 64}};
  if (product == "localvol")
    return quick ? P{{"steps", 4}, {"strikes", 5}, {"times", 3}} : full ? P{} : P{{"steps", 16}, {"strikes", 10}, {"times", 6}};
  if (product == "hestonbasket")
    return quick ? P{{"assets", 3}, {"steps", 4}} : P{{"assets", full ? 5 : 4}, {"steps", full ? 252 : 16}};
  if (product == "lmm") return {{"forwards", quick ? 8 : full ? 80 : 20}};
  throw cli::UsageError("--products: unknown '" + product + "' (basket, asian, bucketed, localvol, hestonbasket, lmm)");
}

// Input counts a wide product's tangent kernel is timed at: --wrt-counts (those below its inputs), else
// 1, 2, 4, ...; and all of them, last.
std::vector<int> wrtCounts(int inputs, const std::vector<int>& asked) {
  std::vector<int> out;
  if (asked.empty())
    for (int k = 1; k < inputs; k *= 2) out.push_back(k);
  for (int k : asked)
    if (k < inputs) out.push_back(k);
  out.push_back(inputs);
  return out;
}

std::vector<Case> makeCases(const cli::Flags& f, const std::vector<std::string>& productList, const std::vector<int>& assets,
                            int basketSteps, int asianSteps, const std::string& wideSize) {
  std::vector<int> asked;
  if (auto v = f.text("wrt-counts"))
    for (const std::string& k : split(*v)) asked.push_back(positive(k, "--wrt-counts"));
  std::sort(asked.begin(), asked.end());
  std::vector<Case> cases;
  auto predicted = [](const Tape& t, const std::vector<std::string>& names) {
    std::vector<int> wrt;
    for (const std::string& n : names) wrt.push_back(t.inputIndex(n));
    std::sort(wrt.begin(), wrt.end());
    KindJob job;  // one market, the plain adjoint (nothing recomputed), a CPU engine's issue rate
    job.wrt = wrt;
    job.gpu = false;
    return predictKinds(t, job);
  };
  for (const std::string& product : productList) {
    if (product == "basket") {
      for (int m : assets) {
        Case c{"basket", m, experiments::experimentProduct(f, "basket", {{"assets", m}, {"steps", basketSteps}},
                                                            "--assets, --basket-steps"), {}, true, {}};
        for (int i = 1; i <= m; ++i) c.wrt.push_back("spot" + std::to_string(i));
        for (int i = 1; i <= m; ++i) c.wrt.push_back("vol" + std::to_string(i));
        c.predicted = predicted(c.tape, c.wrt);
        cases.push_back(std::move(c));
      }
    } else if (product == "asian") {
      Case c{"asian", 0, experiments::experimentProduct(f, "asian", {{"steps", asianSteps}}, "--asian-steps"),
             {"spot", "strike", "vol", "rate", "maturity"}, true, {}};
      c.predicted = predicted(c.tape, c.wrt);
      cases.push_back(std::move(c));
    } else {
      const Tape t = experiments::experimentProduct(f, product, wideParams(product, wideSize), "--products, --wide-size");
      const std::vector<int> counts = wrtCounts(t.numInputs(), asked);
      for (int k : counts) {  // the whole set last: its row times the adjoint kernels too
        Case c{product, 0, t, {}, true, {}};
        c.wrt.assign(t.inputNames.begin(), t.inputNames.begin() + k);
        c.adjoints = k == t.numInputs();
        c.predicted = predicted(t, c.wrt);
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

// Compiles `c`'s kernel of `kind` on the engine and times it (unless compile-only): (options, stats, timing).
struct Timed {
  KernelOptions options;
  KernelStats stats;
  double compileS = 0;
  Measured m;
};
Timed timeKernel(const EngineEntry& entry, const EngineCaps& caps, const RunConfig& rc, const Case& c, uint64_t paths,
                 int reps, bool compileOnly) {
  Timed t;
  // The engine itself rather than MonteCarlo: a compile-only engine still reports its kernels.
  t.options = resolveKernel(c.tape, rc, caps);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Kernel> kernel = compileKernel(*entry.make(rc.engineSettings), c.tape, t.options);
  t.compileS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.stats = kernel->stats();
  if (compileOnly) return t;
  kernel->run({c.tape.inputDefaults}, std::min<uint64_t>(paths, 4096), 7);  // warm-up, another seed
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    t.m.result = kernel->run({c.tape.inputDefaults}, paths, 42);
    times.push_back(t.m.result.seconds);
  }
  const double med = median(times);
  t.m.ran = true;
  t.m.ms = med * 1e3;
  t.m.mpaths = static_cast<double>(paths) / med / 1e6;
  return t;
}

// Whether the value's bits equal the plain kernel's ("yes", "NO"; "-" when either did not run), and the
// largest difference of a differentiated Greek from plain's in its standard errors (a NaN Greek shows).
std::pair<std::string, std::string> againstPlain(const Case& c, const Measured& m, const Measured& plain) {
  if (!m.ran || !plain.ran) return {"-", "-"};
  const MarketResult &x = m.result.markets.at(0), &p = plain.result.markets.at(0);
  double worst = 0;
  for (const std::string& name : c.wrt) {
    const int k = c.tape.inputIndex(name);
    const double d = std::fabs(x.greeks[k] - p.greeks[k]) / std::max(p.greeksStderr[k], 1e-300);
    worst = std::isnan(d) || std::isnan(worst) ? std::nan("") : std::max(worst, d);
  }
  return {bitsEqual(x.value, p.value) ? "yes" : "NO", g17(worst)};
}

// Whether `kind` is one the engine compiles.
bool engineHas(const EngineCaps& caps, KernelKind kind) {
  return std::find(caps.kinds.begin(), caps.kinds.end(), kind) != caps.kinds.end();
}

// Per (engine, product): input count -> (tangent Mpath/s, best adjoint Mpath/s, predicted tangent/adjoint).
struct Point {
  double tangent = 0, adjoint = 0, predicted = 0;
};
using Speeds = std::map<std::pair<std::string, std::string>, std::map<int, Point>>;

// The basket's points are its assets; a wide product's are its --wrt subsets, whose adjoint is the whole set's.
void record(Speeds& speeds, const std::string& engine, const Case& c, double tangentSpeed, double bestAdjoint) {
  const std::string key = c.product == "basket" || c.product == "asian" ? "basket+asian" : c.product;
  Point& p = speeds[{engine, key}][c.assets ? 2 * c.assets : static_cast<int>(c.wrt.size())];
  p.tangent = tangentSpeed;
  p.predicted = c.predicted.tangentTime() / c.predicted.adjointTime();
  if (bestAdjoint <= 0) return;
  p.adjoint = bestAdjoint;
  if (key != "basket+asian")
    for (auto& [k, q] : speeds[{engine, key}]) q.adjoint = bestAdjoint;
}

// The fewest inputs from which `better(point)` holds at every larger count measured; -1 when never.
template <class F>
int crossoverOf(const std::map<int, Point>& byInputs, F better) {
  int crossover = -1;
  for (auto it = byInputs.rbegin(); it != byInputs.rend() && better(it->second); ++it) crossover = it->first;
  return crossover;
}

void reportCrossovers(const Speeds& speeds) {
  for (const auto& [key, points] : speeds) {
    std::map<int, Point> measured;
    for (const auto& [k, p] : points)
      if (p.tangent > 0 && p.adjoint > 0) measured[k] = p;
    const int seen = crossoverOf(measured, [](const Point& p) { return p.adjoint > p.tangent; });
    const int predicted = crossoverOf(points, [](const Point& p) { return p.predicted > 1; });
    std::fprintf(stderr, "tangent_crossover: %s %s: measured %s; the kind model (planner/kind_model.h) predicts %s\n",
                 key.first.c_str(), key.second.c_str(),
                 seen < 0 ? "the tangent kernel faster at every input count" : format("an adjoint faster from %d inputs", seen).c_str(),
                 predicted < 0 ? "the tangent kernel cheaper at every count" : format("from %d inputs", predicted).c_str());
  }
}

int run(const cli::Flags& f) {
  const bool quick = f.given("quick");
  auto text = [&](const std::string& name, const char* quickValue) {
    return quick && !f.given(name) ? std::string(quickValue) : *f.textOrDefault(name);
  };
  const uint64_t paths = static_cast<uint64_t>(positive(text("paths", "16384"), "--paths"));
  const int reps = positive(text("reps", "3"), "--reps");
  const int basketSteps = positive(text("basket-steps", "1"), "--basket-steps");
  const int asianSteps = positive(text("asian-steps", "24"), "--asian-steps");
  const std::string wideSize = text("wide-size", "quick");
  if (wideSize != "quick" && wideSize != "table" && wideSize != "full")
    throw cli::UsageError("--wide-size: expected quick, table or full, got '" + wideSize + "'");
  std::vector<int> assets;
  for (const std::string& a : split(text("assets", "1,2,4,8"))) assets.push_back(positive(a, "--assets"));
  const std::vector<std::string> kinds = split(*f.textOrDefault("kinds"));
  for (const std::string& k : kinds)
    if (k != "plain" && k != "tangent" && k != "register" && k != "scratch")
      throw cli::UsageError("--kinds: unknown '" + k + "' (plain, tangent, register, scratch)");
  const RunConfig env = cli::runConfigFrom(f);
  std::vector<std::string> engines = split(text("engines", "cpu-jit,vulkan,opencl"));
  if (engines.empty()) throw cli::UsageError("--engines: empty list");
  const std::vector<Case> cases = makeCases(f, split(*f.textOrDefault("products")), assets, basketSteps, asianSteps, wideSize);

  // Rows as they are measured: to standard output, or to --out in place (util/files.h's OutputFile:
  // never the --plan file, a directory or a block device, refused before anything runs; a failed
  // write names the file and ends the run, exit 1).
  std::unique_ptr<OutputFile> file;
  if (auto path = f.text("out")) file = std::make_unique<OutputFile>(*path, std::vector<std::string>{env.planFile});
  auto emit = [&](const std::string& line) {
    if (file) {
      file->write(line);
    } else if (std::fputs(line.c_str(), stdout) < 0 || std::fflush(stdout) != 0) {
      throw std::runtime_error("standard output: cannot write");
    }
  };
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  const std::string machine = csvField(host), commit = csvField(commitOf(f));
  emit(format("# tangent_crossover machine=%s commit=%s paths=%llu basket_steps=%d asian_steps=%d wide_size=%s reps=%d\n",
              machine.c_str(), commit.c_str(), static_cast<unsigned long long>(paths), basketSteps, asianSteps,
              wideSize.c_str(), reps));
  // math and config: each kernel's configuration (engine/config.h), the canonical text, on every row; greeks and
  // mgreek_paths_per_s: the Greeks a path computes and Greeks x Mpath/s; predicted_tangent_over_adjoint: the cost
  // model's time ratio for this row's input count (planner/kind_model.h; > 1: the adjoint predicted faster).
  emit("machine,driver,commit,engine,device,product,assets,inputs,nodes,kind,segments,precision,paths,"
       "compile_s,registers,spill_bytes,ms,mpaths_per_s,value,value_bits_equal_plain,"
       "max_greek_dev_stderr,math,config,greeks,mgreek_paths_per_s,source_bytes,predicted_tangent_over_adjoint\n");

  Speeds speeds;
  for (const std::string& engine : engines) {
    const EngineEntry& entry = findEngine(engine);
    const EngineCaps caps = engineCaps(entry, env.engineSettings);
    const bool compileOnly = !caps.usable && caps.compileOnly;
    if (!caps.usable && !compileOnly) {
      std::fprintf(stderr, "tangent_crossover: %s skipped: %s\n", engine.c_str(), caps.reason.c_str());
      continue;
    }
    const Precision precision = env.precision.value_or(caps.fp32 ? Precision::F32 : caps.defaultPrecision);
    for (const Case& c : cases) {
      Measured plain;
      double tangentSpeed = 0, bestAdjoint = 0;
      const int inputs = static_cast<int>(c.wrt.size());
      for (const std::string& kind : kinds) {
        RunConfig rc = env;
        rc.engine = engine;
        rc.precision = precision;
        rc.kernel = parseKernelKind(kind, "--kinds");
        if (!engineHas(caps, *rc.kernel) || (!c.adjoints && kind != "tangent")) continue;
        rc.checkpoint = kind == "plain" || kind == "tangent" ? Checkpoint::off()
                        : kind == "scratch"                  ? Checkpoint::automatic()
                                                             : Checkpoint::count(std::min(16, c.tape.size()));
        if (kind == "tangent") rc.wrt = c.wrt;
        std::fprintf(stderr, "tangent_crossover: %s %s%s %s (%d inputs): compiling\n", engine.c_str(), c.product.c_str(),
                     c.assets ? ("-" + std::to_string(c.assets)).c_str() : "", kind.c_str(), inputs);
        Timed t;
        try {
          t = timeKernel(entry, caps, rc, c, paths, reps, compileOnly);
        } catch (const std::invalid_argument& e) {  // a kernel over --max-nodes (a tangent kernel's terms): no row
          std::fprintf(stderr, "tangent_crossover: %s %s %s (%d inputs) skipped: %s\n", engine.c_str(), c.product.c_str(),
                       kind.c_str(), inputs, e.what());
          continue;
        }
        const Measured& m = t.m;
        if (kind == "plain") plain = m;
        const auto [equal, dev] = againstPlain(c, m, plain);
        if (m.ran && kind == "tangent") tangentSpeed = m.mpaths;
        if (m.ran && kind != "tangent") bestAdjoint = std::max(bestAdjoint, m.mpaths);
        const int greeks = kind == "tangent" ? inputs : c.tape.numInputs();
        emit(format("%s,tangent_crossover,%s,%s,%s,%s,%d,%d,%d,%s,%s,%s,%llu,%.3f,%d,%lld,%s,%s,%s,%s,%s,%s,%s,%d,%s,%lld,%.6g\n",
                    machine.c_str(), commit.c_str(), engine.c_str(), csvField(caps.reason).c_str(), c.product.c_str(),
                    c.assets, inputs, c.tape.size(), kind.c_str(),
                    kind == "tangent" ? "-" : std::to_string(t.options.plan.segments()).c_str(),
                    toString(precision), static_cast<unsigned long long>(m.ran ? paths : 0), t.compileS,
                    t.stats.registers, static_cast<long long>(t.stats.spillBytes), m.ran ? g17(m.ms).c_str() : "",
                    m.ran ? g17(m.mpaths).c_str() : "", m.ran ? g17(m.result.markets[0].value).c_str() : "",
                    equal.c_str(), dev.c_str(), toString(t.options.config.math),
                    csvQuoted(configText(t.options.config, engine)).c_str(), greeks,
                    m.ran ? g17(greeks * m.mpaths).c_str() : "", static_cast<long long>(t.stats.sourceBytes),
                    c.predicted.tangentTime() / c.predicted.adjointTime()));
        if (equal == "NO") {
          std::fprintf(stderr, "tangent_crossover: %s %s value differs from plain\n", engine.c_str(), kind.c_str());
          return 1;
        }
      }
      record(speeds, engine, c, tangentSpeed, bestAdjoint);
    }
  }
  reportCrossovers(speeds);
  if (file) file->close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tapelab::installStopHandlers();  // util/process.h: no temporary file survives a signal; ulimit -f is one line
  tapelab::guardRunInputs();       // util/files.h: no output replaces a file this run read
  CLI::App app("Tangent (vector forward mode) against plain and checkpointed adjoint kernels as the number of\n"
               "inputs grows: the basket with 1..64 assets (Greeks w.r.t. all spots and vols) and the Asian.",
               "tangent_crossover");
  cli::useTapelabHelp(app);
  cli::Flags f(app);
  f.value("engines", "A,B,...", "engines to measure", "cpu-jit,vulkan,opencl");
  f.value("paths", "N", "paths per timed call", "1000000");
  f.value("assets", "M,...", "basket sizes (2M differentiated inputs each)", "1,2,4,8,16,32,64");
  f.value("basket-steps", "N", "time steps of the basket (its nodes grow as M^2 per step)", "1");
  f.value("asian-steps", "N", "time steps of the Asian call", "252");
  f.value("kinds", "K,...", "plain, tangent, register, scratch (those the engine has)", "plain,tangent,register,scratch");
  f.value("products", "P,...", "basket, asian and the wide products bucketed, localvol, hestonbasket, lmm", "basket,asian");
  f.value("wide-size", "quick|table|full", "the wide products' sizes (quick: CTest; full: their defaults)", "table");
  f.value("wrt-counts", "K,...", "a wide product's --wrt subsets (the first K inputs; default 1, 2, 4, ...; all of them always)");
  f.value("reps", "N", "timed calls; the median is reported", "3");
  f.value("out", "FILE.csv", "write the rows there instead of stdout");
  f.value("commit", "TEXT", "the commit named in the CSV (default: git rev-parse here)");
  f.flag("quick", "CTest's smoke test: 16384 paths, assets 1,2,4,8, 24-step Asian, 3 reps, "
                  "engines cpu-jit,vulkan,opencl (flags given win)");
  experiments::addSizeBound(f);
  cli::addRunConfigFlags(f, {"checkpoint", "ckpt-nodes", "strategy", "plan", "budget", "inner", "kernel", "wrt",
                             "no-greeks", "dump"});
  return cli::runCommandLine(app, argc, argv, [&] { return run(f); });
}
