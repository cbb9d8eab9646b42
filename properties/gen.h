// rapidcheck generators: random tapes, plans and markets.
//
// A tape is generated as a TapeSpec (a list of Steps, each a handful of
// integers and one double) and built deterministically by buildTape. Any
// TapeSpec builds a valid tape: argument choices are back-offsets taken modulo
// the current node count, draw indices are any 32-bit value, so rapidcheck's
// shrinking (drop steps, shrink numbers towards 0 = "const", "previous node",
// "draw 0") always yields a valid and smaller tape. A failing case prints the
// built tape in the .tape format (showValue), replayable with `tapelab run`.
//
// Modes:
//   Wild         for the exactness properties. The tape's wildness (0..4)
//                sets how far constants and inputs reach (|x| <= 16, 1e3,
//                then any double incl. DBL_MAX; signed zeros and subnormals
//                always) and what share of the steps skip the guards below
//                (none, about 2, about 10, a quarter, all), so low wildness gives finite
//                results through special values and high wildness Inf/NaN.
//   Conditioned  values stay moderate by construction (intervals, bound.h):
//                log/sqrt of x when x >= 1/4 else of x*x + c, division by
//                |y| >= 1/4 else by y*y + c, exp of arguments scaled into
//                [-4, 4], products and sums of scaled arguments; inputs in
//                [kInputLo, kInputHi]. Kinks (max/min/abs) allowed.
//   Smooth       Conditioned without kinks: adjoints are smooth functions of
//                the inputs (accuracy of adjoints, finite differences).
#pragma once
#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "engine/engine.h"
#include "planner/plan.h"
#include "tape/tape.h"

namespace tapelab::props {

enum class TapeMode { Wild, Conditioned, Smooth };
const char* toString(TapeMode m);

struct Step {
  int kind = 0;        // 0..99: which op (see gen.cpp kindToOp); 0 = const
  uint32_t a = 0, b = 0;  // argument back-offsets: node i-1-(a mod i); >= 2^31: input a-2^31
  uint32_t c = 0;         // the third argument's (select)
  double value = 0;    // const value / input default / the c of x*x + c
  uint32_t draw = 0;   // randn draw index
  uint32_t salt = 0;   // 0..1023: a Wild step skips the guards when salt >= 1024 - its tape's bypass share
};

struct TapeSpec {
  TapeMode mode = TapeMode::Wild;
  std::vector<double> inputs;  // leading inputs' defaults (more may be interspersed)
  std::vector<Step> steps;
  uint32_t outputBack = 0;     // output = node n-1-(outputBack mod n)
  uint32_t wildness = 0;       // Wild: 0..4 (see above); 0 otherwise
};

Tape buildTape(const TapeSpec& spec);

// Tapes of up to about `maxNodes` steps at rapidcheck's largest size.
rc::Gen<TapeSpec> genTapeSpec(TapeMode mode, int maxNodes);
// A value for a constant or an input in the given mode (Wild: the specials).
rc::Gen<double> genValue(TapeMode mode);
// `count` markets of `inputs` values each for tapes of `spec`'s mode: in
// conditioned modes inside [kInputLo, kInputHi] with room for finite-difference
// steps; in Wild mode the values of its wildness.
rc::Gen<std::vector<std::vector<double>>> genMarkets(const TapeSpec& spec, int count, int inputs);

// A plan: strategy index into strategies(), strategies().size() for random
// cut positions, or strategies().size() + 1 for random cuts each cut again
// (nested: sub-cuts, chains, up to three levels), strategies().size() + 2 for a
// per-value plan keeping random values over random blocks; raw numbers mapped onto the

// requested count; revolve on a tape without draws becomes random nested cuts.
struct PlanSpec {
  uint32_t strategy = 0;
  uint32_t segments = 0;  // requested count: 1 + segments mod n
  uint32_t segLen = 0;    // uniform: 0 = derive, else 1 + segLen mod n
  std::vector<uint32_t> cuts;  // random cuts: positions mod n
  std::vector<uint32_t> nest;  // random nested cuts: read as a stream (buildPlan)
};
rc::Gen<PlanSpec> genPlanSpec();
Plan buildPlan(const Tape& tape, const PlanSpec& spec);
std::string describePlan(const Plan& plan);

// A checkpointed kernel: kind (not plain) and plan. Its layout and market order are fields of the
// configuration, which genConfig and genSameBitsConfig draw.
struct CkptSpec {
  KernelKind kind = KernelKind::Register;
  PlanSpec plan;
};
// Checkpointed kinds among `kinds`; empty when the engine only has plain.
std::vector<KernelKind> checkpointedKinds(const std::vector<KernelKind>& kinds);
rc::Gen<CkptSpec> genCkptSpec(const std::vector<KernelKind>& kinds);

// Kernel options for `spec` on `tape` (plan built by buildPlan).
// perValuePlans false (EngineCaps::perValuePlans): a per-value plan is replaced by the segment plan
// of its bounds, so that an engine that refuses the family still gets a checkpointed kernel.
KernelOptions checkpointedOptions(const Tape& tape, Precision precision, const CkptSpec& spec, bool perValuePlans = true);
// A kernel configuration for `engine` (engine/config.h): every field that applies to it drawn from its
// search values (ConfigField::search), the math contract among those the engine has in `precision`.
rc::Gen<KernelConfig> genConfig(const std::string& engine, Precision precision);
// `base` with every field that keeps the bits (keepsBits) drawn again: a kernel that must give base's bits.
rc::Gen<KernelConfig> genSameBitsConfig(const KernelConfig& base, const std::string& engine);
// One line each, numbers with 17 significant digits, for RC_LOG.
std::string describeOptions(const KernelOptions& o);
std::string describeMarkets(const std::vector<std::vector<double>>& markets);

void showValue(const TapeSpec& spec, std::ostream& os);
void showValue(const PlanSpec& spec, std::ostream& os);
void showValue(const CkptSpec& spec, std::ostream& os);
void showValue(TapeMode mode, std::ostream& os);

}  // namespace tapelab::props
