// A kernel's configuration: every choice of how an engine writes and launches a kernel for a
// (tape, plan), as one typed value with a canonical text form, in the spirit of Halide's Target:
//
//   lanes=1,sums=registers,markets=loop,draws=stored,math=ieee,...
//
// prints and parses back, lands in every result (--json, the drivers' CSVs, --dump headers) and in
// every kernel cache key (GPU kernels print it in their source's header; cpu-jit's key hashes it).
//
// KernelConfig{} is a neutral baseline every engine accepts (cheap to compile: what tests start
// from); an engine's defaults (defaultConfig) are what a user who sets nothing gets. The baseline is
// no engine's defaults on purpose: its sums=local, markets=copies, draws=redraw and philox=rolled are
// the code shapes every GPU engine's defaults turn away from, so the tests and goldens that start
// from it keep those shapes covered (the goldens print the baseline: changing it changes them). Its
// market_order=sequential and layout=soa are every engine's defaults too: what KernelOptions held
// before they were fields, which the tests that start from the baseline kept.
//
// The fields are one list of declarations (configFields() in config.cpp), each typed data: the engines
// it applies to, its values, its defaults per engine, CPU-served device and market count, whether it
// changes a result's bits (and relative to what), the fields it acts under (requirements) and its help. A
// front end starts from an engine's defaults (defaultConfig), applies the user's text
// (applyConfigText: a field the engine has no use for is an error naming both), and hands the value
// down in KernelOptions::config. An engine reads the fields it knows and nothing else.
//
// Adding a field: a member here, one declaration in configFields() (config.cpp), where it acts (the GPU
// emitter's storage pass gpu/codegen/storage.cpp or its printer emit.cpp, an engine's runtime), and
// a test (ARCHITECTURE.md, "Add a kernel field").
#pragma once
#include <functional>
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
// The scratch buffer's layout (a scratch kernel's values, stored or prefilled draws): each slot's lanes
// together (SoA, coalesced) or each lane's slots together (AoS). Same bits.
enum class ScratchLayout { SoA, AoS };
// Order of a multi-market kernel's reverse sweep inside each leaf block (gpu/codegen/emit.h): one
// market after another over the block's draws computed once, or every market's recompute and
// adjoints at once. Same bits either way.
enum class MarketOrder { Sequential, Joint };

// Which rolled loops read an array they do not write one trip ahead (gpu/codegen/loads_ahead.h): none (off),
// the market loops (on), every rolled loop (loops: the rolled segments' trips too), or the market loops with
// the arrays they write at each market's own elements too (rows: a market's adjoint rows), or the market loops
// and, into L2, the global buffer's elements the next trip of a rolled segments' loop reads (prefetch: the
// stored draws).
enum class AheadLoads { Off, Markets, Loops, Rows, Prefetch };

// config cuda.carveout's values besides a percentage: the driver's own split, and the least that keeps the blocks.
inline constexpr int kCarveoutDriver = -1;
inline constexpr int kCarveoutFit = -2;
// config market_unroll's value for every market of the loop.
inline constexpr int kUnrollWhole = 0;

struct KernelConfig {
  int workgroup = 64;                             // lanes per workgroup, a power of two (GPU)
  int lanes = 4;                                  // paths each lane prices per dispatch (GPU)
  KahanPlace sums = KahanPlace::Local;            // GPU (every GPU engine's default: registers; see above)
  MarketOrder marketOrder = MarketOrder::Sequential;  // GPU register and scratch kernels, several markets
  MarketCode markets = MarketCode::Copies;        // GPU register kernels, several markets, sequential
  DrawSource draws = DrawSource::Redraw;          // GPU checkpointed kernels with Greeks
  int prefillAhead = 0;                           // GPU, draws=prefill: segments ahead the forward sweep loads draws
  ScratchLayout layout = ScratchLayout::SoA;      // GPU kernels with a scratch buffer
  MathContract math = MathContract::Ieee;         // every engine (its allowed values differ)
  bool philoxUnrolled = false;                    // GPU: Philox's ten rounds unrolled or a rolled loop
  bool loopsRolled = false;                       // GPU kernels: the time loop (forward-only) or alike segments (register) rolled
  bool loopTripStep = false;                      // GPU, loops=rolled: a trip of one step, its draws carried
  bool closedForms = false;                       // GPU tangent kernels: no tangent for values homogeneous in an input
  bool tangentFma = false;                        // GPU tangent kernels: a tangent's terms summed by fused multiply-adds
  int tangentChunk = 0;                           // tangent kernels: most inputs one kernel differentiates by (0: all)
  bool opaque = true;                             // GPU: the opaque identity (off: experiments only)
  bool firstTermsSet = true;                      // GPU kernels with Greeks: an adjoint declared with its first term
  AheadLoads loadsAhead = AheadLoads::Off;        // OpenCL, CUDA, HIP: reads of unwritten arrays a trip ahead
  int workgroupRows = 0;                          // CUDA, HIP: a lane's array elements moved to workgroup memory
  int minBlocks = 0;                              // CUDA, HIP: __launch_bounds__'s second bound (0: none)
  int marketUnroll = 1;                           // OpenCL, CUDA, HIP: the market loops' trips unrolled together
  bool rolledAdjointsCopy = false;                // GPU register kernels, rolled segments, several markets
  bool sharedConstants = true;                    // CUDA, HIP, markets=loop: lane-invariant arrays shared
  bool outlineDraws = false;                      // GPU: Philox and Box-Muller not inlined
  bool sharedInputs = true;                       // GPU, several markets: what the markets share computed once
  SumsPlace cudaSums = SumsPlace::Device;         // CUDA
  int cudaDispatches = 4;                         // CUDA: the most dispatches one run is cut into
  int cudaCarveout = -1;                          // CUDA: the carveout asked for: a percent, kCarveoutDriver or kCarveoutFit
  int jitChunk = 256;                             // cpu-jit: most nodes per generated function
  int jitPart = 4096;                             // cpu-jit: most nodes per translation unit

