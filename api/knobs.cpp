#include "api/knobs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "util/files.h"

extern char** environ;

namespace tapelab {

KernelKind parseKernelKind(const std::string& s, const std::string& what) {
  if (s == "plain") return KernelKind::Plain;
  if (s == "register") return KernelKind::Register;
  if (s == "scratch") return KernelKind::Scratch;
  if (s == "tangent") return KernelKind::Tangent;
  throw std::invalid_argument(what + ": unknown kernel '" + s + "' (plain, register, scratch, tangent)");
}

std::vector<std::string> parseNameList(const std::string& s, const std::string& what) {
  std::vector<std::string> names;
  size_t start = 0;
  for (size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1)
    names.push_back(s.substr(start, comma - start));
  names.push_back(s.substr(start));
  for (const std::string& n : names)
    if (n.empty()) throw std::invalid_argument(what + ": expected NAME,..., got '" + s + "'");
  return names;
}

int parsePositiveInt(const std::string& s, const std::string& what) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 1)
    throw std::invalid_argument(what + ": expected a positive integer, got '" + s + "'");
  return v;
}

uint64_t parseUnsigned(const std::string& s, const std::string& what, uint64_t lo, uint64_t hi) {
  std::string_view v(s);
  int base = 10;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    v.remove_prefix(2);
    base = 16;
  }
  uint64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x, base);
  if (ec != std::errc() || end != v.data() + v.size() || x < lo || x > hi) {
    const std::string range = hi == UINT64_MAX ? (lo == 0 ? "an unsigned integer" : "an integer >= " + std::to_string(lo))
                                               : "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
    throw std::invalid_argument(what + ": expected " + range + ", got '" + s + "'");
  }
  return x;
}

double parseSeconds(const std::string& s, const std::string& what) {
  double v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // from_chars reads "-1", "inf" and "nan" too: the range check refuses them (and NaN fails every
  // comparison). At most 1e9 s (31 years), so that the nanoseconds fit 64 bits.
  if (ec != std::errc() || end != s.data() + s.size() || !(v >= 0 && v <= 1e9))
    throw std::invalid_argument(what + ": expected seconds, a decimal from 0 (no limit) to 1e9, got '" + s + "'");
  return v;
}

uint64_t parsePathCount(const std::string& s, const std::string& what) {
  const std::string expected = what + ": expected a path count from 1 to 2^48 (" + std::to_string(kMaxPaths) + "), got '" + s + "'";
  uint64_t n = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec == std::errc::result_out_of_range) throw std::invalid_argument(expected);
  if (ec != std::errc() || p != s.data() + s.size()) {  // 1e6-style, when whole
    double d = 0;
    const auto [q, dec] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (dec != std::errc() || q != s.data() + s.size() || !(d >= 1 && d <= static_cast<double>(kMaxPaths)) ||
        d != static_cast<double>(static_cast<uint64_t>(d)))
      throw std::invalid_argument(expected);
    n = static_cast<uint64_t>(d);
  }
  if (n < 1 || n > kMaxPaths) throw std::invalid_argument(expected);
  return n;
}

Checkpoint Checkpoint::parse(const std::string& text, const std::string& what) {
  if (text == "off") return off();
  if (text == "auto") return automatic();
  int v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < 1)
    throw std::invalid_argument(what + ": expected off, auto or a positive segment count, got '" + text + "'");
  return count(v);
}

std::string Checkpoint::text() const {
  switch (mode) {
    case Mode::Off: return "off";
    case Mode::Auto: return "auto";
    case Mode::Segments: return std::to_string(segments);
  }
  return "?";
}

namespace {

// The environment's text of a variable; nullopt when unset or empty.
std::optional<std::string> variable(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool parseSwitch(const std::string& v, const char* name) {
  if (v == "0") return false;
  if (v == "1") return true;
  throw std::invalid_argument(std::string(name) + ": expected 0 or 1, got '" + v + "'");
}

// TAPELAB_CUDA_ARCH: "sm_90", "90", "sm_80".
void parseCudaArch(RunConfig& c, const std::string& v, const char* name) {
  std::string s = v.rfind("sm_", 0) == 0 ? v.substr(3) : v;
  if (s.size() < 2 || s.size() > 3 || !std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isdigit(ch); }))
    throw std::invalid_argument(std::string(name) + ": expected sm_XY, got '" + v + "'");
  c.engineSettings.cuda.archMajor = std::stoi(s.substr(0, s.size() - 1));
  c.engineSettings.cuda.archMinor = s.back() - '0';
}

