// The C++ front door:
//
//   auto r = MonteCarlo::of(products::asianCall()).market(EquityMarket::atmOneYear())
//                .steps(252).greeks().fp32().on("vulkan").build().run(300000, 42);
//   r.price(); r.greek("spot"); r.stderrOf("spot"); r.pathsPerSecond();
//
// and the knobs every front end shares (RunConfig), resolved the same way for
// the CLI, the experiments and the tests: flags override TAPELAB_* variables,
// which override the defaults.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/engine.h"
#include "tape/products/products.h"

namespace tapelab {

// Checkpointing and kernel knobs.
struct RunConfig {
  std::string engine = "reference";
  std::optional<Precision> precision;      // default: the engine's (fp32 on GPUs, fp64 on CPUs)
  bool greeks = true;
  std::string checkpoint = "auto";         // "auto", "off" or a segment count (1 = off)
  int ckptNodes = 768;                     // auto: checkpoint tapes of at least this many nodes
  int segments = 16;                       // auto's segment count
  std::optional<std::string> strategy;     // default: window (uniform for scratch kernels)
  int segLen = 0;                          // scratch / uniform: 0 = max(48, round(sqrt(n)))
  std::optional<KernelKind> kernel;        // default: plain, or register when checkpointing
  ScratchLayout layout = ScratchLayout::SoA;
  std::string dumpDir;

  // Defaults overridden by TAPELAB_CKPT, TAPELAB_CKPT_NODES, TAPELAB_SEGLEN,
  // TAPELAB_STRATEGY, TAPELAB_KERNEL, TAPELAB_SCRATCH_LAYOUT, TAPELAB_DUMP,
  // TAPELAB_ENGINE. Throws std::invalid_argument naming the variable.
  static RunConfig fromEnvironment();
};

// Parsers shared by flags and variables; throw std::invalid_argument("what: why").
KernelKind parseKernelKind(const std::string& s, const std::string& what);
ScratchLayout parseLayout(const std::string& s, const std::string& what);
int parsePositiveInt(const std::string& s, const std::string& what);

// The kernel a RunConfig asks for on this tape: kind, plan, precision.
KernelOptions resolveKernel(const Tape& tape, const RunConfig& config, const EngineCaps& caps);

struct Result {
  std::vector<std::string> inputNames;
  RunResult run;
  KernelOptions kernel;
  std::string engine;
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
  const Tape& tape() const { return tape_; }
  KernelStats stats() const { return kernel_->stats(); }
  std::vector<double> inputs;  // the market priced by run()

 private:
  friend class MonteCarlo;
  Tape tape_;
  KernelOptions options_;
  std::string engine_;
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
  Pricer build() const;  // throws std::runtime_error / std::invalid_argument

 private:
  std::optional<products::Product> product_;
  std::optional<Tape> tape_;
  int steps_ = 0;
  int markets_ = 1;
  std::vector<std::pair<std::string, double>> sets_;
  RunConfig config_ = RunConfig::fromEnvironment();
};

}  // namespace tapelab
