// When does the checkpointed adjoint pay off? Vector forward mode (the tangent
// kernel kind: one tangent per input carried along the forward sweep, no
// reverse sweep) against the plain adjoint kernel and the register / scratch
// checkpointed adjoints, as the number of inputs grows: the basket call with
// 1..64 assets (Greeks with respect to every spot and vol: 2M inputs) and the
// Asian call (5 inputs), per engine.
//
//   tangent_crossover [--engines cpu-jit,vulkan,opencl] [--paths N] [--assets 1,2,4,...]
//                     [--basket-steps N] [--asian-steps N] [--kinds plain,tangent,register,scratch]
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
// driver) gets kernel statistics only. At the end, per engine, the crossover:
// the fewest inputs from which the best adjoint kernel (plain, register or
// scratch) beats the tangent kernel at every larger input count measured.
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
#include "experiments/experiment_csv.h"
#include "experiments/experiment_tape.h"
#include "tape/products/products.h"
#include "util/files.h"

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
  std::string product;  // "basket" or "asian"
  int assets = 0;       // basket only
  Tape tape;
  std::vector<std::string> wrt;  // the Greeks asked for (the tangent kernel's --wrt)
};

struct Measured {
  bool ran = false;
  double mpaths = 0, ms = 0;
  RunResult result;
};