using Scope = Knob::Scope;
using C = RunConfig;
using S = const std::string;

}  // namespace

const std::vector<Knob>& knobTable() {
  static const std::vector<Knob> table = {
      // The run: what a front end asks for (flags of price, run, compare, plan and the
      // experiment drivers; cli/options.h binds each flag to its variable, the meaning is its help).
      {"TAPELAB_ENGINE", "--engine", "engine to run on (tapelab engines lists them)", Scope::Run, [](C& c, S& v, const char*) { c.engine = v; }},
      {"TAPELAB_PATHS", "--paths", "Monte-Carlo paths", Scope::Run, nullptr},
      {"TAPELAB_SEED", "--seed", "64-bit seed", Scope::Run, nullptr},
      {"TAPELAB_CKPT", "--checkpoint", "segments: off, auto or a count (1 = off)", Scope::Run,
       [](C& c, S& v, const char* n) { c.checkpoint = Checkpoint::parse(v, n); }},
      {"TAPELAB_CKPT_NODES", "--ckpt-nodes", "auto checkpointing from this many nodes", Scope::Run,
       [](C& c, S& v, const char* n) { c.ckptNodes = parsePositiveInt(v, n); }},
      {"TAPELAB_STRATEGY", "--strategy", "cut strategy (tapelab plan --help lists them); run, price and compare take a comma list: one row each", Scope::Run, [](C& c, S& v, const char*) { c.strategy = v; }},
      {"TAPELAB_SEGLEN", "--seglen", "scratch / uniform segment length", Scope::Run,
       [](C& c, S& v, const char* n) { c.segLen = parsePositiveInt(v, n); }},
      {"TAPELAB_KERNEL", "--kernel", "kernel kind: auto, plain, register, scratch (checkpointed adjoints) or tangent (vector forward mode)", Scope::Run,
       [](C& c, S& v, const char* n) {
         if (v == "auto") c.kernel.reset();
         else c.kernel = parseKernelKind(v, n);
       }},
      {"TAPELAB_WRT", "--wrt", "tangent kernel: differentiate by these inputs only (NAME,...; default all)", Scope::Run,
       [](C& c, S& v, const char* n) {
         c.wrt = parseNameList(v, n);
         c.wrtWhat = n;
       }},
      {"TAPELAB_DUMP", "--dump", "write generated kernel source to this directory", Scope::Run,
       [](C& c, S& v, const char*) { c.dumpDir = v; }},
      {"TAPELAB_PLAN", "--plan", "run the plan in this file (tapelab plan --out) instead of a strategy", Scope::Run,
       [](C& c, S& v, const char*) { c.planFile = v; }},
      {"TAPELAB_BUDGET", "--budget", "budget strategy: the most values live at once (peak_live)", Scope::Run,
       [](C& c, S& v, const char* n) { c.budget = parsePositiveInt(v, n); }},
      {"TAPELAB_STRATEGY_CMD", "--strategy-cmd", "strategy cmd: a strategy as a process, e.g. \"python3 mine.py\", that writes a plan "
       "file from the tape and its summary (its arguments: docs/strategies.md); implies --strategy cmd",
       Scope::Run, [](C& c, S& v, const char*) { c.strategyCommand = v; }},
      {"TAPELAB_SOLVE_SECONDS", "--solve-seconds", "exact strategy: the solver's time limit (then the best plan, its bound and "
       "gap); a strategy process gets 10 s more", Scope::Run,
       [](C& c, S& v, const char* n) { c.solveSeconds = parseSeconds(v, n); }},
      {"TAPELAB_SOLVE_CLOCK", "--solve-clock", "exact strategy: the clock --solve-seconds counts: wall (default) or cpu "
       "(the solver's processor time: the same search on a shared machine as on an idle one; the process is then "
       "ended as hung only at 60x the limit plus 10 s of wall time)", Scope::Run,
       [](C& c, S& v, const char* n) {
         if (v != "wall" && v != "cpu") throw std::invalid_argument(std::string(n) + ": expected wall or cpu, got '" + v + "'");
         c.solveClock = v;
       }},
      {"TAPELAB_INNER", "--inner", "two-level strategy: sub-segments per segment (default 4)", Scope::Run,
       [](C& c, S& v, const char* n) { c.innerSegments = parsePositiveInt(v, n); }},
      {"TAPELAB_CONFIG", "--config", "the kernel's configuration: NAME=VALUE,... over the engine's defaults (and a tuned "
       "winner); fields, values and defaults: tapelab config --list", Scope::Run,
       [](C& c, S& v, const char* n) {
         c.userConfig = parseConfigText(v, n);  // names and values now; which engine takes them when it is known
       }},
      {"TAPELAB_MAX_NODES", "--max-nodes", "the most nodes a built-in product may record, estimated from its "
       "parameters before recording (steps x assets, points x steps, ...; docs/cli.md)", Scope::Run,
       [](C& c, S& v, const char* n) { c.maxNodes = parseUnsigned(v, n, 1, uint64_t{1} << 40); }},
      // A dispatch: how a run is cut into dispatches and observed (KernelOptions::dispatch), never the code.
      {"TAPELAB_PATH_OFFSET", "", "index of a run's first path", Scope::Dispatch,
       [](C& c, S& v, const char* n) { c.dispatch.pathOffset = parseUnsigned(v, n); }},
      {"TAPELAB_MAX_GROUPS", "", "most workgroups per dispatch (GPU engines; results do not change)", Scope::Dispatch,
       [](C& c, S& v, const char* n) { c.dispatch.maxGroups = static_cast<uint32_t>(parseUnsigned(v, n, 1, UINT32_MAX)); }},
      {"TAPELAB_SCRATCH_BUDGET", "", "scratch-buffer bytes per launch (larger launches are chunked)", Scope::Dispatch,
       [](C& c, S& v, const char* n) { c.dispatch.scratchBudget = parseUnsigned(v, n, 1); }},
      {"TAPELAB_TIMELINE", "", "0|1, CUDA: each dispatch's kernel timed between device timestamps; price prints "
       "the dispatches (groups, partials ready, host sum, kernel, gap to the previous kernel) and --json has them "
       "under \"dispatches\" (default 0; same bits)",
       Scope::Dispatch, [](C& c, S& v, const char* n) { c.dispatch.timeline = parseSwitch(v, n); }},
      // An engine: its factory's EngineSettings.
      {"TAPELAB_THREADS", "", "CPU engines' threads (results do not depend on it)", Scope::Engine,
       [](C& c, S& v, const char* n) { c.engineSettings.threads = static_cast<unsigned>(parseUnsigned(v, n, 1, 100'000)); }},
      {"TAPELAB_CACHE_DIR", "", "compiled-kernel caches (off: none); else $XDG_CACHE_HOME/tapelab, ~/.cache/tapelab",
       Scope::Engine, nullptr},
      {"XDG_CACHE_HOME", "", "the cache directory's parent when TAPELAB_CACHE_DIR is unset", Scope::Engine, nullptr},
      {"HOME", "", "~/.cache/tapelab when neither of the above is set", Scope::Engine, nullptr},
      {"TAPELAB_DEVICE_TIMEOUT", "", "GPU engines: most seconds one device wait may take, then the run fails (exit 1) "
       "and the device is abandoned; 0 = no limit (default 600)", Scope::Engine,
       [](C& c, S& v, const char* n) { c.engineSettings.deviceTimeout = parseSeconds(v, n); }},
      {"TAPELAB_COMPILE_TIMEOUT", "--compile-timeout", "every engine: the most seconds one kernel's compile may "
       "take, then the run fails (exit 1); a compile past 5 s says so on stderr; 0 = no limit",
       Scope::Engine, [](C& c, S& v, const char* n) { c.engineSettings.compileTimeout = parseSeconds(v, n); }},
      {"TAPELAB_VULKAN_DEVICE", "", "Vulkan device: index or name substring", Scope::Engine,
       [](C& c, S& v, const char*) { c.engineSettings.vulkan.device = v; }},
      {"VK_DRIVER_FILES", "", "the Vulkan loader's drivers (part of which device is meant)", Scope::Engine, nullptr},
      {"VK_ICD_FILENAMES", "", "the Vulkan loader's drivers, older name", Scope::Engine, nullptr},
      {"TAPELAB_OPENCL_DEVICE", "", "OpenCL device: index or name substring", Scope::Engine,
       [](C& c, S& v, const char*) { c.engineSettings.opencl.device = v; }},
      {"TAPELAB_CUDA_DEVICE", "", "CUDA device index", Scope::Engine,
       [](C& c, S& v, const char* n) { c.engineSettings.cuda.device = static_cast<unsigned>(parseUnsigned(v, n, 0, 1024)); }},
      {"OMPI_COMM_WORLD_SIZE", "", "set by Open MPI's mpirun: the paths are split over its ranks (api/ranks.h)",
       Scope::Engine, nullptr},
      {"PMI_SIZE", "", "set by MPICH's mpiexec (Hydra): likewise", Scope::Engine, nullptr},
      {"PMIX_RANK", "", "set by PMIx launchers (srun, prterun): likewise", Scope::Engine, nullptr},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "", "set by Open MPI's mpirun: the rank on this host, which GPU it takes "
       "(EngineSettings::deviceSlot) unless a TAPELAB_*_DEVICE names one", Scope::Engine, nullptr},
      {"MPI_LOCALRANKID", "", "set by MPICH's mpiexec: likewise", Scope::Engine, nullptr},
      {"TAPELAB_MPI_CHUNK_PATHS", "", "under mpirun: paths of the smallest chunk a rank takes (default 2^20; results do not "
       "depend on it)", Scope::Engine, nullptr},
      {"TAPELAB_CUDA_ARCH", "", "CUDA target when no driver says (sm_XY; default sm_90)", Scope::Engine, parseCudaArch},
      {"TAPELAB_HIP_ARCH", "", "HIP targets, comma-separated (default gfx1103,gfx90a)", Scope::Engine,
       [](C& c, S& v, const char*) { c.engineSettings.hip.arch = v; }},
      {"TAPELAB_HIP_GFX11_VGPRS", "", "128 (LLVM 15's gfx11 limit, default) or 256 (lifted: statistics only)", Scope::Engine,
       [](C& c, S& v, const char* n) {
         if (v != "128" && v != "256") throw std::invalid_argument(std::string(n) + ": expected 128 or 256, got '" + v + "'");
         c.engineSettings.hip.gfx11Vgprs = v == "256" ? 256 : 128;
       }},
      {"TAPELAB_CXX", "", "cpu-jit's C++ compiler (default c++)", Scope::Engine,
       [](C& c, S& v, const char*) { c.engineSettings.cpuJit.compiler = v; }},
      {"TAPELAB_JIT_PCH", "", "0: no precompiled xsimd header for cpu-jit", Scope::Engine,
       [](C& c, S& v, const char* n) { c.engineSettings.cpuJit.precompiledHeader = parseSwitch(v, n); }},
  };
  return table;
}

namespace {

// The kernel variables the configuration replaced (2026-12-02), each with what replaces it. Set (and
// not empty), one stops every front end with a line naming both: ignored, it would be a silent
// fallback to the defaults. Likewise the flags that went with them (retiredFlag).
struct Retired {
  const char* variable;
  const char* replacement;  // nullptr: nothing replaces it, and `why` says why
  const char* why = nullptr;
  const char* flag = nullptr;  // its flag, where it had one
};
constexpr Retired kRetired[] = {
    {"TAPELAB_KAHAN_LOCAL", "--config sums=local|registers"},
    {"TAPELAB_CUDA_MIN_BLOCKS", "--config min_blocks=N"},
    {"TAPELAB_PATHS_PER_LANE", "--config lanes=N"},
    {"TAPELAB_APPROX_MATH", "--config math=approx"},
    {"TAPELAB_CUDA_APPROX_MATH", "--config math=approx"},
    {"TAPELAB_QUANTILE_SELECT", nullptr,
     "version 4 of the draws (Box-Muller, docs/tape-format.md) has no quantile to branch on or select"},
    {"TAPELAB_CUDA_OUTLINE_DRAWS", "--config outline_draws=on|off"},
    {"TAPELAB_STORE_DRAWS", "--config draws=stored|redraw"},
    {"TAPELAB_MARKET_LOOP", "--config markets=loop|copies"},
    {"TAPELAB_SHARED_CONSTANTS", "--config shared_constants=on|off"},
    {"TAPELAB_DRAW_LOOP", nullptr,
     "the draw loop lost everywhere it was timed and has no replacement (papers/findings.md, \"Fast by default\")"},
    {"TAPELAB_DEVICE_SUMS", "--config cuda.reduce=device|host"},
    {"TAPELAB_CUDA_SUMS_BESIDE", "--config cuda.reduce=beside"},
    {"TAPELAB_OPAQUE", "--config opaque=on|off"},
    {"TAPELAB_UNROLL_DRAWS", "--config philox=unrolled|rolled"},
    {"TAPELAB_JIT_CHUNK", "--config jit.chunk=N"},
    {"TAPELAB_JIT_PART", "--config jit.part=N"},
    {"TAPELAB_SCRATCH_LAYOUT", "--config layout=soa|aos", nullptr, "--layout"},
    {"TAPELAB_MARKET_ORDER", "--config market_order=sequential|joint", nullptr, "--market-order"},
};

}  // namespace

std::optional<std::string> retiredFlag(const std::string& flag, const std::string& value) {
  for (const Retired& r : kRetired) {
    if (!r.flag || flag != r.flag) continue;
    std::string use = r.replacement;  // "--config NAME=a|b": the value given where it is one of a, b
    const size_t eq = use.find('=');
    const std::string choices = "|" + use.substr(eq + 1) + "|";
    if (!value.empty() && choices.find("|" + value + "|") != std::string::npos) use = use.substr(0, eq + 1) + value;
    return flag + " is retired: use " + use + " (tapelab config --list)";
  }
  return std::nullopt;
}

namespace {

void refuseRetiredVariables() {
  for (const Retired& r : kRetired) {
    if (!variable(r.variable)) continue;
    throw std::invalid_argument(
        std::string(r.variable) + " is retired: " +
        (r.replacement ? "use " + std::string(r.replacement) + " (or TAPELAB_CONFIG; tapelab config --list)"
                       : std::string(r.why)));
  }
}

// Applies the table's rows of `scopes` to `c`, then the values made of several variables.
void applyEnvironment(RunConfig& c, std::initializer_list<Scope> scopes) {
  refuseRetiredVariables();
  bool engine = false;
  for (Scope s : scopes) engine |= s == Scope::Engine;
  for (const Knob& k : knobTable()) {
    if (!k.apply || std::find(scopes.begin(), scopes.end(), k.scope) == scopes.end()) continue;
    if (const auto v = variable(k.variable)) k.apply(c, *v, k.variable);
  }
  if (!engine) return;
  c.engineSettings.cacheDir =
      resolveCacheDir(std::getenv("TAPELAB_CACHE_DIR"), std::getenv("XDG_CACHE_HOME"), std::getenv("HOME"));
  // Under a launcher each process of a host takes its own GPU by default (api/ranks.h).
  for (const char* local : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"})
    if (const auto v = variable(local)) c.engineSettings.deviceSlot = static_cast<unsigned>(parseUnsigned(*v, local, 0, 1'000'000));
  // Which drivers the loader sees picks the device as much as our selector does.
  c.engineSettings.vulkan.loaderKey =
      variable("VK_DRIVER_FILES").value_or("") + '\n' + variable("VK_ICD_FILENAMES").value_or("");
}

}  // namespace

void preferFlagsOverVariables(RunConfig& c, const std::function<bool(const char* variable)>& byFlag) {
  if (!c.plan && c.planFile.empty()) return;
  struct Maker {
    const char* variable;
    const char* flag;
    bool set;
    void (*drop)(RunConfig&);
  };
  const Maker makers[] = {
      {"TAPELAB_STRATEGY", "--strategy", c.strategy.has_value(), [](RunConfig& r) { r.strategy.reset(); }},
      {"TAPELAB_CKPT", "--checkpoint", c.checkpoint.mode != Checkpoint::Mode::Auto,
       [](RunConfig& r) { r.checkpoint = Checkpoint::automatic(); }},
      {"TAPELAB_SEGLEN", "--seglen", c.segLen > 0, [](RunConfig& r) { r.segLen = 0; }},
      {"TAPELAB_INNER", "--inner", c.innerSegments > 0, [](RunConfig& r) { r.innerSegments = 0; }},
      {"TAPELAB_BUDGET", "--budget", c.budget > 0, [](RunConfig& r) { r.budget = 0; }},
  };
  const std::string because = " (flags beat variables)";
  if (c.plan && !c.planFile.empty() && !byFlag("TAPELAB_PLAN")) {  // plan= data beats the variable's file
    c.notUsed.push_back("TAPELAB_PLAN: not used: the plan given replaces it" + because);
    c.planFile.clear();
  }
  const bool planByFlag = c.plan.has_value() || byFlag("TAPELAB_PLAN");
  std::string makerFlags;
  for (const Maker& m : makers)
    if (m.set && byFlag(m.variable)) makerFlags += (makerFlags.empty() ? "" : ", ") + std::string(m.flag);
  if (planByFlag) {
    for (const Maker& m : makers)
      if (m.set && !byFlag(m.variable)) {
        m.drop(c);
        c.notUsed.push_back(std::string(m.variable) + ": not used: the plan given (--plan) replaces it" + because);
      }
  } else if (!makerFlags.empty()) {
    c.notUsed.push_back("TAPELAB_PLAN: not used: " + makerFlags + " given instead" + because);
    c.planFile.clear();
  }
}

RunConfig RunConfig::fromEnvironment() {
  RunConfig c;
  applyEnvironment(c, {Scope::Run, Scope::Dispatch, Scope::Engine});
  return c;
}

RunConfig RunConfig::fromEnvironmentWithoutRunKnobs() {
  RunConfig c;
  applyEnvironment(c, {Scope::Dispatch, Scope::Engine});
  return c;
}

EngineSettings engineSettingsFromEnvironment() {
  RunConfig c;
  applyEnvironment(c, {Scope::Engine});
  return c.engineSettings;
}

std::optional<std::string> knobValue(const std::string& name) {
  for (const Knob& k : knobTable())
    if (name == k.variable) return variable(k.variable);
  throw std::logic_error("knobValue: " + name + " is not in api/knobs.cpp's table");
}

namespace {

// TAPELAB_* variables read by test harnesses and scripts, not by tapelab (tests/, properties/, fuzz/,
// scripts/, experiments/): set in the environment tapelab runs in, never a typo.
constexpr const char* kHarnessVariables[] = {
    "TAPELAB_SOURCE_DIR", "TAPELAB_COMMIT", "TAPELAB_BIN", "TAPELAB_UPDATE_GOLDEN", "TAPELAB_FUZZ_VERBOSE",
    "TAPELAB_CPUJIT_TEST_CHILD", "TAPELAB_PATHS_BENCH", "TAPELAB_COMPILE_BENCH"};
constexpr const char* kHarnessPrefixes[] = {"TAPELAB_PROPERTY_", "TAPELAB_VULKAN_PIPELINE_TEST_"};

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> unknownVariables() {
  std::vector<std::string> known;
  for (const Knob& k : knobTable()) known.emplace_back(k.variable);
  for (const Retired& r : kRetired) known.emplace_back(r.variable);
  for (const char* h : kHarnessVariables) known.emplace_back(h);
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("TAPELAB_", 0) != 0 || std::find(known.begin(), known.end(), name) != known.end()) continue;
    if (std::any_of(std::begin(kHarnessPrefixes), std::end(kHarnessPrefixes),
                    [&](const char* p) { return name.rfind(p, 0) == 0; }))
      continue;
    std::string nearest;
    size_t best = 3;  // a suggestion within two edits
    for (const std::string& k : known)
      if (const size_t d = editDistance(name, k); d < best) {
        best = d;
        nearest = k;
      }
    out.push_back(name + " is set but tapelab reads no such variable (ignored" +
                  (nearest.empty() ? std::string(")") : "; did you mean " + nearest + "?)"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool startedByMpirun() {
  return variable("OMPI_COMM_WORLD_SIZE") || variable("PMI_SIZE") || variable("PMIX_RANK");
}

uint64_t envUnsigned(const char* name, uint64_t fallback, uint64_t lo, uint64_t hi) {
  const auto v = variable(name);
  return v ? parseUnsigned(*v, name, lo, hi) : fallback;
}

}  // namespace tapelab
