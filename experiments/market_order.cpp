// Registers and spills of multi-market kernels by market order, without a GPU.
//
//   market_order [--engine cuda] [--steps 252] [--markets 1,2,4,7,8] [--kinds register,scratch]
//                [--orders joint,sequential] [--checkpoint 16] [--ptx] [--jobs N] [--out FILE.csv] [--quick]
//
// For every kind x order x markets per dispatch, the checkpointed kernel of the
// Asian (value + 5 Greeks, fp32, window strategy) is compiled by the engine (cuda:
// NVRTC + ptxas for sm_90, compile-only without a driver) and the compiler's
// registers, local-memory bytes (spills and stack) and spill stores are printed,
// with the workgroup-local bytes the Kahan sums take (they cap occupancy too) and,
// with --ptx, the kernel's PTX instruction count (straight-line code: about the
// instructions per path). One CSV row per kernel, to standard output or --out
// (written whole at the end through util/files.h's writeOutputFile; a target it
// refuses is refused before the first compile, exit 2). Cold 7-market compiles take
// a minute or more each; NVRTC output is cached (TAPELAB_CACHE_DIR). The kernel
// configuration applies over the engine's defaults (TAPELAB_CONFIG=NAME=VALUE,..., e.g.
// sums=local,min_blocks=6: docs/config.md; scripts/gpu-occupancy.sh sweeps those two).
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <thread>

#include "api/montecarlo.h"
#include "api/registry.h"
#include "engine/tangent_chunks.h"
#include "gpu/codegen/emit.h"
#include "gpu/cuda/cuda.h"
#include "tape/products/products.h"
#include "util/files.h"
#include "util/threads.h"
#include "util/process.h"

using namespace tapelab;

namespace {

// Instructions of a PTX text: lines ending in ';' inside the entry's braces, no directives or labels.
long ptxInstructions(const std::string& ptx) {
  std::istringstream in(ptx);
  long count = 0;
  int depth = 0;
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find_first_not_of(" \t");
    if (at == std::string::npos) continue;
    const std::string s = line.substr(at);
    if (s[0] == '{') ++depth;
    if (s[0] == '}') --depth;
    if (depth <= 0 || s[0] == '.' || s[0] == '/' || s[0] == '{' || s[0] == '}' || s.back() == ':') continue;
    if (s.find(';') != std::string::npos) ++count;
  }
  return count;
}

std::vector<std::string> list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) out.push_back(x);
  return out;
}

struct Job {
  KernelKind kind = KernelKind::Register;
  MarketOrder order = MarketOrder::Joint;
  int markets = 1;
  int registers = -1;
  int64_t spill = -1, spillStores = -1;
  size_t kahanLocalBytes = 0;
  long ptx = -1;
  double seconds = 0;
  std::string error;
};

// Compiles one job's kernel: the compiler's registers and spills, the Kahan sums' local bytes, the PTX count.
void compileJob(Job& j, Engine& engine, const Tape& tape, const RunConfig& config, const EngineCaps& caps, int segments,
                bool ptx) {
  try {
    RunConfig c = config;
    c.precision = Precision::F32;
    c.greeks = true;
    c.kernel = j.kind;
    c.checkpoint = Checkpoint::count(segments);
    KernelOptions o = resolveKernel(tape, c, caps);
    o.markets = j.markets;
    o.config.marketOrder = j.order;  // the job's, over the defaults and TAPELAB_CONFIG
    const auto t0 = std::chrono::steady_clock::now();
    const KernelStats st = compileKernel(engine, tape, o)->stats();
    j.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    j.registers = st.registers;
    j.spill = st.spillBytes;
    j.spillStores = st.spillStoreBytes;
    const EmittedKernel k = emitKernel(tape, o, cudaDialect());
    const size_t sums = size_t(k.partialsPerGroup());
    const size_t local = 2 * sums * size_t(k.workgroupSize) * k.scalarBytes();
    const bool inLocal = o.config.sums == KahanPlace::Local;
    j.kahanLocalBytes = inLocal && local <= kMaxKahanLocalBytes ? local : 0;
    if (ptx) j.ptx = ptxInstructions(compilePtx(k.source));
  } catch (const std::exception& e) {
    j.error = e.what();
  }
}

// Each kind x order x market count (one market: one order, the orders emitting the same kernel).
std::vector<Job> plannedJobs(const std::string& kinds, const std::string& orders, const std::string& markets) {
  std::vector<Job> work;
  for (const std::string& k : list(kinds))
    for (const std::string& o : list(orders))
      for (const std::string& m : list(markets)) {
        if (m == "1" && o == "sequential") continue;  // one market: the orders emit the same kernel
        Job j;
        j.kind = parseKernelKind(k, "--kinds");
        KernelConfig order;  // the field's own values and message (engine/config.h)
        findConfigField("market_order")->set(order, o, "--orders");
        j.order = order.marketOrder;
        j.markets = std::stoi(m);
        work.push_back(j);
      }
  return work;
}

std::string csvText(const std::vector<Job>& work, int segments) {
  std::ostringstream csv;
  csv << "kind,order,markets,segments,registers,local_bytes,spill_store_bytes,kahan_local_bytes,ptx_instructions,"
         "compile_seconds,error\n";
  for (const Job& j : work)
    csv << toString(j.kind) << ',' << toString(j.order) << ',' << j.markets << ',' << segments << ',' << j.registers
        << ',' << j.spill << ',' << j.spillStores << ',' << j.kahanLocalBytes << ',' << j.ptx << ',' << j.seconds << ','
        << '"' << j.error << '"' << '\n';
  return csv.str();
}

}  // namespace

