// The C++ front door:
//
//   auto r = MonteCarlo::of(products::asianCall()).market(EquityMarket::atmOneYear())
//                .steps(252).greeks().fp32().on("vulkan").build().run(300000, 42);
//   r.price(); r.greek("spot"); r.stderrOf("spot"); r.pathsPerSecond();
//
// and the knobs every front end shares (RunConfig, api/knobs.h), resolved the
// same way for the CLI, the experiments and the tests: flags override TAPELAB_*
// variables, which override the defaults.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/knobs.h"
#include "api/tuning.h"
#include "engine/engine.h"
#include "planner/tangent_chunk.h"
#include "tape/products/products.h"

namespace tapelab {

// The kernel a RunConfig asks for on this tape: kind, plan, precision, and the
// config's dump directory and kernel knobs. `markets` (per dispatch) sets the
// budget strategy's default for register kernels (planner: registerBudget).
// With config.useTuned, --checkpoint auto and no strategy, plan or scratch/tangent kind asked for, a
// tuned winner for the job (api/tuning.h) gives the config (the user's --config text still applies
// over it) and, where its kind is the one asked for, the plan; *tunedFrom is then its cache file with
// its margin over the defaults, the noise it beat and its date (tunedNote).
// *notUsed gets one line per request the kernel does not follow (a --strategy, --seglen, --budget or
// --inner given on a tape auto checkpointing leaves whole), naming the flag that forces it.
// With no kernel, checkpoint, strategy or plan named, Greeks and no tuned winner, the kind is `auto`: the
// tangent kernel or the checkpointed adjoint, whichever planner/kind_model.h predicts faster for this tape,
// markets per dispatch and the inputs they share (`sharedInputs`); *kindWhy then says which and why.
// Without a tuned winner the configuration is then the defaults of the kind chosen (defaultConfig's
// `kind`: engine/config.cpp's kind-qualified defaults) with the user's fields over them.
KernelOptions resolveKernel(const Tape& tape, const RunConfig& config, const EngineCaps& caps, int markets = 1,
                            std::string* tunedFrom = nullptr, std::vector<std::string>* notUsed = nullptr,
                            std::string* kindWhy = nullptr, const std::vector<int>& sharedInputs = {});

// A tangent kernel's size before it is written (issue 49): a term per differentiated input a node's argument
// depends on, bounded like a tape's nodes by `maxNodes` (--max-nodes) a kernel at a time (config
// tangent_chunk: each chunk's, engine/tangent_chunks.h). The first chunk over it, with its terms; none if all fit.
struct OversizedChunk {
  size_t inputs = 0;
  int64_t terms = 0;
};
// auto's tangent chunk (planner/tangent_chunk.h) for o's tangent kernel: where o's config names none (0), the
// user did not name the field (a tangent_chunk=0 given keeps one kernel), the engine writes GPU kernels and o
// computes Greeks; else nullopt. Its chunk is 0 where one kernel is within the bound.
// At `markets` a dispatch sharing sharedInputs; none under MPI ranks (a split run takes one kernel).
std::optional<AutoTangentChunk> autoTangentChunkOf(const Tape& tape, const RunConfig& c, const KernelOptions& o,
                                                   int markets = 1, const std::vector<int>& sharedInputs = {});

std::optional<OversizedChunk> oversizedTangentChunk(const Tape& tape, const KernelOptions& options, uint64_t maxNodes);

// Where each part of a job came from: the engine's defaults (with --kernel auto's model for the kind),
// the tuning cache's entry, or the user (flags, variables, the API's arguments).
enum class Origin { Default, Tuned, User };
const char* toString(Origin o);
struct Provenance {
  Origin config = Origin::Default;       // the fields the user did not set: the defaults' or the tuned entry's
  std::vector<std::string> userFields;   // the fields the user set, over either
  Origin plan = Origin::Default;
  Origin kind = Origin::Default;
  std::string tunedEntry;                // the tuning cache file, where anything came from it
  // "config=tuned+user(lanes,math) plan=tuned kind=tuned": what every result prints.
  std::string text() const;
};

// One resolution of a job, for every front end (the CLI, the C++ API, Python, the drivers): the kernel
// (configuration, plan, kind), where each came from, and the notes resolveKernel fills.
struct ResolvedJob {
  KernelOptions options;
  Provenance from;
  std::string tuned;                  // tunedNote of the entry used, "" when none
  std::vector<std::string> notUsed;
  std::string kindWhy;
};
ResolvedJob resolveJob(const Tape& tape, const RunConfig& config, const EngineCaps& caps, int markets = 1,
                       const std::vector<int>& sharedInputs = {});

// The job's configuration alone (what resolveJob takes): the engine's defaults for `markets`, the
// tuning cache's winner over them where the run may use one (config.useTuned, --checkpoint auto, no
// strategy, plan, scratch or tangent kind asked for) and its configuration is one this engine gives in
// `precision` with the user's math contract, then the user's fields over either; checked
// (configProblem), throwing std::invalid_argument naming config.userConfig.what. `winner`: the entry
// taken, if any (an entry this version cannot read is not taken).
struct ConfigResolution {
  KernelConfig config;
  std::optional<TunedWinner> winner;
  Provenance from;           // config and userFields (and tunedEntry) filled
  std::string entryProblem;  // why an entry found was not taken ("" when none was found, or it was)
};
ConfigResolution resolveJobConfig(const Tape& tape, const RunConfig& config, const EngineCaps& caps, Precision precision,
                           int markets = 1);
// The kernel's configuration resolveKernel uses: the engine's (config.engine) defaults for `markets`
// per dispatch and the kernel `kind` ("": before a kind is chosen, none of a kind's own defaults), then
// config.userConfig, each field checked against the engine, then the math contract against the
// engine and `precision`. Throws std::invalid_argument naming config.userConfig.what.
KernelConfig resolveConfig(const RunConfig& config, const EngineCaps& caps, Precision precision, int markets = 1,
                           const std::string& kind = "");
// Whether a tuned winner of kind `winner` serves a `kind` kernel: the same family (the tangent kernel, or the
// plain and checkpointed kernels); across families its configuration was tuned for another kernel (its launch
// bound, its chunk), and the kind's own defaults run instead.
inline bool tunedWinnerServes(KernelKind winner, KernelKind kind) {
  return (winner == KernelKind::Tangent) == (kind == KernelKind::Tangent);
}
// The configuration of one kernel kind's rows of a job resolved once for all its rows (compare): where
// the job's configuration `job` came from the engine's defaults (`fromDefaults`), the kind's own
// defaults with the user's fields (resolveConfig's `kind`); a tuned winner's stays whole. Either way
// the fields that change bits are `bitsOf`'s, so that every row's bits compare with every other's.
KernelConfig kindRowConfig(const KernelConfig& job, bool fromDefaults, const RunConfig& config, const EngineCaps& caps,
                           Precision precision, int markets, KernelKind kind, const KernelConfig& bitsOf);

struct Result {
  std::vector<std::string> inputNames;
  RunResult run;
  KernelOptions kernel;
  std::string engine;
  std::string tuned;  // the tuning cache entry whose winner the kernel uses, and its margin (tunedNote); "" when none
  std::vector<std::string> notUsed;  // requests the kernel does not follow, and why (resolveKernel)
  std::string kindWhy;  // --kernel auto: which kind the model chose and why; "" when the kind was named or tuned
  Provenance provenance;  // where the configuration, plan and kind came from (resolveJob)
  double price(size_t market = 0) const { return run.markets.at(market).value; }
  double priceStderr(size_t market = 0) const { return run.markets.at(market).valueStderr; }
  double greek(const std::string& input, size_t market = 0) const;
  double greekStderr(const std::string& input, size_t market = 0) const;
  double pathsPerSecond() const { return run.seconds > 0 ? double(run.paths) / run.seconds : 0.0; }
};

class Pricer {
 public:
  Result run(uint64_t paths, uint64_t seed);
  // Several input sets in one dispatch per group of at most options().markets sets.
  Result runMarkets(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed);
  const KernelOptions& options() const { return options_; }
  const std::string& tuned() const { return tuned_; }  // Result::tuned
  const std::vector<std::string>& notUsed() const { return notUsed_; }  // Result::notUsed
  const std::string& kindWhy() const { return kindWhy_; }                // Result::kindWhy
  const Provenance& provenance() const { return provenance_; }          // Result::provenance
  const Tape& tape() const { return tape_; }
  KernelStats stats() const { return kernel_->stats(); }
  std::vector<double> inputs;  // the market priced by run()

