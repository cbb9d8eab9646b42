#include "gpu/codegen/storage.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "gpu/codegen/adjoint_arrays.h"
#include "gpu/codegen/emit.h"
#include "planner/plan.h"
#include "planner/schedule.h"

namespace tapelab {

namespace {

bool checkpointed(const KernelOptions& o) { return o.kind == KernelKind::Register || o.kind == KernelKind::Scratch; }

void validateOptions(const Tape& tape, const KernelOptions& options, const Dialect& dialect, int workgroupSize) {
  if (const std::string problem = validate(tape); !problem.empty()) throw std::invalid_argument(problem);
  if (options.markets < 1 || options.markets > 8)
    throw std::invalid_argument("markets must be 1..8 (got " + std::to_string(options.markets) + ")");
  if (options.precision == Precision::F64 && !dialect.hasFp64)
    throw std::invalid_argument("the " + dialect.name + " dialect has no fp64 kernels");
  if (workgroupSize < 1 || (workgroupSize & (workgroupSize - 1)) != 0 || workgroupSize > 1024)
    throw std::invalid_argument("workgroup size must be a power of two up to 1024");
  if (options.config.lanes < 1) throw std::invalid_argument("paths per lane must be at least 1");
  if (options.kind == KernelKind::Tangent) differentiatedInputs(options, tape.numInputs());  // throws on a bad --wrt
  for (size_t k = 0; k < options.sharedInputs.size(); ++k)
    if (options.sharedInputs[k] < 0 || options.sharedInputs[k] >= tape.numInputs() ||
        (k > 0 && options.sharedInputs[k] <= options.sharedInputs[k - 1]))
      throw std::invalid_argument("shared inputs must be ascending input ordinals below " +
                                  std::to_string(tape.numInputs()));
  if (checkpointed(options)) {
    const Plan& plan = options.plan;
    if (plan.bounds.size() < 2 || plan.bounds.front() != 0 || plan.bounds.back() != tape.size() ||
        plan.isPersistent.size() != static_cast<size_t>(tape.size()))
      throw std::invalid_argument(std::string(toString(options.kind)) + " kernel needs a plan made for this tape");
  }
}

// Values: one copy per market where an input the markets do not share reaches them; the market loop's persistent ones in
// arrays (shared by the workgroup where no draw reaches them and config shared_constants holds);
// the scratch kind's bookmarks and the stored draws in the scratch buffer, in that order.
void placeValues(StoragePlan& s, const Tape& tape, const KernelOptions& options, const std::vector<uint8_t>& varying) {
  const std::vector<uint8_t> fromDraw = dependsOnDraw(tape);
  for (int32_t j = 0; j < tape.size(); ++j) {
    NodeStorage& n = s.nodes[j];
    n.copies = varying[j] ? s.markets : 1;
    n.value = n.copies > 1 ? ValuePlace::MarketScalars : ValuePlace::Scalar;
    if (s.marketLoop && varying[j] && options.plan.isPersistent[j])
      n.value = s.sharedConstants && !fromDraw[j] ? ValuePlace::SharedArray : ValuePlace::LaneArray;
  }
  if (options.kind == KernelKind::Scratch)
    for (const auto& stored : options.plan.storedAt)
      for (int32_t j : stored) {
        s.nodes[j].value = ValuePlace::ScratchSlot;
        s.nodes[j].slot = s.scratchSlots;
        s.scratchSlots += s.nodes[j].copies;
      }
  if (drawsInScratch(options.config.draws) && checkpointed(options) && options.greeks) {
    // One slot per draw index, in index order (nodes drawing the same index share it).
    std::map<uint32_t, int> slotOf;
    for (int32_t i = 0; i < tape.size(); ++i)
      if (tape.op[i] == Op::Randn) slotOf.emplace(static_cast<uint32_t>(tape.imm[i]), 0);
    for (auto& [draw, slot] : slotOf) {
      slot = s.scratchSlots + s.drawSlots++;
      s.drawSlotOf.emplace_back(draw, slot);
    }
    for (int32_t i = 0; i < tape.size(); ++i)
      if (tape.op[i] == Op::Randn) {
        s.nodes[i].value = ValuePlace::StoredDraw;
        s.nodes[i].drawSlot = slotOf.at(static_cast<uint32_t>(tape.imm[i]));
      }
    s.prefill = options.config.draws == DrawSource::Prefill && s.drawSlots > 0;
  }
}

// Adjoints: the values an input reaches, where the kernel has a reverse sweep; the market loop's
// persistent ones in arrays, shared where their lives do not overlap (a flat plan).
void placeAdjoints(StoragePlan& s, const Tape& tape, const KernelOptions& options, const std::vector<uint8_t>& fromInput) {
  if (!options.greeks || options.kind == KernelKind::Tangent) return;
  SharedAdjointArrays shared;
  if (s.marketLoop && !options.plan.nested() && !options.plan.perValue)
    shared = shareAdjointArrays(tape, options.plan, fromInput);
  s.sharedAdjointArrays = shared.arrays;
  s.adjointArraysSetIn = shared.firstWrittenIn;
  // The market loop's adjoints that outlive a block (planner/schedule.h kernelAdjointsOf: the persistent
  // values', and a per-value plan's values read after their own block) in arrays indexed by the market.
  std::vector<uint8_t> wholeKernel(static_cast<size_t>(tape.size()), 0);
  if (s.marketLoop)
    for (int32_t j : kernelAdjointsOf(tape, options.plan)) wholeKernel[j] = 1;
  for (int32_t j = 0; j < tape.size(); ++j) {
    if (!fromInput[j]) continue;
    NodeStorage& n = s.nodes[j];
    n.adjoint = s.markets == 1 ? AdjointPlace::Scalar : AdjointPlace::MarketScalars;
    if (wholeKernel[j]) n.adjoint = AdjointPlace::LaneArray;
    if (!shared.arrayOf.empty() && shared.arrayOf[j] >= 0) {
      n.adjoint = AdjointPlace::SharedArray;
      n.adjointArray = shared.arrayOf[j];
    }
  }
}

// The Kahan sums in local memory where they fit (config sums=local); then the market loop's
// lane-invariant arrays in workgroup memory where the dialect declares them in a body and they fit
// beside the sums' local array (config shared_constants; else they stay per lane: the same bits).
void placeSums(StoragePlan& s, const Tape& tape, const KernelOptions& options, const Dialect& dialect, int workgroupSize,
               const std::vector<uint8_t>& varying) {
  s.kahanSums = s.markets * 2 * (options.greeks ? 1 + tape.numInputs() : 1);
  const size_t scalarBytes = options.precision == Precision::F32 ? 4 : 8;
  s.kahanInLocal = options.config.sums == KahanPlace::Local &&
                   size_t(2) * size_t(s.kahanSums) * size_t(workgroupSize) * scalarBytes <= kMaxKahanLocalBytes;
  s.reductionSums = s.kahanInLocal ? s.kahanSums : std::min(s.kahanSums, 16);
  s.localRows = s.kahanInLocal ? 2 * s.kahanSums : s.reductionSums;
  if (options.config.sharedConstants && s.marketLoop && !dialect.blockShared.empty()) {
    const std::vector<uint8_t> fromDraw = dependsOnDraw(tape);
    size_t bytes = size_t(s.localRows) * size_t(workgroupSize) * scalarBytes;
    for (int32_t j : options.plan.persistent)
      if (varying[j] && !fromDraw[j]) bytes += size_t(s.markets) * scalarBytes;
    s.sharedConstants = bytes <= kMaxKahanLocalBytes;
  }
}

// The config's fields that asked for something this kernel does not do, each with why.
std::vector<std::string> unusedFields(const StoragePlan& s, const Tape& tape, const KernelOptions& options,
                                      const Dialect& dialect, int workgroupSize) {
  const KernelConfig& config = options.config;
  std::vector<std::string> unused;
  const bool draws = std::find(tape.op.begin(), tape.op.end(), Op::Randn) != tape.op.end();
  if (config.markets == MarketCode::Loop && !s.marketLoop)
    unused.push_back(std::string("markets=loop: ") +
                     (options.kind != KernelKind::Register ? "not a register kernel"
                      : s.markets == 1                     ? "one market"
                      : !options.greeks                    ? "value only"
                                                           : "markets in joint order"));
  if (config.prefillAhead != 0 && (!s.prefill || !config.opaque))
    unused.push_back("prefill_ahead=" + std::to_string(config.prefillAhead) + ": " +
                     (!s.prefill ? "draws=prefill not in effect" : "opaque=off: no key orders the loads"));
  else if (config.prefillAhead != 0 && config.prefillAhead > options.plan.segments() - 1)  // emit.cpp prefillKey: no segment s-1-N >= 0
    unused.push_back("prefill_ahead=" + std::to_string(config.prefillAhead) + ": " +
                     std::to_string(options.plan.segments()) + " segments, so no segment's loads are keyed (the kernel of prefill_ahead=" +
                     std::to_string(std::max(options.plan.segments() - 1, 0)) + ")");
  if (drawsInScratch(config.draws) && s.drawSlots == 0)
    unused.push_back(std::string("draws=") + (config.draws == DrawSource::Stored ? "stored: " : "prefill: ") + (!checkpointed(options) ? "not a checkpointed kernel"
                                                     : !options.greeks       ? "value only"
                                                                             : "the tape has no draws"));
  if (config.layout == ScratchLayout::AoS && s.laneSlots() == 0)  // the baseline's soa is no request
    unused.push_back("layout=aos: no scratch buffer (no values or draws stored)");
  const PrecisionSpelling& types = dialect.spelling(options.precision);
  if (config.sums == KahanPlace::Local && !s.kahanInLocal)
    unused.push_back("sums=local: " + std::to_string(2 * s.kahanSums * workgroupSize * int(types.scalar == "float" ? 4 : 8) / 1024) +
                     " KiB of sums exceed the 48 KiB of workgroup memory, kept in registers");
  if (config.sharedConstants && s.marketLoop && !dialect.blockShared.empty() && !s.sharedConstants)
    unused.push_back("shared_constants=on: the arrays do not fit beside the sums in 48 KiB, kept per lane");
  if (config.outlineDraws && !draws) unused.push_back("outline_draws=on: the tape has no draws");
  if (config.firstTermsSet && (!options.greeks || options.kind == KernelKind::Tangent))
    unused.push_back("first_terms=set: no adjoints (a tangent kernel, or no Greeks)");
  // The math contract a dialect cannot give (front ends refuse these; engine/config.h mathProblem).
  const bool glsl = dialect.name == "glsl";
  if (glsl && config.math != MathContract::Glsl)
    unused.push_back(std::string("math=") + toString(config.math) +
                     ": a Vulkan shader's exp, log and division are GLSL.std.450's (math=glsl)");
  if (!glsl && config.math == MathContract::Glsl) unused.push_back("math=glsl: Vulkan's contract, not " + dialect.name + "'s (ieee used)");
  if (config.math == MathContract::Approx && types.approxFunctions.empty() && !glsl)
    unused.push_back(std::string("math=approx: no approximate ") + toString(options.precision) + " functions in " +
                     dialect.name + " (ieee used)");
  return unused;
}

}  // namespace

StoragePlan planStorage(const Tape& tape, const KernelOptions& options, const Dialect& dialect, int workgroupSize) {
  validateOptions(tape, options, dialect, workgroupSize);
  StoragePlan s;
  s.nodes.assign(tape.size(), {});
  s.markets = options.markets;
  // config markets=loop: register kernels whose markets go one after another (with Greeks, several markets).
  s.marketLoop = options.config.markets == MarketCode::Loop && sequentialMarkets(options) &&
                 options.kind == KernelKind::Register;
  const std::vector<uint8_t> fromInput = dependsOnInput(tape);
  // config shared_inputs: the values that differ from market to market are those an input the markets
  // do not share reaches; the others are computed once (their adjoints, fromInput's, stay per market).
  std::vector<uint8_t> varying = fromInput;
  if (options.config.sharedInputs && s.markets > 1 && !options.sharedInputs.empty()) {
    varying = dependsOnInputOtherThan(tape, options.sharedInputs);
    s.sharedInputs = options.sharedInputs;
  }
  placeSums(s, tape, options, dialect, workgroupSize, varying);
  placeValues(s, tape, options, varying);
  placeAdjoints(s, tape, options, fromInput);
  if (options.kind == KernelKind::Tangent && options.greeks)
    s.tangents = tangentSlots(tape, differentiatedInputs(options, tape.numInputs()));
  s.unused = unusedFields(s, tape, options, dialect, workgroupSize);
  return s;
}

std::string toText(const StoragePlan& s, const Tape& tape) {
  static const char* const kValue[] = {"scalar", "market scalars", "lane array", "shared array", "scratch slot", "stored draw"};
  static const char* const kAdjoint[] = {"none", "scalar", "market scalars", "lane array", "shared array"};
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  std::string out = "markets " + std::to_string(s.markets) + ", market loop " + yes(s.marketLoop) + ", shared constants " +
                    yes(s.sharedConstants) + ", scratch slots " + std::to_string(s.scratchSlots) + ", draw slots " +
                    std::to_string(s.drawSlots) + (s.prefill ? " (prefilled)" : "") + ", shared adjoint arrays " +
                    std::to_string(s.sharedAdjointArrays) + "\nKahan sums " + std::to_string(s.kahanSums) + " in " +
                    (s.kahanInLocal ? "local memory" : "registers") + ", reduced " + std::to_string(s.reductionSums) +
                    " at a time\nshared inputs";
  for (int k : s.sharedInputs) out += " " + tape.inputNames[k];
  if (s.sharedInputs.empty()) out += " -";
  out += "\n";
  for (const std::string& u : s.unused) out += "unused: " + u + "\n";
  for (int32_t j = 0; j < tape.size(); ++j) {
    const NodeStorage& n = s.nodes[j];
    if (n.value == ValuePlace::Scalar && n.copies == 1 && n.adjoint == AdjointPlace::None) continue;
    out += "node " + std::to_string(j) + " " + std::string(name(tape.op[j])) + ": value " + kValue[static_cast<int>(n.value)];
    if (n.copies > 1) out += " x" + std::to_string(n.copies);
    if (n.slot >= 0) out += " slot " + std::to_string(n.slot);
    if (n.drawSlot >= 0) out += " draw slot " + std::to_string(n.drawSlot);
    out += std::string(", adjoint ") + kAdjoint[static_cast<int>(n.adjoint)];
    if (n.adjointArray >= 0) out += " ds" + std::to_string(n.adjointArray);
    if (!s.tangents.of.empty() && !s.tangents.of[j].empty()) out += ", tangents " + std::to_string(s.tangents.of[j].size());
    out += "\n";
  }
  return out;
}

}  // namespace tapelab