int run(const cli::Flags& f) {
  const bool quick = f.given("quick");
  auto text = [&](const std::string& name, const char* quickValue) {
    return quick && !f.given(name) ? std::string(quickValue) : *f.textOrDefault(name);
  };
  const uint64_t paths = static_cast<uint64_t>(positive(text("paths", "16384"), "--paths"));
  const int reps = positive(text("reps", "3"), "--reps");
  const int basketSteps = positive(text("basket-steps", "1"), "--basket-steps");
  const int asianSteps = positive(text("asian-steps", "24"), "--asian-steps");
  std::vector<int> assets;
  for (const std::string& a : split(text("assets", "1,2,4,8"))) assets.push_back(positive(a, "--assets"));
  const std::vector<std::string> kinds = split(*f.textOrDefault("kinds"));
  for (const std::string& k : kinds)
    if (k != "plain" && k != "tangent" && k != "register" && k != "scratch")
      throw cli::UsageError("--kinds: unknown '" + k + "' (plain, tangent, register, scratch)");
  const RunConfig env = cli::runConfigFrom(f);
  std::vector<std::string> engines = split(text("engines", "cpu-jit,vulkan,opencl"));
  if (engines.empty()) throw cli::UsageError("--engines: empty list");

  std::vector<Case> cases;
  for (int m : assets) {
    Case c{"basket", m, experiments::experimentProduct(f, "basket", {{"assets", m}, {"steps", basketSteps}},
                                                        "--assets, --basket-steps"), {}};
    for (int i = 1; i <= m; ++i) c.wrt.push_back("spot" + std::to_string(i));
    for (int i = 1; i <= m; ++i) c.wrt.push_back("vol" + std::to_string(i));
    cases.push_back(std::move(c));
  }
  cases.push_back({"asian", 0, experiments::experimentProduct(f, "asian", {{"steps", asianSteps}}, "--asian-steps"),
                   {"spot", "strike", "vol", "rate", "maturity"}});

  // Rows as they are measured: to standard output, or to --out in place (util/files.h's OutputFile:
  // never the --plan file, a directory or a block device, refused before anything runs; a failed
  // write names the file and ends the run, exit 1).
  std::unique_ptr<OutputFile> file;
  if (auto path = f.text("out")) file = std::make_unique<OutputFile>(*path, std::vector<std::string>{env.planFile});
  auto emit = [&](const std::string& text) {
    if (file) {
      file->write(text);
    } else if (std::fputs(text.c_str(), stdout) < 0 || std::fflush(stdout) != 0) {
      throw std::runtime_error("standard output: cannot write");
    }
  };
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  const std::string machine = csvField(host), commit = csvField(commitOf(f));
  emit(format("# tangent_crossover machine=%s commit=%s paths=%llu basket_steps=%d asian_steps=%d reps=%d\n",
              machine.c_str(), commit.c_str(), static_cast<unsigned long long>(paths), basketSteps, asianSteps, reps));
  // math and config: each kernel's configuration (engine/config.h), the canonical text, on every row.
  emit("machine,driver,commit,engine,device,product,assets,inputs,nodes,kind,segments,precision,paths,"
       "compile_s,registers,spill_bytes,ms,mpaths_per_s,value,value_bits_equal_plain,"
       "max_greek_dev_stderr,math,config\n");

  // Per engine: per case, the tangent's and the best adjoint's Mpath/s (the crossover).
  std::map<std::string, std::vector<std::pair<int, std::pair<double, double>>>> speeds;
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
      for (const std::string& kind : kinds) {
        RunConfig rc = env;
        rc.engine = engine;
        rc.precision = precision;
        rc.kernel = parseKernelKind(kind, "--kinds");
        if (rc.kernel != KernelKind::Scratch && std::find(caps.kinds.begin(), caps.kinds.end(), *rc.kernel) == caps.kinds.end())
          continue;
        if (rc.kernel == KernelKind::Scratch && std::find(caps.kinds.begin(), caps.kinds.end(), KernelKind::Scratch) == caps.kinds.end())
          continue;
        rc.checkpoint = kind == "plain" || kind == "tangent" ? Checkpoint::off()
                        : kind == "scratch"                  ? Checkpoint::automatic()
                                                             : Checkpoint::count(std::min(16, c.tape.size()));
        if (kind == "tangent") rc.wrt = c.wrt;
        const int inputs = static_cast<int>(c.wrt.size());
        std::fprintf(stderr, "tangent_crossover: %s %s%s %s: compiling\n", engine.c_str(), c.product.c_str(),
                     c.assets ? ("-" + std::to_string(c.assets)).c_str() : "", kind.c_str());
        // The engine itself rather than MonteCarlo: a compile-only engine still reports its kernels.
        const KernelOptions options = resolveKernel(c.tape, rc, caps);
        const auto t0 = std::chrono::steady_clock::now();
        std::unique_ptr<Kernel> kernel = entry.make(env.engineSettings)->compile(c.tape, options);
        const double compileS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const KernelStats st = kernel->stats();
        Measured m;
        if (!compileOnly) {
          kernel->run({c.tape.inputDefaults}, std::min<uint64_t>(paths, 4096), 7);  // warm-up, another seed
          std::vector<double> times;
          for (int r = 0; r < reps; ++r) {
            m.result = kernel->run({c.tape.inputDefaults}, paths, 42);
            times.push_back(m.result.seconds);
          }
          std::sort(times.begin(), times.end());
          const double med = times[times.size() / 2];
          m.ran = true;
          m.ms = med * 1e3;
          m.mpaths = static_cast<double>(paths) / med / 1e6;
        }
        if (kind == "plain") plain = m;
        std::string equal = "-", dev = "-";
        if (m.ran && plain.ran) {
          const MarketResult &x = m.result.markets.at(0), &p = plain.result.markets.at(0);
          equal = std::memcmp(&x.value, &p.value, sizeof x.value) == 0 ? "yes" : "NO";
          double worst = 0;
          for (const std::string& name : c.wrt) {
            const int k = c.tape.inputIndex(name);
            const double scale = std::max(p.greeksStderr[k], 1e-300);
            worst = std::max(worst, std::fabs(x.greeks[k] - p.greeks[k]) / scale);
          }
          dev = g17(worst);
        }
        if (m.ran && kind == "tangent") tangentSpeed = m.mpaths;
        if (m.ran && (kind == "register" || kind == "scratch" || kind == "plain")) bestAdjoint = std::max(bestAdjoint, m.mpaths);
        emit(format("%s,tangent_crossover,%s,%s,%s,%s,%d,%d,%d,%s,%s,%s,%llu,%.3f,%d,%lld,%s,%s,%s,%s,%s,%s,%s\n",
                    machine.c_str(), commit.c_str(), engine.c_str(), csvField(caps.reason).c_str(), c.product.c_str(),
                    c.assets, inputs, c.tape.size(), kind.c_str(),
                    kind == "tangent" ? "-" : std::to_string(options.plan.segments()).c_str(),
                    toString(precision), static_cast<unsigned long long>(m.ran ? paths : 0), compileS, st.registers,
                    static_cast<long long>(st.spillBytes), m.ran ? g17(m.ms).c_str() : "",
                    m.ran ? g17(m.mpaths).c_str() : "", m.ran ? g17(m.result.markets[0].value).c_str() : "",
                    equal.c_str(), dev.c_str(), toString(options.config.math),
                    csvQuoted(configText(options.config, engine)).c_str()));
        if (equal == "NO") {
          std::fprintf(stderr, "tangent_crossover: %s %s value differs from plain\n", engine.c_str(), kind.c_str());
          return 1;
        }
      }
      if (tangentSpeed > 0 && bestAdjoint > 0)
        speeds[engine].push_back({c.assets ? 2 * c.assets : 5, {tangentSpeed, bestAdjoint}});
    }
  }
  for (const auto& [engine, list] : speeds) {
    // The crossover: the fewest inputs from which an adjoint kernel is faster at every larger count measured
    // (one noisy small case does not move it).
    int crossover = -1;
    std::vector<std::pair<int, std::pair<double, double>>> sorted = list;
    std::sort(sorted.begin(), sorted.end());
    for (auto it = sorted.rbegin(); it != sorted.rend() && it->second.second > it->second.first; ++it)
      crossover = it->first;
    if (crossover < 0)
      std::fprintf(stderr, "tangent_crossover: %s: the tangent kernel is faster at every input count measured\n", engine.c_str());
    else
      std::fprintf(stderr, "tangent_crossover: %s: an adjoint kernel is faster from %d inputs on\n", engine.c_str(), crossover);
  }
  if (file) file->close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
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
