// A kernel's configuration: every choice of how an engine writes and launches a kernel for a
// (tape, plan), as one typed value with a canonical text form, in the spirit of Halide's Target:
//
//   lanes=1,sums=registers,markets=loop,draws=stored,math=ieee,...
//
// prints and parses back, lands in every result (--json, the drivers' CSVs, --dump headers) and in
// every kernel cache key (GPU kernels print it in their source's header; cpu-jit's key hashes it).
//
// KernelConfig{} is a neutral baseline every engine accepts (cheap to compile: what tests start
// from); an engine's defaults (defaultConfig) are what a user who sets nothing gets.
//
// The fields are one table (configFields() in config.cpp): each names the engines it applies to, its
// values, its default per engine and whether it changes a result's bits (and relative to what). A
// front end starts from an engine's defaults (defaultConfig), applies the user's text
// (applyConfigText: a field the engine has no use for is an error naming both), and hands the value
// down in KernelOptions::config. An engine reads the fields it knows and nothing else.
//
// Adding a field: a member here, a row in configFields() (config.cpp), where it acts (the GPU
// emitter's storage pass gpu/codegen/storage.cpp or its printer emit.cpp, an engine's runtime), and
// a test (ARCHITECTURE.md, "Add a kernel field").
#pragma once
#include <string>
#include <vector>

namespace tapelab {

// Where a GPU kernel keeps each lane's Kahan sums across its paths: registers or workgroup-local
// memory. Same operations, same order: same bits.
enum class KahanPlace { Registers, Local };
// The accuracy contract of exp, log, sqrt and division: the language's correctly rounded or
// library functions (ieee: CUDA's expf, OpenCL C's full profile, C++), the hardware's approximate
// instructions (approx: __expf, native_exp, ...), or GLSL.std.450's precision, the only one a
// Vulkan shader can ask for (glsl: exp/log within 3 + 2|x| ulp, division 2.5 ulp).
enum class MathContract { Ieee, Approx, Glsl };
// A multi-market register kernel's markets: one copy of the code per market, or a rolled loop.
enum class MarketCode { Copies, Loop };
// A checkpointed kernel's draws: Philox again where a segment is recomputed, the forward sweep's
// stored, or every draw of the path computed first into the scratch buffer (prefill), both sweeps
// reading them.
enum class DrawSource { Redraw, Stored, Prefill };
// Whether the draws of a checkpointed kernel with Greeks have scratch slots (stored, prefill).
inline bool drawsInScratch(DrawSource d) { return d != DrawSource::Redraw; }
// CUDA: where each dispatch's partial sums are added (in double, in block order: the same bits).
enum class SumsPlace { Device, Beside, Host };

struct KernelConfig {
  int workgroup = 64;                             // lanes per workgroup, a power of two (GPU)
  int lanes = 4;                                  // paths each lane prices per dispatch (GPU)
  KahanPlace sums = KahanPlace::Local;            // GPU
  MarketCode markets = MarketCode::Copies;        // GPU register kernels, several markets, sequential
  DrawSource draws = DrawSource::Redraw;          // GPU checkpointed kernels with Greeks
  int prefillAhead = 0;                           // GPU, draws=prefill: segments ahead the forward sweep loads draws
  MathContract math = MathContract::Ieee;         // every engine (its allowed values differ)
  bool philoxUnrolled = false;                    // GPU: Philox's ten rounds unrolled or a rolled loop
  bool loopsRolled = false;                       // GPU forward-only kernels: the tape's time loop rolled
  bool closedForms = false;                       // GPU tangent kernels: no tangent for values homogeneous in an input
  bool tangentFma = false;                        // GPU tangent kernels: a tangent's terms summed by fused multiply-adds
  bool opaque = true;                             // GPU: the opaque identity (off: experiments only)
  int minBlocks = 0;                              // CUDA, HIP: __launch_bounds__'s second bound (0: none)
  bool sharedConstants = true;                    // CUDA, HIP, markets=loop: lane-invariant arrays shared
  bool outlineDraws = false;                      // GPU: Philox and Box-Muller not inlined
  bool sharedInputs = true;                       // GPU, several markets: what the markets share computed once
  SumsPlace cudaSums = SumsPlace::Device;         // CUDA
  int jitChunk = 256;                             // cpu-jit: most nodes per generated function
  int jitPart = 4096;                             // cpu-jit: most nodes per translation unit