int main(int argc, char** argv) {
  tapelab::installStopHandlers();  // util/process.h: no temporary file survives a signal; ulimit -f is one line
  tapelab::guardRunInputs();       // util/files.h: no output replaces a file this run read
  CLI::App app{"market_order: registers and spills of multi-market kernels, joint against sequential"};
  std::string engineName = "cuda", out, markets = "1,2,4,7,8", kinds = "register,scratch", orders = "joint,sequential";
  int steps = 252, segments = 16, jobs = 2;
  bool quick = false, ptx = false;
  app.add_option("--engine", engineName, "engine whose compiler reports registers (cuda; hip)")->capture_default_str();
  app.add_option("--steps", steps, "Asian time steps")->capture_default_str();
  app.add_option("--markets", markets, "markets per dispatch, a list")->capture_default_str();
  app.add_option("--kinds", kinds, "kernel kinds, a list (register, scratch)")->capture_default_str();
  app.add_option("--orders", orders, "market orders, a list (joint, sequential)")->capture_default_str();
  app.add_option("--checkpoint", segments, "segments (window strategy)")->capture_default_str();
  app.add_flag("--ptx", ptx, "also count PTX instructions (one more NVRTC front-end pass per kernel; cuda)");
  app.add_option("--jobs", jobs, "kernels compiled at once")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--out", out, "CSV file (default: standard output)");
  uint64_t maxNodes = 0;
  app.add_option("--max-nodes", maxNodes, "the most nodes the Asian may record (default: TAPELAB_MAX_NODES, else 2000000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_flag("--quick", quick, "24 steps, 4 segments, 1 and 2 markets, register (a smoke test)");
  try {  // one line, exit 2 (docs/cli.md), not CLI11's two lines and exit 105
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "market_order: %s\n", e.what());
    return 2;
  }
  if (quick) {  // --quick's values for the flags not given: a flag given is never silently replaced
    if (!app.count("--steps")) steps = 24;
    if (!app.count("--checkpoint")) segments = 4;
    if (!app.count("--markets")) markets = "1,2";
    if (!app.count("--kinds")) kinds = "register";
  }
  for (const std::string& m : list(markets))
    if (m.find_first_not_of("0123456789") != std::string::npos || m.size() > 1 || m < "1" || m > "8") {
      std::fprintf(stderr, "market_order: --markets: expected markets per dispatch in 1..8, got '%s'\n", m.c_str());
      return 2;
    }

  try {
    if (!out.empty()) checkOutputFile(out);  // refused before the compiles, not after them
  } catch (const OutputRefused& e) {
    std::fprintf(stderr, "market_order: %s\n", e.what());
    return 2;
  }
  try {
    RunConfig config = RunConfig::fromEnvironment();
    Tape tape;  // its size checked from --steps before anything is recorded or compiled
    try {
      tape = products::byName("asian", {{"steps", steps}}, static_cast<double>(maxNodes ? maxNodes : config.maxNodes));
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "market_order: --steps: %s\n", e.what());
      return 2;
    }
    const EngineCaps caps = engineCaps(findEngine(engineName), config.engineSettings);
    if (!caps.usable && !caps.compileOnly) {
      std::fprintf(stderr, "market_order: engine %s cannot compile here: %s\n", engineName.c_str(), caps.reason.c_str());
      return 3;
    }
    auto engine = findEngine(engineName).make(config.engineSettings);
    std::vector<Job> work = plannedJobs(kinds, orders, markets);
    std::fprintf(stderr, "market_order: %zu kernels on %s, %d at once\n", work.size(), engineName.c_str(), jobs);
    std::atomic<size_t> next{0};
    std::mutex mu;
    auto worker = [&] {
      for (size_t i; (i = next++) < work.size();) {
        Job& j = work[i];
        compileJob(j, *engine, tape, config, caps, segments, ptx);
        std::lock_guard<std::mutex> lock(mu);
        std::fprintf(stderr, "  %s %s x%d: %d registers, %lld local bytes, %lld spill stores, %.1f s%s\n",
                     toString(j.kind), toString(j.order), j.markets, j.registers, static_cast<long long>(j.spill),
                     static_cast<long long>(j.spillStores), j.seconds, j.error.empty() ? "" : (" ERROR " + j.error).c_str());
      }
    };
    runWorkers(static_cast<unsigned>(jobs), worker);  // util/threads.h: a thread refused is one fewer worker

    const std::string csv = csvText(work, segments);
    if (out.empty()) {
      std::fputs(csv.c_str(), stdout);
    } else {
      try {
        writeOutputFile(out, csv);  // util/files.h: through links, never a special file replaced
      } catch (const OutputRefused&) {
        throw;
      } catch (const std::runtime_error& e) {  // "--out FILE: cannot write: reason"
        std::fprintf(stderr, "market_order: %s\n", e.what());
        return 1;
      }
    }
    bool failed = false;
    for (const Job& j : work) failed = failed || !j.error.empty();
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "market_order: %s\n", e.what());
    return 2;
  }
}
