// Every knob tapelab reads from the environment, in one table, read in one
// place (knobs.cpp: the only getenv in the libraries). A front end turns the
// variables into plain structs once, overrides them with its flags, and carries
// them down: RunConfig for the run (with the kernel's configuration as text, one
// variable: TAPELAB_CONFIG, engine/config.h), DispatchOptions in KernelOptions for
// how a run is dispatched, EngineSettings for an engine's factory (api/registry.h).
// No engine reads the environment.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/settings.h"
#include "tape/products/products.h"

namespace tapelab {

// --checkpoint / TAPELAB_CKPT: off, auto, or a segment count (1 = off).
struct Checkpoint {
  enum class Mode { Off, Auto, Segments };
  Mode mode = Mode::Auto;
  int segments = 0;  // Mode::Segments: the count, >= 1

  static Checkpoint off() { return {Mode::Off, 0}; }
  static Checkpoint automatic() { return {Mode::Auto, 0}; }
  static Checkpoint count(int n) { return {Mode::Segments, n}; }
  // "off", "auto" or a positive integer; else std::invalid_argument
  // "<what>: expected off, auto or a positive segment count, got '<text>'".
  static Checkpoint parse(const std::string& text, const std::string& what);
  std::string text() const;  // "off", "auto" or the count
  bool operator==(const Checkpoint&) const = default;
};

// What a front end resolves for a run: the kernel it asks for, the engine, and
// the knobs carried down to both.
struct RunConfig {
  std::string engine = "reference";
  std::optional<Precision> precision;      // default: the engine's (fp32 on GPUs, fp64 on CPUs)
  bool greeks = true;
  Checkpoint checkpoint;                   // default auto
  int ckptNodes = 768;                     // auto: checkpoint tapes of at least this many nodes
  int segments = 16;                       // auto's segment count (rolled register kernels: planner/strategies.h rolledSegmentCount)
  std::optional<std::string> strategy;     // default: window (uniform for scratch kernels, periodic where segments roll)
  int segLen = 0;                          // scratch / uniform: 0 = max(48, round(sqrt(n)))
  std::optional<KernelKind> kernel;        // default: plain, or register when checkpointing
  std::vector<std::string> wrt;            // tangent kernel: the inputs to differentiate by (empty: all)
  std::string wrtWhat = "--wrt";           // who gave wrt, for messages: the flag or TAPELAB_WRT
  std::string dumpDir;
  std::string planFile;                    // a plan file to run instead of a strategy's plan
  std::optional<Plan> plan;                // a plan given as data (the Python module), likewise; wins over planFile
  int32_t budget = 0;                      // budget strategy: peak_live limit (0: none given)
  int innerSegments = 0;                   // two-level strategy: sub-segments per segment (0: 4)
  std::string strategyCommand;             // strategy cmd: a strategy process (planner/external.h); implies it
  double solveSeconds = 60;                // exact strategy: the solver's time limit
  std::string solveClock = "wall";         // exact strategy: the clock of that limit, wall or cpu (PlanOptions)
  // The kernel's configuration as given (--config, TAPELAB_CONFIG: NAME=VALUE,...), parsed once where
  // it is given (parseConfigText; its `what` names who gave it); resolveJobConfig applies it over the
  // engine's defaults (and a tuned winner), checking each field applies there.
  ConfigRequest userConfig;
  // --max-nodes / TAPELAB_MAX_NODES: the largest built-in product tape a front end records, checked
  // against the product's estimate before recording (tape/products/products.h).
  uint64_t maxNodes = static_cast<uint64_t>(products::kDefaultMaxNodes);
  DispatchOptions dispatch;                // into KernelOptions::dispatch
  // Launches short enough on the device at hand that Ctrl-C stops a run within ~50 ms
  // (DispatchOptions::launchPaths, unless set): the Python module's runs, whose caller waits for them.
  bool promptInterrupts = false;
  // --checkpoint auto with no plan asked for: use the tuning cache's winner for the job when there is
  // one (api/tuning.h); false (--untuned, the tuner's own baseline): the engine's defaults.
  bool useTuned = true;
  EngineSettings engineSettings;           // to the engine's factory
  // Requests dropped before the kernel is resolved, and why (a variable a flag overrode:
  // preferFlagsOverVariables); resolveKernel lists them first in the result's "not used".
  std::vector<std::string> notUsed;

