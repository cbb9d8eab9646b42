// Plain against checkpointed GPU kernels on one engine, the article's way:
// for each configuration, one kernel, a warm-up call on another seed, then a
// seven-point spot ladder (spots 85..115), three ladders, median. Also the
// register kernel with the opaque identity switched off (TAPELAB_OPAQUE=0),
// to show whether the shader compiler merges the recomputation without it.
//
//   gpu_kernels [--engine vulkan] [--steps 252] [--paths 1000000,4000000]
//               [--markets 1,4] [--greeks on,off] [--segments 16[,8,...]]
//               [--kinds plain,register,register-noopq] [--reps 3]
//               [--out FILE.csv] [--quick]
//
// Prints one row per configuration: compile seconds, cache hit, registers and
// spills where the driver reports them, ms per ladder, Mpath/s (7 x paths per
// second), price/delta/vega at spot 100 with 17 digits, and whether the bits
// equal the plain kernel's. CSV with --out.
//
// On a compile-only engine (cuda where NVRTC is installed but no driver) every
// kernel is compiled and only its statistics are printed (ptxas registers and
// spills for --arch, default sm_90 via TAPELAB_CUDA_ARCH): the register map of
// markets x segments, without a GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "api/registry.h"
#include "planner/strategies.h"
#include "tape/products/products.h"

using namespace tapelab;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "gpu_kernels: %s\n", why.c_str());
  std::exit(2);
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

}  // namespace