 private:
  friend class MonteCarlo;
  Tape tape_;
  KernelOptions options_;
  std::string engine_;
  std::string tuned_;
  std::vector<std::string> notUsed_;
  std::string kindWhy_;
  Provenance provenance_;
  std::unique_ptr<Kernel> kernel_;
};

class MonteCarlo {
 public:
  static MonteCarlo of(products::Product product);
  static MonteCarlo of(Tape tape);
  MonteCarlo& market(const EquityMarket& m);  // sets spot/strike/vol/rate/maturity where the tape has them
  MonteCarlo& set(const std::string& input, double value);
  MonteCarlo& steps(int n);
  MonteCarlo& greeks(bool on = true);
  MonteCarlo& fp32();
  MonteCarlo& fp64();
  MonteCarlo& on(const std::string& engine);
  MonteCarlo& config(const RunConfig& c);
  MonteCarlo& markets(int m);
  // The input sets runMarkets will be given, where known before the kernel is built: the inputs every
  // dispatch's markets share (sharedInputsOf; a spot ladder: all but spot) go into
  // KernelOptions::sharedInputs, so a GPU kernel (config shared_inputs) computes what only they reach
  // once per path. runMarkets then refuses sets that differ in one of them.
  MonteCarlo& sets(const std::vector<std::vector<double>>& sets);
  Pricer build() const;  // throws std::runtime_error / std::invalid_argument

 private:
  std::optional<products::Product> product_;
  std::optional<Tape> tape_;
  int steps_ = 0;
  int markets_ = 1;
  std::vector<std::pair<std::string, double>> sets_;
  std::vector<std::vector<double>> known_;  // sets(): the input sets runMarkets will see
  // From the environment when first needed, unless config() gave one: a front end that binds
  // the run's variables to its flags passes its RunConfig, and a malformed variable its flag
  // overrode is never read.
  std::optional<RunConfig> config_;
  RunConfig& configured();
};

}  // namespace tapelab