  // Defaults overridden by every variable of knobTable(). Throws
  // std::invalid_argument "<VARIABLE>: <why>" for a malformed value.
  static RunConfig fromEnvironment();
  // The same without the run's variables (Scope::Run): for a front end that binds each of them
  // to its flag (cli/options.h), so that a flag given wins even over a malformed variable.
  static RunConfig fromEnvironmentWithoutRunKnobs();
};

// Flags beat variables across knobs too. A plan (--plan FILE, TAPELAB_PLAN, or one given as data)
// replaces what makes one: a strategy, a segment count (--checkpoint, off included), --seglen,
// --inner and --budget. Where the two sides meet and one of them was given as flags (or Python
// keywords) and the other only by variables, the variables' values are dropped, each listed in
// c.notUsed ("TAPELAB_STRATEGY: not used: --plan replaces it (flags beat variables)"); where both
// sides came from flags, or both from variables, they stay for resolveKernel to refuse (one line).
// `byFlag(variable)`: whether that variable's knob got its value from a flag or keyword.
void preferFlagsOverVariables(RunConfig& c, const std::function<bool(const char* variable)>& byFlag);

// One environment variable: its flag where a command has one, what it sets
// (a flag's help text), and how its text is parsed into a RunConfig, from the
// variable or from the flag (nullptr: read by the front end itself, or combined
// with others: see knobs.cpp).
struct Knob {
  // Run: what a front end asks for (most have a flag; TAPELAB_CONFIG is the kernel's whole
  // configuration); Dispatch: how a run is cut into dispatches; Engine: its factory's settings.
  enum class Scope { Run, Dispatch, Engine };
  const char* variable;
  const char* flag;     // "" when none
  const char* meaning;
  Scope scope;
  // `what` names the value's source in messages: the variable, or the flag it came from.
  void (*apply)(RunConfig& config, const std::string& value, const char* what);
};
const std::vector<Knob>& knobTable();

// The text of a variable knobTable() lists; nullopt when unset or empty: for a
// front end that reads a run knob itself (the Python module's paths and seed).
// Throws std::logic_error for a variable the table does not list.
std::optional<std::string> knobValue(const std::string& variable);

// One line for each TAPELAB_* variable of the environment that tapelab does not read (not a knob
// of the table, not a retired one, not a test harness's): "TAPELAB_PATH is set but tapelab reads no
// such variable (ignored; did you mean TAPELAB_PATHS?)". Front ends warn with them, the CLI and the
// drivers on stderr ("tapelab: warning: ..."), the Python module as a RuntimeWarning at import: a
// misspelt variable is never silently a default. (An unknown name passed as an argument, Python's
// knobs={...}, is an error, as an unknown flag is.)
std::vector<std::string> unknownVariables();

// A flag retired with its variable (--layout, --market-order: fields of the kernel's configuration now),
// as the one line a front end says instead of "unknown flag": "--layout is retired: use --config
// layout=aos (tapelab config --list)" (`value`: the value given, where it is one the field takes).
// nullopt for any other flag.
std::optional<std::string> retiredFlag(const std::string& flag, const std::string& value = "");

// Whether mpirun/mpiexec started this process (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK is
// set): then api/ranks.h starts MPI.
bool startedByMpirun();

// The engine-level part of RunConfig::fromEnvironment() alone (Scope::Engine).
EngineSettings engineSettingsFromEnvironment();

// The unsigned integer in variable `name` (decimal, or hex after 0x); `fallback`
// when unset or empty. Anything else, or a value outside [lo, hi], throws
// std::invalid_argument naming the variable. For harnesses' own knobs
// (properties/); tapelab's knobs are parsed this way through the table.
uint64_t envUnsigned(const char* name, uint64_t fallback, uint64_t lo = 0, uint64_t hi = UINT64_MAX);

// Parsers shared by flags and variables; throw std::invalid_argument("what: why").
KernelKind parseKernelKind(const std::string& s, const std::string& what);
std::vector<std::string> parseNameList(const std::string& s, const std::string& what);  // "a,b,c"; no empty names
int parsePositiveInt(const std::string& s, const std::string& what);
// Decimal or 0x-hex in [lo, hi]: "what: expected ..., got 's'".
uint64_t parseUnsigned(const std::string& s, const std::string& what, uint64_t lo = 0, uint64_t hi = UINT64_MAX);
// Seconds as a decimal ("600", "0.5", "1e-6"), 0 to 1e9 (0 = no limit): "what: expected seconds ..., got 's'".
double parseSeconds(const std::string& s, const std::string& what);
// A path count (--paths, TAPELAB_PATHS, Python's paths=): a decimal integer or a whole number
// written as 1e6, from 1 to kMaxPaths (2^48, engine/engine.h): "what: expected ..., got 's'".
uint64_t parsePathCount(const std::string& s, const std::string& what);

}  // namespace tapelab