  bool operator==(const KernelConfig&) const = default;
};

// The names of each enumeration's values (index = the enum's value): the one spelling of each, which
// toString, the text form and the docs read.
const char* toString(KahanPlace p);
const char* toString(MathContract m);
const char* toString(MarketCode m);
const char* toString(DrawSource d);
const char* toString(SumsPlace s);
const char* toString(ScratchLayout l);
const char* toString(MarketOrder o);
const char* toString(AheadLoads a);

// A default of one field that differs from KernelConfig{}'s: on `engine`, optionally only where a CPU
// serves it (lavapipe, PoCL), only for kernels of one market per dispatch, or only for kernels of one
// kind (the engine switches a field on where it pays: the article's way). A field's defaults apply in
// order, so a qualified one follows its engine's plain one.
struct FieldDefault {
  const char* engine;
  const char* value;       // in the field's spelling (tests parse every one)
  bool cpuDevice = false;  // only on a CPU-served device
  int markets = 0;         // 1: only at one market per dispatch; 0: any count
  const char* kind = "";   // engine/engine.h's toString of a kernel kind: only for that kind's kernels; "": any
};

// A field acts only where another field has a value (prefill_ahead where draws=prefill): elsewhere
// every value of it gives the same kernel. fieldActs checks these; the tuner skips such candidates.
struct FieldRequirement {
  const char* field;
  const char* value;
};

// The kernels a field acts on, where not every kernel (market_order: register and scratch kernels with
// Greeks at several markets per dispatch): elsewhere every value of it gives the same kernel.
struct FieldKernels {
  std::vector<std::string> kinds;  // engine/engine.h's toString of each kind; empty: every kind
  bool greeks = false;             // only with Greeks (a reverse sweep)
  bool severalMarkets = false;     // only at several markets per dispatch
};
// The kernel a configuration is for, as far as where a field acts depends on it: its kind ("": any, not
// checked), markets per dispatch (0: not checked) and whether it computes Greeks.
struct KernelShape {
  std::string kind;
  int markets = 0;
  bool greeks = true;
};

// One field: its declaration. configFields() holds them in text order.
struct ConfigField {
  const char* name;                // "lanes", "cuda.reduce"
  std::string values;              // what it takes, for people: "1..64", "registers|local"
  std::vector<std::string> choices;  // an enumeration's values in order; empty: an integer
  std::vector<std::string> engines;  // the engines it applies to; empty: every engine
  bool keepsBits = true;           // every value gives the same bits
  bool shapesKernel = true;        // false: the run around the kernel (its text is the same at every value)
  const char* bitsReason = "";     // else what a result's bits depend on: kernels compared for bits share it
  const char* help = "";           // one sentence
  std::vector<FieldDefault> defaults;
  std::vector<std::string> search;  // the values a search (tapelab tune) and the properties try; empty: every choice
  std::vector<FieldRequirement> requires_;
  FieldKernels kernels;            // the kernels it acts on (fieldActs)
  std::function<std::string(const KernelConfig&)> get;
  // Parses `value` into the config; throws std::invalid_argument "<what>: ..." naming the values.
  std::function<void(KernelConfig&, const std::string& value, const std::string& what)> set;
};
const std::vector<ConfigField>& configFields();
const ConfigField* findConfigField(const std::string& name);  // nullptr when none
// The values a search tries for `field` (ConfigField::search, else its choices).
std::vector<std::string> searchValues(const ConfigField& field);
// Whether every value of the field gives the same bits (ConfigField::keepsBits).
bool keepsBits(const ConfigField& field);
bool fieldAppliesTo(const ConfigField& field, const std::string& engine);
// The engines a field applies to, comma-separated, or "*" for every engine.
std::string fieldEngines(const ConfigField& field);
// "" when every requirement of `field` holds in `config` and it acts on `kernel`'s kind, Greeks and
// markets (FieldKernels; a shape's "" kind and 0 markets are not checked); else the first that does not,
// as "draws=prefill not in effect" or "one market per dispatch": then every value of the field gives the
// same kernel.
std::string fieldActs(const ConfigField& field, const KernelConfig& config, const KernelShape& kernel = {});