int main(int argc, char** argv) {
  std::string engineName = "vulkan", out;
  int steps = 252, reps = 3;
  std::vector<int> segmentList{16};
  std::vector<std::string> paths{"1000000", "4000000"}, markets{"1", "4"}, greeks{"on", "off"},
      kinds{"plain", "register", "register-noopq"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--engine") engineName = value();
      else if (a == "--steps") steps = std::stoi(value());
      else if (a == "--paths") paths = split(value());
      else if (a == "--markets") markets = split(value());
      else if (a == "--greeks") greeks = split(value());
      else if (a == "--segments") {
        segmentList.clear();
        for (const std::string& v : split(value())) segmentList.push_back(std::stoi(v));
      }
      else if (a == "--kinds") kinds = split(value());
      else if (a == "--reps") reps = std::stoi(value());
      else if (a == "--out") out = value();
      else if (a == "--quick") {
        steps = 24;
        paths = {"4000"};
        markets = {"1", "2"};
        greeks = {"on"};
        segmentList = {4};
        reps = 1;
      } else usage("unknown flag " + a);
    } catch (const std::logic_error&) {
      usage("bad value for " + a);
    }
  }
  if (steps < 1 || reps < 1 || segmentList.empty()) usage("--steps and --reps must be positive, --segments not empty");
  for (int sgs : segmentList)
    if (sgs < 1) usage("--segments must be positive");

  // TAPELAB_* knobs (api/knobs.h), read once: engine settings and kernel knobs.
  RunConfig env;
  try {
    env = RunConfig::fromEnvironment();
  } catch (const std::invalid_argument& e) {
    usage(e.what());
  }
  const EngineEntry& entry = findEngine(engineName);
  const EngineCaps caps = engineCaps(entry, env.engineSettings);
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
  const Tape tape = products::asianCall(steps);
  std::printf("# tape asian-%d: %d nodes; register kernels cut by strategy window\n", steps, tape.size());
  const std::vector<double> spots{85, 90, 95, 100, 105, 110, 115};
  const int spotIndex = tape.inputIndex("spot"), volIndex = tape.inputIndex("vol");

  std::vector<Row> rows;
  std::map<std::string, std::vector<double>> plainBits;  // config -> price/greeks bits of the plain kernel
  std::printf("%-15s %4s %9s %3s %6s %9s %5s %5s %8s %10s %9s  %-20s %-20s %-20s %s\n", "kind", "segs", "paths", "M", "greeks",
              "compile_s", "cache", "regs", "spill", "ms/ladder", "Mpath/s", "price", "delta", "vega", "==plain");
  for (const std::string& ms : markets)
    for (const std::string& gs : greeks)
      for (const std::string& kind : kinds)
        for (int segs : segmentList) {
          if (kind == "plain" && segs != segmentList.front()) continue;  // plain has no segments
          KernelOptions o;
          o.knobs = env.kernelKnobs;
          o.dumpDir = env.dumpDir;
          o.precision = Precision::F32;
          o.greeks = gs == "on";
          o.markets = std::stoi(ms);
          o.kind = kind == "plain" ? KernelKind::Plain : KernelKind::Register;
          if (o.kind != KernelKind::Plain) {
            PlanOptions po;
            po.segments = segs;
            o.plan = makeStrategyPlan("window", tape, po);
          }
          if (kind == "register-noopq") o.knobs.opaque = false;
          std::unique_ptr<Kernel> k;
          double compileS = 0;
          try {
            const auto t0 = std::chrono::steady_clock::now();
            k = entry.make(env.engineSettings)->compile(tape, o);
            compileS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          } catch (const std::exception& e) {
            std::fprintf(stderr, "gpu_kernels: %s compile failed: %s\n", kind.c_str(), e.what());
            return 1;
          }
          const KernelStats st = k->stats();
          if (!st.notes.empty()) std::printf("    %s, %s markets, greeks %s, %d segments: %s\n", kind.c_str(), ms.c_str(),
                                             gs.c_str(), o.kind == KernelKind::Plain ? 1 : segs, st.notes.c_str());
          for (const std::string& ps : paths) {
            Row row;
            row.kind = kind;
            row.segments = o.kind == KernelKind::Plain ? 1 : segs;
            row.paths = std::stoull(ps);
            row.markets = o.markets;
            row.greeks = o.greeks;
            row.compileS = compileS;
            row.cacheHit = st.cacheHit;
            row.registers = st.registers;
            row.spill = st.spillBytes;
            if (compileOnly) {
              std::printf("%-15s %4d %9s %3d %6s %9.3f %5s %5d %8lld %10s %9s  (compile only)\n", kind.c_str(),
                          row.segments, "-", row.markets, gs.c_str(), row.compileS, row.cacheHit ? "hit" : "miss",
                          row.registers, static_cast<long long>(row.spill), "-", "-");
              std::fflush(stdout);
              rows.push_back(row);
              continue;
            }
            // The ladder in groups of M markets (the last group padded with its last spot).
            std::vector<std::vector<std::vector<double>>> groups;
            for (size_t s = 0; s < spots.size(); s += row.markets) {
              std::vector<std::vector<double>> g;
              for (int m = 0; m < row.markets; ++m) {
                std::vector<double> in = tape.inputDefaults;
                in[spotIndex] = spots[std::min(spots.size() - 1, s + m)];
                g.push_back(in);
              }
              groups.push_back(g);
            }
            k->run(groups[0], row.paths, 7);  // warm-up, another seed
            std::vector<double> times;
            RunResult at100;
            for (int r = 0; r < reps; ++r) {
              const auto t0 = std::chrono::steady_clock::now();
              for (size_t gi = 0; gi < groups.size(); ++gi) {
                RunResult res = k->run(groups[gi], row.paths, 42);
                const size_t first = gi * row.markets;
                if (first <= 3 && 3 < first + row.markets) {
                  at100 = res;
                  at100.markets = {res.markets[3 - first]};
                }
              }
              times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
            std::sort(times.begin(), times.end());
            const double med = times[times.size() / 2];
            row.msPerLadder = med * 1e3;
            row.mpaths = 7.0 * static_cast<double>(row.paths) / med / 1e6;
            const MarketResult& mr = at100.markets.at(0);
            row.price = mr.value;
            row.delta = mr.greeks.at(spotIndex);
            row.vega = mr.greeks.at(volIndex);
            std::vector<double> bits{mr.value};
            bits.insert(bits.end(), mr.greeks.begin(), mr.greeks.end());
            const std::string config = ps + "/" + ms + "/" + gs;
            if (kind == "plain") plainBits[config] = bits;
            else if (plainBits.count(config)) row.identical = plainBits[config] == bits ? "yes" : "NO";
            std::printf("%-15s %4d %9llu %3d %6s %9.3f %5s %5d %8lld %10.2f %9.2f  %-20s %-20s %-20s %s\n",
                        kind.c_str(), row.segments, static_cast<unsigned long long>(row.paths), row.markets, gs.c_str(),
                        row.compileS, row.cacheHit ? "hit" : "miss", row.registers, static_cast<long long>(row.spill),
                        row.msPerLadder, row.mpaths, g17(row.price).c_str(), g17(row.delta).c_str(),
                        g17(row.vega).c_str(), row.identical.c_str());
            std::fflush(stdout);
            rows.push_back(row);
          }
        }
  if (!out.empty()) {
    std::ofstream f(out);
    f << "engine,steps,segments,kind,paths,markets,greeks,compile_s,cache_hit,registers,spill_bytes,ms_per_ladder,"
         "mpaths_per_s,price,delta,vega,identical_to_plain\n";
    for (const Row& r : rows) {
      f << engineName << ',' << steps << ',' << r.segments << ',' << r.kind << ',';
      if (compileOnly) f << ',';  // nothing ran: no paths, times or results
      else f << r.paths << ',';
      f << r.markets << ',' << (r.greeks ? "on" : "off") << ',' << r.compileS << ',' << (r.cacheHit ? 1 : 0) << ','
        << r.registers << ',' << r.spill << ',';
      if (compileOnly) f << ",,,,,";
      else f << r.msPerLadder << ',' << r.mpaths << ',' << g17(r.price) << ',' << g17(r.delta) << ',' << g17(r.vega) << ',';
      f << r.identical << '\n';
    }
    if (!f) {
      std::fprintf(stderr, "gpu_kernels: cannot write %s\n", out.c_str());
      return 1;
    }
  }
  for (const Row& r : rows)
    if (r.identical == "NO") {
      std::fprintf(stderr, "gpu_kernels: %s differs from plain (%llu paths, %d markets)\n", r.kind.c_str(),
                   static_cast<unsigned long long>(r.paths), r.markets);
      return 1;
    }
  return 0;
}