  bool operator==(const KernelConfig&) const = default;
};

const char* toString(KahanPlace p);
const char* toString(MathContract m);

// One field of the table.
struct ConfigField {
  const char* name;     // "lanes", "cuda.sums"
  const char* values;   // what it takes: "1..64", "registers|local|global"
  const char* engines;  // comma-separated engine names it applies to; "*": every engine
  // "same bits" or what a result's bits depend on: kernels compared for bits must share it.
  const char* bits;
  const char* help;     // one sentence
  // Per-engine defaults that differ from KernelConfig{}'s: "engine=value;engine=value"; an engine
  // name with ":cpu" applies where the engine is served by a CPU (lavapipe, PoCL), with "@1" to
  // kernels of one market per dispatch (the engine switches a field on where it pays: the article's
  // way). Rows apply in order, so a qualified row follows its engine's plain one.
  const char* defaults;
  // The values a search tries (tapelab tune) and the properties draw, comma-separated; "": every value
  // of an enumeration ("a|b|c").
  const char* search;
  std::string (*get)(const KernelConfig&);
  // Parses `value` into the config; throws std::invalid_argument "<what>: ..." naming the values.
  void (*set)(KernelConfig&, const std::string& value, const std::string& what);
};
const std::vector<ConfigField>& configFields();
const ConfigField* findConfigField(const std::string& name);  // nullptr when none
// The values a search tries for `field` (ConfigField::search, else its enumeration's values).
std::vector<std::string> searchValues(const ConfigField& field);
// Whether every value of the field gives the same bits (ConfigField::bits is "same bits").
bool keepsBits(const ConfigField& field);
bool fieldAppliesTo(const ConfigField& field, const std::string& engine);

// The engine's defaults: KernelConfig{} with the table's per-engine values (`cpuDevice`: the
// ":cpu" rows too; `markets`, per dispatch: the "@1" rows where it is 1). Engines the table does not
// name get KernelConfig{} (their fields are moot).
KernelConfig defaultConfig(const std::string& engine, bool cpuDevice = false, int markets = 0);

// The canonical text of `config` for `engine`: every field that applies to it, in table order,
// "name=value" joined by commas. Empty for an engine no field applies to.
std::string configText(const KernelConfig& config, const std::string& engine);
// The same with every field of the table (engine-neutral: what tests and caches may print).
std::string configTextAll(const KernelConfig& config);

// Applies "name=value,name=value" to `config` (empty text: no change). Throws std::invalid_argument
// "<what>: ..." for a malformed item, an unknown field (naming the fields), a value the field does
// not take, a field given twice, or a field that does not apply to `engine` (naming the engines it
// applies to; engine "": not checked). Returns the names of the fields the text set.
std::vector<std::string> applyConfigText(KernelConfig& config, const std::string& text, const std::string& engine,
                                         const std::string& what = "--config");

// Where a config's math contract is not one `engine` supports (vulkan: glsl; the C dialects and
// CPU engines: ieee, and approx on cuda, hip and opencl fp32): a one-line reason, else "".
std::string mathProblem(const KernelConfig& config, const std::string& engine, bool fp32);
// A field's value that `engine` cannot give in this precision: today only math's (mathProblem); a one-line
// reason, else "". What every front end checks before emitting.
std::string configProblem(const KernelConfig& config, const std::string& engine, bool fp32);

}  // namespace tapelab