// The engine's defaults: KernelConfig{} with the fields' per-engine defaults (`cpuDevice`: those for
// a CPU-served device too; `markets`, per dispatch: those for one market where it is 1; `kind`: those
// for that kernel kind's kernels, "" none of them: the configuration before the kind is chosen). Engines
// no default names get KernelConfig{} (their fields are moot).
KernelConfig defaultConfig(const std::string& engine, bool cpuDevice = false, int markets = 0, const std::string& kind = "");
// The fields a kind-qualified default may not set: those that change bits (kernels of different kinds,
// each resolved with nothing set, must still give the same bits: checkpointed == plain, a tangent kernel's
// values == plain's), and what resolving a job reads before the kind is chosen (the kind model's inputs,
// the register kernel's default strategy), so that choosing the kind cannot change what chose it.
bool kindMayQualify(const ConfigField& field);

// The canonical text of `config` for `engine`: every field that applies to it, in table order,
// "name=value" joined by commas. Empty for an engine no field applies to.
std::string configText(const KernelConfig& config, const std::string& engine);
// The same with every field of the table (engine-neutral: what tests and caches may print).
std::string configTextAll(const KernelConfig& config);
// configText without the fields of the run around the kernel (ConfigField::shapesKernel false: cuda.reduce,
// cuda.dispatches, cuda.carveout): what a kernel's source names, so that the kernel, its text and its
// compiler cache entry are one for every value of those.
std::string kernelConfigText(const KernelConfig& config, const std::string& engine);

// Applies "name=value,name=value" to `config` (empty text: no change). Throws std::invalid_argument
// "<what>: ..." for a malformed item, an unknown field (naming the fields), a value the field does
// not take, a field given twice, or a field that does not apply to `engine` (naming the engines it
// applies to; engine "": not checked). Returns the names of the fields the text set.
std::vector<std::string> applyConfigText(KernelConfig& config, const std::string& text, const std::string& engine,
                                         const std::string& what = "--config");

// A configuration text parsed once, at the edge (--config, TAPELAB_CONFIG, Python's config=): the
// fields it names with their values. It travels inward as data; where the engine is known,
// applyConfigRequest checks each field applies to it and sets it.
struct ConfigRequest {
  KernelConfig values;              // the fields named, over KernelConfig{}
  std::vector<std::string> fields;  // the names it sets, in its order
  std::string what = "--config";    // who gave it, for messages
  bool empty() const { return fields.empty(); }
  bool operator==(const ConfigRequest&) const = default;
};
// Parses `text` without an engine (names and values); throws as applyConfigText does.
ConfigRequest parseConfigText(const std::string& text, const std::string& what = "--config");
// Every field of `config` that applies to `engine`: a request that fixes the whole configuration.
ConfigRequest wholeConfig(const KernelConfig& config, const std::string& engine, const std::string& what);
// The request's fields set in `config`; throws std::invalid_argument "<what>: field 'x' applies to ...,
// not to engine e" for a field `engine` has no use for (engine "": not checked).
void applyConfigRequest(KernelConfig& config, const ConfigRequest& request, const std::string& engine);
// The request as text, "name=value,..." in its order ("" when empty).
std::string requestText(const ConfigRequest& request);

// Where a config's math contract is not one `engine` supports (vulkan: glsl; the C dialects and
// CPU engines: ieee, and approx on cuda, hip and opencl fp32): a one-line reason, else "".
std::string mathProblem(const KernelConfig& config, const std::string& engine, bool fp32);
// A field's value that `engine` cannot give in this precision: today only math's (mathProblem); a one-line
// reason, else "". What every front end checks before emitting.
std::string configProblem(const KernelConfig& config, const std::string& engine, bool fp32);

}  // namespace tapelab
