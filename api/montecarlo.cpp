#include "api/montecarlo.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "api/ranks.h"
#include "api/registry.h"
#include "api/tune.h"
#include "engine/tangent_chunks.h"
#include "planner/kind_model.h"
#include "planner/tangent_chunk.h"
#include "planner/loops.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "tape/tangent.h"
#include "tape/textformat.h"

namespace tapelab {

namespace {

// What must match on every rank of a split run (api/ranks.h hashes it): the tape, the plan and
// what in the kernel's options or the engine changes a result's bits.
std::string kernelIdentity(const Tape& tape, const KernelOptions& o, const std::string& engine) {
  std::string text = writeTape(tape) + '\n' + planFileText(tape, o.plan) + '\n' + engine;
  for (const std::string& field :
       {std::string(toString(o.precision)), std::string(toString(o.kind)), std::to_string(o.greeks), std::to_string(o.markets),
        std::to_string(o.dispatch.pathOffset), configTextAll(o.config)})
    text += '\n' + field;
  return text;
}

std::string runIdentity(const std::vector<std::vector<double>>& sets, uint64_t paths, uint64_t seed) {
  std::string bytes = std::to_string(paths) + ' ' + std::to_string(seed);
  for (const auto& set : sets)
    bytes.append(reinterpret_cast<const char*>(set.data()), set.size() * sizeof(double));
  return bytes;
}

bool hasKind(const EngineCaps& caps, KernelKind kind) {
  for (KernelKind k : caps.kinds)
    if (k == kind) return true;
  return false;
}

// A plan file (or a plan given as data) replaces the strategy and the segment count: the engine runs
// exactly that plan (register kind unless --kernel says scratch; a one-segment plan is the plain kernel).
// What makes a plan, given beside one (cli's flags and variables have been reconciled by then:
// api/knobs.h preferFlagsOverVariables), is refused: nothing of it would be used.
KernelOptions withPlan(const Tape& tape, const RunConfig& c, const EngineCaps& caps, KernelOptions o) {
  for (const auto& [given, flag] : {std::pair{c.strategy.has_value(), "--strategy"},
                                    std::pair{c.checkpoint.mode != Checkpoint::Mode::Auto, "--checkpoint"},
                                    std::pair{c.segLen > 0, "--seglen"}, std::pair{c.innerSegments > 0, "--inner"},
                                    std::pair{c.budget > 0, "--budget"}})
    if (given) throw std::invalid_argument(std::string("--plan: the file's plan replaces ") + flag + "; give one of them");
  Plan plan = c.plan ? *c.plan : readPlanFile(c.planFile, tape);
  if (plan.bounds.empty() || plan.bounds.back() != tape.size())
    throw std::invalid_argument("--plan: the plan is not for this tape of " + std::to_string(tape.size()) + " nodes");
  const KernelKind kind = c.kernel.value_or(plan.segments() > 1 || plan.perValue ? KernelKind::Register : KernelKind::Plain);
  if (kind == KernelKind::Plain && (plan.segments() > 1 || plan.perValue))
    throw std::invalid_argument("--plan: a plan of " + std::to_string(plan.segments()) +
                                " segments runs on a register or scratch kernel, not --kernel plain");
  if (!hasKind(caps, kind)) throw std::invalid_argument(std::string("this engine has no ") + toString(kind) + " kernel");
  o.kind = kind;
  o.plan = kind == KernelKind::Plain ? plainPlan(tape) : std::move(plan);
  return o;
}

}  // namespace

std::optional<AutoTangentChunk> autoTangentChunkOf(const Tape& tape, const RunConfig& c, const KernelOptions& o,
                                                   int markets, const std::vector<int>& sharedInputs) {
  if (o.config.tangentChunk != 0 || !o.greeks || ranks::size() > 1) return std::nullopt;  // ranks: one kernel
  const std::vector<std::string>& named = c.userConfig.fields;
  if (std::find(named.begin(), named.end(), "tangent_chunk") != named.end()) return std::nullopt;
  if (!fieldAppliesTo(*findConfigField("loops"), c.engine)) return std::nullopt;  // a GPU engine's one source a kernel
  KernelOptions t = o;
  t.kind = KernelKind::Tangent;
  return autoTangentChunk(tape, differentiatedInputs(t, tape.numInputs()), o.config.loopsRolled && findLoop(tape).found(),
                          markets, markets > 1 && o.config.sharedInputs ? sharedInputs : std::vector<int>{});
}

namespace {

// The tangent kind has no plan: no reverse sweep, nothing to cut. A plan or segment count asked for is an error.
KernelOptions tangentKernel(const Tape& tape, const RunConfig& c, const EngineCaps& caps, KernelOptions o) {
  if (c.plan || !c.planFile.empty()) throw std::invalid_argument("--plan: the tangent kernel has no reverse sweep to cut");
  if (c.checkpoint.mode == Checkpoint::Mode::Segments && c.checkpoint.segments > 1)
    throw std::invalid_argument("--checkpoint: the tangent kernel has no reverse sweep to cut");
  if (!hasKind(caps, KernelKind::Tangent)) throw std::invalid_argument("this engine has no tangent kernel");
  o.kind = KernelKind::Tangent;
  o.plan = plainPlan(tape);
  for (const std::string& name : c.wrt) {
    const int k = tape.inputIndex(name);
    if (k < 0) {
      std::string known;
      for (const std::string& n : tape.inputNames) known += (known.empty() ? "" : ", ") + n;
      throw std::invalid_argument(c.wrtWhat + ": no input named '" + name + "' (inputs: " + known + ")");
    }
    if (std::find(o.wrt.begin(), o.wrt.end(), k) != o.wrt.end())
      throw std::invalid_argument(c.wrtWhat + ": input '" + name + "' given twice");
    o.wrt.push_back(k);
  }
  std::sort(o.wrt.begin(), o.wrt.end());
  return o;
}

// A tangent kernel's size before it is written, under its final configuration (its chunk: the user's, a tuned
// winner's or auto's): each chunk's derivative terms within --max-nodes (lmm-80 at every input: 5.5e6 terms,
// 193 MB of C++), whoever chose the kind.
void checkTangentSize(const Tape& tape, const RunConfig& c, const KernelOptions& o) {
  const std::optional<OversizedChunk> over = oversizedTangentChunk(tape, o, c.maxNodes);
  if (!over) return;
  char what[96];
  std::snprintf(what, sizeof what, "%.3g derivative terms", static_cast<double>(over->terms));
  throw std::invalid_argument(
      std::string(c.kernel ? "--kernel tangent" : "--kernel auto (the tangent kernel)") + ": the tangent kernel of " +
      (tape.name.empty() ? std::string("this tape") : tape.name) + " by " + std::to_string(over->inputs) +
      " inputs carries " + what + " (a node's by each input it depends on), over the bound of " +
      std::to_string(c.maxNodes) + " (--max-nodes, TAPELAB_MAX_NODES): differentiate by fewer in a kernel (--config " +
      "tangent_chunk=N, or --wrt), or let an adjoint kernel give every Greek in one reverse sweep");
}

// --seglen, --inner and --budget each shape one strategy's plan (uniform, two-level, budget). Given where
// the kernel's plan comes from elsewhere (`strategy`: the one that made it, "" when none did), each is
// listed in *notUsed with why: a request not followed is never silent.
void planKnobsNotUsed(const RunConfig& c, const std::string& strategy, const std::string& why,
                      std::vector<std::string>* notUsed) {
  if (!notUsed) return;
  struct Knob {
    bool given;
    const char* flag;
    const char* reader;
  };
  for (const Knob& k : {Knob{c.segLen > 0, "--seglen", "uniform"}, Knob{c.budget > 0, "--budget", "budget"},
                        Knob{c.innerSegments > 0, "--inner", "two-level"}})
    if (k.given && strategy != k.reader)
      notUsed->push_back(std::string(k.flag) + ": not used: " +
                         (why.empty() ? "only the " + std::string(k.reader) + " strategy reads it; this kernel's plan is " +
                                            strategy + "'s"
                                      : why));
}

}  // namespace

KernelConfig resolveConfig(const RunConfig& c, const EngineCaps& caps, Precision precision, int markets,
                           const std::string& kind) {
  KernelConfig config = defaultConfig(c.engine, caps.cpuDevice, markets, kind);
  applyConfigRequest(config, c.userConfig, c.engine);
  if (const std::string problem = configProblem(config, c.engine, precision == Precision::F32); !problem.empty())
    throw std::invalid_argument(c.userConfig.what + ": " + problem);
  return config;
}

KernelConfig kindRowConfig(const KernelConfig& job, bool fromDefaults, const RunConfig& c, const EngineCaps& caps,
                           Precision precision, int markets, KernelKind kind, const KernelConfig& bitsOf) {
  KernelConfig row = fromDefaults ? resolveConfig(c, caps, precision, markets, toString(kind)) : job;
  for (const ConfigField& f : configFields())
    if (!keepsBits(f)) f.set(row, f.get(bitsOf), f.name);
  return row;
}

const char* toString(Origin o) {
  switch (o) {
    case Origin::Default: return "default";
    case Origin::Tuned: return "tuned";
    case Origin::User: return "user";
  }
  return "?";
}

std::string Provenance::text() const {
  std::string user;
  for (const std::string& f : userFields) user += (user.empty() ? "" : ",") + f;
  return std::string("config=") + toString(config) + (user.empty() ? "" : "+user(" + user + ")") + " plan=" +
         toString(plan) + " kind=" + toString(kind);
}

ConfigResolution resolveJobConfig(const Tape& tape, const RunConfig& c, const EngineCaps& caps, Precision precision,
                                  int markets) {
  ConfigResolution r;
  r.config = resolveConfig(c, caps, precision, markets);
  r.from.userFields = c.userConfig.fields;
  // The tuner's job differentiates by every input; a --wrt subset is another job.
  const bool tunable = c.useTuned && c.checkpoint.mode == Checkpoint::Mode::Auto && !c.strategy && !c.plan &&
                       c.planFile.empty() && c.kernel != KernelKind::Scratch && c.wrt.empty();
  if (!tunable) return r;
  const auto w = loadTuned(c.engineSettings.cacheDir, tuningKey(tape, c.engine, caps, markets, precision, r.config.math, c.greeks));
  if (!w) return r;
  if (c.kernel && !tunedWinnerServes(w->kind, *c.kernel)) return r;  // a kind named of the other family: its defaults
  try {
    KernelConfig tuned = defaultConfig(c.engine, caps.cpuDevice, markets);
    applyConfigText(tuned, w->config, c.engine, w->path);
    applyConfigRequest(tuned, c.userConfig, c.engine);  // the user's fields over the winner's
    if (const std::string problem = configProblem(tuned, c.engine, precision == Precision::F32); !problem.empty())
      r.entryProblem = problem;
    else if (tuned.math != r.config.math)
      r.entryProblem = std::string("its math=") + toString(tuned.math) + " is not the job's";
    if (!r.entryProblem.empty()) return r;
    r.config = tuned;
    r.winner = w;
    r.from.config = Origin::Tuned;
    r.from.tunedEntry = w->path;
  } catch (const std::exception& e) {  // an entry this version cannot read: the defaults, as without one
    r.entryProblem = e.what();
  }
  return r;
}

namespace {

// A plan deeper than the engine's compiler takes (EngineCaps::maxPlanDepth): one line before the
// compile, not a compiler's error or minutes of compiling.
void checkPlanDepth(const KernelOptions& o, const RunConfig& c, const EngineCaps& caps) {
  if (caps.maxPlanDepth <= 0 || o.kind == KernelKind::Plain || o.kind == KernelKind::Tangent) return;
  const int depth = o.plan.depth();
  if (depth > caps.maxPlanDepth)
    throw std::invalid_argument((c.plan || !c.planFile.empty() ? "--plan: " : "--strategy: ") + std::string("the plan nests ") +
                                std::to_string(depth) + " levels of cuts; " + c.engine + " compiles at most " +
                                std::to_string(caps.maxPlanDepth) + " (" + caps.maxPlanDepthWhy +
                                "); a flatter plan runs (fewer segments, or a flat strategy)");
}

KernelOptions resolvePlan(const Tape& tape, const RunConfig& c, const EngineCaps& caps, int markets,
                          std::string* tunedFrom, std::vector<std::string>* notUsed, std::string* kindWhy,
                          const std::vector<int>& sharedInputs, Provenance* from);

// Whether the run names anything that makes its plan (a plan, a strategy, a segment count, a knob of one).
bool planNamed(const RunConfig& c) {
  return c.plan || !c.planFile.empty() || c.strategy || !c.strategyCommand.empty() ||
         c.checkpoint.mode != Checkpoint::Mode::Auto || c.segLen > 0 || c.budget > 0 || c.innerSegments > 0;
}

}  // namespace

ResolvedJob resolveJob(const Tape& tape, const RunConfig& c, const EngineCaps& caps, int markets,
                       const std::vector<int>& sharedInputs) {
  ResolvedJob job;
  job.options = resolvePlan(tape, c, caps, markets, &job.tuned, &job.notUsed, &job.kindWhy, sharedInputs, &job.from);
  // The kind is chosen: its own defaults (a tuned winner's configuration stays whole). No kind-qualified
  // default sets a field the choice read (kindMayQualify), so the kind and plan chosen still hold.
  if (job.from.config != Origin::Tuned)
    job.options.config = resolveConfig(c, caps, job.options.precision, markets, toString(job.options.kind));
  // auto's tangent chunk where nothing names one (planner/tangent_chunk.h; the kind's defaults have none)
  if (job.options.kind == KernelKind::Tangent) {
    if (const std::optional<AutoTangentChunk> a = autoTangentChunkOf(tape, c, job.options, markets, sharedInputs))
      job.options.config.tangentChunk = a->chunk;
    checkTangentSize(tape, c, job.options);
  }
  checkPlanDepth(job.options, c, caps);
  if (job.from.plan != Origin::Tuned) {
    job.from.plan = planNamed(c) ? Origin::User : Origin::Default;
    job.from.kind = c.kernel ? Origin::User : Origin::Default;
  }
  return job;
}

KernelOptions resolveKernel(const Tape& tape, const RunConfig& c, const EngineCaps& caps, int markets,
                            std::string* tunedFrom, std::vector<std::string>* notUsed, std::string* kindWhy,
                            const std::vector<int>& sharedInputs) {
  ResolvedJob job = resolveJob(tape, c, caps, markets, sharedInputs);
  if (tunedFrom) *tunedFrom = job.tuned;
  if (notUsed) notUsed->insert(notUsed->end(), job.notUsed.begin(), job.notUsed.end());
  if (kindWhy) *kindWhy = job.kindWhy;
  return std::move(job.options);
}

namespace {

// --kernel auto: nothing named, so the tangent kernel where the model predicts it faster (planner/kind_model.h).
void chooseKindAuto(const Tape& tape, const RunConfig& c, const EngineCaps& caps, int markets,
                    const std::vector<int>& sharedInputs, std::string* kindWhy, KernelOptions& o) {
  if (c.kernel || c.strategy || !c.strategyCommand.empty() || !o.greeks || !hasKind(caps, KernelKind::Tangent)) return;
  KindJob job;
  job.markets = markets;
  job.sharedInputs = markets > 1 && o.config.sharedInputs ? sharedInputs : std::vector<int>{};
  job.adjointPlan = o.plan;
  job.gpu = caps.marketOrder && !caps.cpuDevice;
  job.tangentRolls = o.config.loopsRolled && findLoop(tape).found();
  job.adjointRolls = job.tangentRolls && o.kind == KernelKind::Register && o.plan.strategy == "periodic";
  job.closedForms = o.config.closedForms;
  job.tangentFma = o.config.tangentFma;
  const std::optional<AutoTangentChunk> chunk = autoTangentChunkOf(tape, c, o, markets, sharedInputs);
  job.tangentChunk = chunk ? chunk->chunk : o.config.tangentChunk;
  const KindPrediction prediction = predictKinds(tape, job);
  if (kindWhy) *kindWhy = "auto: " + prediction.why() + " (planner/kind_model.h)";
  if (prediction.tangentWins()) {
    o.kind = KernelKind::Tangent;
    o.plan = plainPlan(tape);
    if (kindWhy && chunk && chunk->chunk > 0) *kindWhy += "; " + chunk->why();
  }
}

// resolveKernel's body: the precision, the configuration, a tuned winner or the plan and kind asked for.
KernelOptions resolvePlan(const Tape& tape, const RunConfig& c, const EngineCaps& caps, int markets,
                          std::string* tunedFrom, std::vector<std::string>* notUsed, std::string* kindWhy,
                          const std::vector<int>& sharedInputs, Provenance* from) {
  KernelOptions o;
  o.precision = c.precision.value_or(caps.fp64 && !caps.fp32 ? Precision::F64
                                     : caps.fp32 && !caps.fp64 ? Precision::F32
                                                               : caps.defaultPrecision);
  if (o.precision == Precision::F64 && !caps.fp64) throw std::invalid_argument("this engine has no fp64");
  if (o.precision == Precision::F32 && !caps.fp32) throw std::invalid_argument("this engine has no fp32");
  // A strategy name is checked even when this tape ends up uncut: a typo is an error, not a no-op.
  if (c.strategy) findStrategy(*c.strategy);
  o.greeks = c.greeks;
  o.dumpDir = c.dumpDir;
  o.dispatch = c.dispatch;
  // ~50 ms a launch: a CPU-served device (lavapipe, PoCL) runs the 252-step Asian at ~0.3-1 Mpath/s here,
  // a GPU at 100-2000 Mpath/s (results do not depend on it; each launch costs a submit and a wait).
  if (c.promptInterrupts && o.dispatch.launchPaths == 0) o.dispatch.launchPaths = caps.cpuDevice ? 1u << 14 : 1u << 24;
  if (notUsed) notUsed->insert(notUsed->end(), c.notUsed.begin(), c.notUsed.end());
  ConfigResolution jc = resolveJobConfig(tape, c, caps, o.precision, markets);
  o.config = jc.config;
  *from = jc.from;
  if (jc.winner) {
    const TunedWinner& w = *jc.winner;
    try {
      if (tunedFrom) *tunedFrom = tunedNote(w);  // the entry, its margin, noise and date
      if (!c.kernel || *c.kernel == w.kind) {
        o.kind = w.kind;
        o.plan = w.kind == KernelKind::Plain || w.kind == KernelKind::Tangent ? plainPlan(tape) : parsePlanFile(w.plan, tape, w.path);
        if (hasKind(caps, o.kind)) {
          planKnobsNotUsed(c, "", "the tuned winner's plan runs (" + w.path + "; --untuned: the defaults)", notUsed);
          from->plan = from->kind = Origin::Tuned;
          return o;
        }
      }
    } catch (const std::exception&) {  // an entry this version cannot read: the defaults, as without one
      o.config = resolveConfig(c, caps, o.precision, markets);
      if (tunedFrom) tunedFrom->clear();
      from->config = Origin::Default;
      from->tunedEntry.clear();
    }
  }
  if (c.kernel == KernelKind::Tangent) {
    planKnobsNotUsed(c, "", "the tangent kernel has no plan", notUsed);
    return tangentKernel(tape, c, caps, std::move(o));
  }
  if (!c.wrt.empty()) throw std::invalid_argument(c.wrtWhat + ": only the tangent kernel differentiates by a subset (--kernel tangent)");
  if (c.plan || !c.planFile.empty()) return withPlan(tape, c, caps, std::move(o));

  // Segments: "off" = 1, "auto" = c.segments when the tape is long enough, N = N.
  int segments = 1;
  const bool explicitSegments = c.checkpoint.mode == Checkpoint::Mode::Segments;
  const bool automatic = c.checkpoint.mode == Checkpoint::Mode::Auto;
  if (automatic) segments = caps.autoCheckpoint && tape.size() >= c.ckptNodes ? c.segments : 1;
  if (explicitSegments) {
    if (c.checkpoint.segments < 1)
      throw std::invalid_argument("--checkpoint: expected off, auto or a positive segment count, got '" +
                                  c.checkpoint.text() + "'");
    segments = c.checkpoint.segments;
  }
  if (segments > tape.size())
    throw std::invalid_argument("--checkpoint: " + std::to_string(segments) + " segments exceed the tape's " +
                                std::to_string(tape.size()) + " nodes");

  KernelKind kind = c.kernel.value_or(segments > 1 ? KernelKind::Register : KernelKind::Plain);
  // An explicit checkpointed kernel with checkpointing left on auto on a short tape still checkpoints.
  if (kind != KernelKind::Plain && segments == 1 && automatic)
    segments = std::min<int>(c.segments, tape.size());
  if (kind != KernelKind::Plain && segments == 1 && c.kernel) {
    throw std::invalid_argument(std::string("--kernel ") + toString(kind) + " needs checkpointing on (--checkpoint 1 is off)");
  }
  o.kind = segments > 1 || kind == KernelKind::Scratch ? kind : KernelKind::Plain;
  if (o.kind == KernelKind::Plain && notUsed) {  // a cut asked for, and the tape left whole
    const std::string why = !automatic              ? std::string("--checkpoint ") + c.checkpoint.text() + " asks for it"
                            : !caps.autoCheckpoint ? "auto checkpointing is off on this engine (its plain kernel is faster)"
                                                   : "the tape's " + std::to_string(tape.size()) +
                                                         " nodes are under --ckpt-nodes " + std::to_string(c.ckptNodes) +
                                                         " (auto)";
    if (c.strategy)
      notUsed->push_back("--strategy " + *c.strategy + ": not used: the plain kernel runs, " + why + "; --checkpoint N cuts it");
    planKnobsNotUsed(c, "", "the plain kernel runs, " + why + "; --checkpoint N cuts it", notUsed);
  }
  if (!hasKind(caps, o.kind)) throw std::invalid_argument(std::string("this engine has no ") + toString(o.kind) + " kernel");

  if (o.kind == KernelKind::Plain) {
    o.plan = plainPlan(tape);
  } else {
    PlanOptions po;
    po.segments = segments;
    po.segLen = c.segLen;
    po.budget = c.budget;
    po.innerSegments = c.innerSegments;
    po.strategyCommand = c.strategyCommand;
    po.solveSeconds = c.solveSeconds;
    po.solveClock = c.solveClock;
    // budget's default from the register file, for the markets a GPU dispatch fuses (1..8); more
    // (the reference engines) keep window's peak_live.
    if (o.kind == KernelKind::Register && markets <= 8) po.markets = markets;
    const bool scratch = o.kind == KernelKind::Scratch;
    // The default cuts: uniform for scratch kernels; for a register kernel whose segments a GPU engine rolls
    // (engine/engine.h rolledSegmentsWhyNot, a tape with a time loop: gpu/codegen/rolling.h decides the rest
    // from the plan) the periodic strategy's, whose middle segments are alike; else window's.
    KernelOptions atMarkets = o;
    atMarkets.markets = markets;
    const bool rolls = rolledSegmentsWhyNot(tape, atMarkets).empty() && findLoop(tape).found();
    const std::string strategy = c.strategy.value_or(!c.strategyCommand.empty()       ? "cmd"
                                                     : scratch && !explicitSegments ? "uniform"
                                                     : rolls                         ? "periodic"
                                                                                     : "window");
    if (scratch && strategy == "uniform" && po.segLen == 0 && !explicitSegments) po.segLen = defaultSegLen(tape.size());
    // auto's count for rolled periodic segments: about 64 nodes a segment at one market (planner/strategies.h)
    if (rolls && automatic && strategy == "periodic" && !c.strategy) po.segments = rolledSegmentCount(tape, markets, segments);
    o.plan = makeStrategyPlan(strategy, tape, po);
    planKnobsNotUsed(c, strategy, "", notUsed);
  }
  if (automatic) chooseKindAuto(tape, c, caps, markets, sharedInputs, kindWhy, o);
  return o;
}

}  // namespace

std::optional<OversizedChunk> oversizedTangentChunk(const Tape& tape, const KernelOptions& options, uint64_t maxNodes) {
  for (const std::vector<int>& inputs : tangentChunks(options, tape.numInputs()))
    if (const int64_t terms = tangentTermCount(tape, inputs); static_cast<uint64_t>(terms) > maxNodes)
      return OversizedChunk{inputs.size(), terms};
  return std::nullopt;
}

double Result::greek(const std::string& input, size_t market) const {
  for (size_t i = 0; i < inputNames.size(); ++i)
    if (inputNames[i] == input) return run.markets.at(market).greeks.at(i);
  throw std::invalid_argument("no input named '" + input + "'");
}

double Result::greekStderr(const std::string& input, size_t market) const {
  for (size_t i = 0; i < inputNames.size(); ++i)
    if (inputNames[i] == input) return run.markets.at(market).greeksStderr.at(i);
  throw std::invalid_argument("no input named '" + input + "'");
}

Result Pricer::run(uint64_t paths, uint64_t seed) { return runMarkets({inputs}, paths, seed); }

Result Pricer::runMarkets(const std::vector<std::vector<double>>& sets, uint64_t paths, uint64_t seed) {
  if (ranks::size() > 1) ranks::agreeOn("the inputs, paths and seed", runIdentity(sets, paths, seed));
  Result r;
  r.inputNames = tape_.inputNames;
  r.kernel = options_;
  r.engine = engine_;
  r.tuned = tuned_;
  r.notUsed = notUsed_;
  r.kindWhy = kindWhy_;
  r.provenance = provenance_;
  r.run.paths = paths;
  r.run.seed = seed;
  const size_t per = static_cast<size_t>(options_.markets);
  for (size_t lo = 0; lo < sets.size(); lo += per) {
    std::vector<std::vector<double>> group(sets.begin() + lo, sets.begin() + std::min(sets.size(), lo + per));
    // A last group smaller than the kernel's market count is padded with copies of its last set.
    const size_t real = group.size();
    while (group.size() < per) group.push_back(group.back());
    RunResult part = ranks::size() > 1 ? ranks::runSplit(*kernel_, group, paths, seed) : kernel_->run(group, paths, seed);
    if (ranks::size() > 1) markUncomputedGreeks(part, options_, tape_.numInputs());  // run() does it itself
    r.run.seconds += part.seconds;
    r.run.setupSeconds += part.setupSeconds;  // several groups: their dispatches one after another
    r.run.dispatches.insert(r.run.dispatches.end(), part.dispatches.begin(), part.dispatches.end());
    for (size_t m = 0; m < real; ++m) r.run.markets.push_back(part.markets[m]);
  }
  return r;
}

MonteCarlo MonteCarlo::of(products::Product product) {
  MonteCarlo mc;
  mc.steps_ = product.defaultSteps;
  mc.product_ = std::move(product);
  return mc;
}

MonteCarlo MonteCarlo::of(Tape tape) {
  MonteCarlo mc;
  mc.tape_ = std::move(tape);
  return mc;
}

MonteCarlo& MonteCarlo::market(const EquityMarket& m) {
  for (auto [k, v] : {std::pair<const char*, double>{"spot", m.spot}, {"strike", m.strike}, {"vol", m.vol},
                      {"rate", m.rate}, {"maturity", m.maturity}})
    sets_.emplace_back(k, v);
  return *this;
}
MonteCarlo& MonteCarlo::set(const std::string& input, double value) {
  sets_.emplace_back(input, value);
  return *this;
}
MonteCarlo& MonteCarlo::steps(int n) {
  steps_ = n;
  return *this;
}
MonteCarlo& MonteCarlo::greeks(bool on) {
  configured().greeks = on;
  return *this;
}
MonteCarlo& MonteCarlo::fp32() {
  configured().precision = Precision::F32;
  return *this;
}
MonteCarlo& MonteCarlo::fp64() {
  configured().precision = Precision::F64;
  return *this;
}
MonteCarlo& MonteCarlo::on(const std::string& engine) {
  configured().engine = engine;
  return *this;
}
MonteCarlo& MonteCarlo::config(const RunConfig& c) {
  config_ = c;
  return *this;
}
RunConfig& MonteCarlo::configured() {
  if (!config_) config_ = RunConfig::fromEnvironment();
  return *config_;
}
MonteCarlo& MonteCarlo::markets(int m) {
  markets_ = m;
  return *this;
}

MonteCarlo& MonteCarlo::sets(const std::vector<std::vector<double>>& sets) {
  known_ = sets;
  return *this;
}

Pricer MonteCarlo::build() const {
  Pricer p;
  p.tape_ = tape_ ? *tape_ : product_->record(steps_);
  p.inputs = p.tape_.inputDefaults;
  for (const auto& [name, value] : sets_) {
    const int k = p.tape_.inputIndex(name);
    if (k >= 0) p.inputs[k] = value;
    else if (!product_ || (name != "spot" && name != "strike" && name != "vol" && name != "rate" && name != "maturity"))
      throw std::invalid_argument("the tape has no input named '" + name + "'");
  }
  RunConfig config = config_ ? *config_ : RunConfig::fromEnvironment();
  // Under mpirun every rank builds the same kernel on its own device; a rank that cannot stops them all.
  ranks::start();
  if (ranks::size() > 1) config.engineSettings.deviceSlot = static_cast<unsigned>(ranks::localRank());
  const bool split = ranks::size() > 1;
  try {
    const EngineEntry& entry = findEngine(config.engine);
    const EngineCaps caps = engineCaps(entry, config.engineSettings);
    if (!caps.usable) throwUnusable(entry.name, caps);
    if (markets_ < 1 || markets_ > caps.maxMarkets)
      throw std::invalid_argument("markets per dispatch must be in 1.." + std::to_string(caps.maxMarkets));
    const std::vector<int> shared = sharedInputsOf(known_, static_cast<size_t>(markets_));
    ResolvedJob job = resolveJob(p.tape_, config, caps, markets_, shared);
    p.options_ = std::move(job.options);
    p.tuned_ = std::move(job.tuned);
    p.notUsed_ = std::move(job.notUsed);
    p.kindWhy_ = std::move(job.kindWhy);
    p.provenance_ = std::move(job.from);
    p.options_.markets = markets_;
    p.options_.sharedInputs = shared;
    p.engine_ = entry.name;
    if (split && tangentChunks(p.options_, p.tape_.numInputs()).size() > 1)
      throw std::invalid_argument("tangent_chunk=" + std::to_string(p.options_.config.tangentChunk) +
                                  ": a tangent kernel in chunks cannot be split over MPI ranks (tangent_chunk=0: one "
                                  "kernel)");
    p.kernel_ = compileKernel(*entry.make(config.engineSettings), p.tape_, p.options_);
  } catch (const std::exception& e) {
    if (!split || dynamic_cast<const ranks::RankFailure*>(&e)) throw;
    ranks::agree(ranks::exitCodeOf(e), e.what());
  }
  if (split) ranks::agreeOn("the tape, plan and kernel options", kernelIdentity(p.tape_, p.options_, p.engine_));
  return p;
}

}  // namespace tapelab
