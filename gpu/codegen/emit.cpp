#include "gpu/codegen/emit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gpu/codegen/adjoint_arrays.h"
#include "planner/plan.h"
#include "planner/schedule.h"
#include "tape/philox.h"
#include "tape/spell.h"
#include "tape/tangent.h"

namespace tapelab {

namespace {

// The components of a dialect's uint4Type: word j of a Philox call (all four dialects).
constexpr const char* kWordFields[4] = {"x", "y", "z", "w"};

std::string substitute(std::string text, const std::string& key, const std::string& value) {
  for (size_t pos = 0; (pos = text.find(key, pos)) != std::string::npos; pos += value.size())
    text.replace(pos, key.size(), value);
  return text;
}

class Emitter {
 public:
  Emitter(const Tape& tape, const KernelOptions& options, const Dialect& dialect, const EmitOptions& emitOptions)
      : tape_(tape), options_(options), dialect_(dialect), config_(options.config), workgroupSize_(emitOptions.workgroupSize),
        types_(dialect.spelling(options.precision)), markets_(options.markets) {
    scalarType_ = types_.scalar;
    uintType_ = dialect.uintType;
    dependsOnInput_ = dependsOnInput(tape);
    dependsOnDraw_ = dependsOnDraw(tape);
    sumsPerMarket_ = options.greeks ? 1 + tape.numInputs() : 1;
    checkpointed_ = options.kind != KernelKind::Plain && options.kind != KernelKind::Tangent;
    sequential_ = sequentialMarkets(options);
    // config markets=loop: register kernels whose markets go one after another (sequential: with
    // Greeks, several markets).
    marketLoop_ = config_.markets == MarketCode::Loop && sequential_ && options.kind == KernelKind::Register;
    if (options.kind == KernelKind::Tangent && options.greeks)
      tangents_ = tangentSlots(tape, differentiatedInputs(options, tape.numInputs()));
    if (options.kind == KernelKind::Scratch) {
      firstScratchSlot_.assign(tape.size(), -1);
      for (const auto& stored : options.plan.storedAt)
        for (int32_t j : stored) {
          firstScratchSlot_[j] = scratchSlots_;
          scratchSlots_ += copiesOf(j);
        }
    }
    // config draws=stored: each draw's slot after the scratch kind's own, after the scratch kind's own.
    if (config_.draws == DrawSource::Stored && checkpointed_ && options.greeks) {
      drawSlot_.assign(tape.size(), -1);
      for (int32_t i = 0; i < tape.size(); ++i)
        if (tape.op[i] == Op::Randn) drawSlot_[i] = scratchSlots_ + drawSlots_++;
    }
  }

  EmittedKernel run() {
    const int sums = kahanSums();
    sumsPerReduction_ = std::min(sums, 16);
    const size_t scalarBytes = options_.precision == Precision::F32 ? 4 : 8;
    kahanInLocal_ = config_.sums == KahanPlace::Local &&
                    size_t(2) * size_t(sums) * size_t(workgroupSize_) * scalarBytes <= kMaxKahanLocalBytes;
    const int localSums = kahanInLocal_ ? 2 * sums : sumsPerReduction_;
    // config shared_constants where the dialect can and the arrays fit beside tl_red in the
    // workgroup memory every API allows (else they stay per lane: the same bits).
    if (config_.sharedConstants && marketLoop_ && !dialect_.blockShared.empty()) {
      size_t bytes = size_t(localSums) * size_t(workgroupSize_) * scalarBytes;
      for (int32_t j : options_.plan.persistent)
        if (inArray(j) && !dependsOnDraw_[j]) bytes += size_t(markets_) * scalarBytes;
      sharedConstants_ = bytes <= kMaxKahanLocalBytes;
    }
    header();
    prelude();
    std::string begin = dialect_.kernelBegin;
    begin = substitute(begin, "$RED", std::to_string(localSums * workgroupSize_));
    begin = substitute(begin, "$MINBLOCKS", config_.minBlocks > 0 ? ", " + std::to_string(config_.minBlocks) : "");
    begin = substitute(begin, "$WG", std::to_string(workgroupSize_));
    begin = substitute(begin, "$ENTRY", dialect_.entry);
    begin = substitute(begin, "$T", scalarType_);
    begin = substitute(begin, "$U", uintType_);
    source_ += begin;
    body();
    source_ += dialect_.kernelEnd;

    EmittedKernel k;
    k.source = std::move(source_);
    k.entry = dialect_.entry;
    k.dialect = dialect_.name;
    k.precision = options_.precision;
    k.kind = options_.kind;
    k.layout = options_.layout;
    k.workgroupSize = workgroupSize_;
    k.pathsPerLane = config_.lanes;
    k.markets = markets_;
    k.numInputs = tape_.numInputs();
    k.width = sumsPerMarket_;
    k.scratchSlots = laneSlots();
    k.segments = checkpointed_ ? options_.plan.segments() : 1;
    k.wrt = options_.kind == KernelKind::Tangent ? options_.wrt : std::vector<int>{};
    k.configUnused = unusedFields();
    return k;
  }

 private:
  // The config's fields that asked for something this kernel does not do, each with why.
  std::vector<std::string> unusedFields() const {
    std::vector<std::string> unused;
    const bool draws = std::find(tape_.op.begin(), tape_.op.end(), Op::Randn) != tape_.op.end();
    if (config_.markets == MarketCode::Loop && !marketLoop_)
      unused.push_back(std::string("markets=loop: ") +
                       (options_.kind != KernelKind::Register ? "not a register kernel"
                        : markets_ == 1                       ? "one market"
                        : !options_.greeks                    ? "value only"
                                                              : "markets in joint order"));
    if (config_.draws == DrawSource::Stored && drawSlots_ == 0)
      unused.push_back(std::string("draws=stored: ") + (!checkpointed_ ? "not a checkpointed kernel"
                                                       : !options_.greeks ? "value only" : "the tape has no draws"));
    if (config_.sums == KahanPlace::Local && !kahanInLocal_)
      unused.push_back("sums=local: " + std::to_string(2 * kahanSums() * workgroupSize_ * int(types_.scalar == "float" ? 4 : 8) / 1024) +
                       " KiB of sums exceed the 48 KiB of workgroup memory, kept in registers");
    if (config_.sharedConstants && marketLoop_ && !dialect_.blockShared.empty() && !sharedConstants_)
      unused.push_back("shared_constants=on: the arrays do not fit beside the sums in 48 KiB, kept per lane");
    if (config_.quantile == QuantileForm::Select && !draws) unused.push_back("quantile=select: the tape has no draws");
    if (config_.outlineDraws && !draws) unused.push_back("outline_draws=on: the tape has no draws");
    // The math contract a dialect cannot give (front ends refuse these; engine/config.h mathProblem).
    const bool glsl = dialect_.name == "glsl";
    if (glsl && config_.math != MathContract::Glsl)
      unused.push_back(std::string("math=") + toString(config_.math) +
                       ": a Vulkan shader's exp, log and division are GLSL.std.450's (math=glsl)");
    if (!glsl && config_.math == MathContract::Glsl) unused.push_back("math=glsl: Vulkan's contract, not " + dialect_.name + "'s (ieee used)");
    if (config_.math == MathContract::Approx && types_.approxFunctions.empty() && !glsl)
      unused.push_back(std::string("math=approx: no approximate ") + toString(options_.precision) + " functions in " +
                       dialect_.name + " (ieee used)");
    return unused;
  }

  // ---- spelling helpers
  std::string literal(double v) const { return spellLiteral(v, options_.precision, dialect_); }
  std::string uintLiteral(int64_t v) const { return std::to_string(v) + "u"; }
  std::string param(const char* name) const { return dialect_.paramPrefix + name; }
  std::string function(std::string_view identifier) const {
    return dialect_.function(options_.precision, identifier, approx());
  }
  std::string cast(const std::string& type, const std::string& x) const {
    return dialect_.cCasts ? "(" + type + ")(" + x + ")" : type + "(" + x + ")";
  }
  // What starts a declaration of a scalar: "precise float " in GLSL.
  std::string scalarDecl() const { return dialect_.precise + scalarType_ + " "; }
  // The opaque identity's key: the run-time `zero`, or a literal 0 when the
  // experiment switches the trick off (the compiler may then merge).
  std::string zeroKey() const { return config_.opaque ? param("zero") : "0u"; }
  bool approx() const { return config_.math == MathContract::Approx; }
  // A lane's scratch slots: the scratch kind's stored values, then the stored draws.
  int laneSlots() const { return scratchSlots_ + drawSlots_; }
  // Node i's slot when config draws=stored keeps it in the scratch buffer, else -1.
  int drawSlot(int32_t i) const { return drawSlot_.empty() ? -1 : drawSlot_[i]; }
  // A value has one copy per market when it depends on an input, else one.
  int copiesOf(int32_t j) const { return dependsOnInput_[j] ? markets_ : 1; }
  // The market copies [first, last) of value j that `which` selects: all of them, or market `which`.
  std::pair<int, int> copiesIn(int32_t j, int which) const {
    return which >= 0 || which == kLoopMarket ? std::pair{which, which + 1} : std::pair{0, copiesOf(j)};
  }
  // Market `market` of value j: v17_3; in the market loop (config markets=loop) a persistent
  // per-market value is an array element, v17[3] or v17[tl_m], and inside the loop's body
  // (market kLoopMarket) the others have no market suffix (w17: this iteration's market).
  std::string value(const std::string& prefix, int32_t j, int market) const {
    std::string s = prefix + std::to_string(j);
    if (!dependsOnInput_[j] || markets_ == 1) return s;
    if (prefix == "v" && inArray(j)) return s + "[" + marketIndex(market) + "]";
    return market == kLoopMarket ? s : s + "_" + std::to_string(market);
  }
  std::string adjoint(int32_t j, int market) const {
    if (sharedArray(j) >= 0) return "ds" + std::to_string(sharedArray(j)) + "[" + marketIndex(market) + "]";
    std::string s = "d" + std::to_string(j);
    if (markets_ == 1) return s;
    if (inArray(j)) return s + "[" + marketIndex(market) + "]";
    return market == kLoopMarket ? s : s + "_" + std::to_string(market);
  }
  // The market loop's arrays: the persistent values with a copy per market.
  bool inArray(int32_t j) const { return marketLoop_ && dependsOnInput_[j] && options_.plan.isPersistent[j]; }
  // A market-loop array shared by the workgroup (config shared_constants, where it fits): no draw reaches j.
  bool inSharedArray(int32_t j) const { return sharedConstants_ && inArray(j) && !dependsOnDraw_[j]; }
  // The shared array holding j's adjoint (shareAdjointArrays: the market loop over a flat plan), else -1.
  int sharedArray(int32_t j) const { return shared_.arrayOf.empty() ? -1 : shared_.arrayOf[j]; }
  // What a persistent adjoint starts from: 1 for the output, else 0.
  std::string adjointSeed(int32_t j) const { return literal(j == tape_.output ? 1.0 : 0.0); }
  std::string marketIndex(int market) const { return market == kLoopMarket ? "tl_m" : std::to_string(market); }
  // Kahan sums per lane (and partials per group): value and adjoints, and their squares, per market.
  int kahanSums() const { return markets_ * 2 * sumsPerMarket_; }

  void line(const std::string& s) {
    source_.append(static_cast<size_t>(indent_) * 2, ' ');
    source_ += s;
    source_ += '\n';
  }
  void open(const std::string& s = "{") {
    line(s);
    ++indent_;
  }
  void close(const std::string& s = "}") {
    --indent_;
    line(s);
  }

  // A loop kept rolled (the dialect's dontUnroll spellings): `header` is "for (...) {".
  void openRolledLoop(const std::string& header) {
    if (!dialect_.dontUnrollPragma.empty()) line(dialect_.dontUnrollPragma);
    open(dialect_.dontUnrollAttribute + header);
  }
  // The market loop's header (config markets=loop).
  void openMarketLoop() {
    openRolledLoop("for (int tl_m = 0; tl_m < " + std::to_string(markets_) + "; ++tl_m) {  // markets, one at a time");
  }

  std::string fence(const std::string& x, bool on) const {
    return on ? "tl_opq(" + x + ", " + zeroKey() + ")" : x;
  }
  // Renames the op table's identifiers for node i, market m: variables here,
  // functions by the dialect. Values use the prefix `prefix` ("v" in the
  // forward sweep, "w" in a recomputed segment).
  // `d` (the tangent kind): what stands for d instead of node i's adjoint.
  std::string spellRule(std::string_view expr, int32_t i, int m, const std::string& prefix,
                        const std::string* d = nullptr) const {
    return spellFenced(expr, tape_.op[i], [&](std::string_view id, bool fenced) -> std::string {
      if (id == "a") return fence(value(prefix, tape_.a[i], m), fenced);
      if (id == "b") return fence(value(prefix, tape_.b[i], m), fenced);
      if (id == "r") return value(prefix, i, m);
      if (id == "d") return d ? *d : adjoint(i, m);
      if (id == "zero") return literal(0.0);
      return function(id);
    });
  }

  std::string forwardExpr(int32_t i, int m, const std::string& prefix) const {
    switch (tape_.op[i]) {
      case Op::Const: return "tl_opq(" + literal(tape_.imm[i]) + ", " + zeroKey() + ")";
      case Op::Input:
        // A recomputed segment reads its inputs through opq too, or the
        // compiler could merge a segment built from inputs and constants alone.
        if (prefix != "v") return "tl_opq(" + value("v", i, m) + ", " + zeroKey() + ")";
        return "tl_in" + std::to_string(m) + "_" + std::to_string(static_cast<int>(tape_.imm[i]));
      case Op::Randn: {  // the word of its group's call, which drawWords() declared before this line
        const uint32_t k = static_cast<uint32_t>(tape_.imm[i]);
        return "tl_normal(" + drawGroupName(prefix, k / kDrawsPerCall) + "." + kWordFields[k % kDrawsPerCall] + ")";
      }
      default: return fence(spellRule(info(tape_.op[i]).forward, i, m, prefix), fencedResult(tape_.op[i]));
    }
  }

  // The draws of a block of straight-line code: the first draw of group g that
  // the block computes declares the four words of g's Philox call
  // (tape/philox.h), named by the block's value prefix; later draws of g in
  // the block read them. newDrawScope() at each block's start.
  std::string drawGroupName(const std::string& prefix, uint32_t group) const {
    return prefix + "g" + std::to_string(group);
  }
  void newDrawScope() {
    groupsDrawn_.clear();
  }
  void drawWords(int32_t i, const std::string& prefix, const std::string& key) {
    if (tape_.op[i] != Op::Randn) return;
    const uint32_t group = static_cast<uint32_t>(tape_.imm[i]) / kDrawsPerCall;
    if (!groupsDrawn_.insert(group).second) return;
    line("const " + dialect_.uint4Type + " " + drawGroupName(prefix, group) + " = tl_drawWords(" +
         uintLiteral(group) + ", tl_pathLo, tl_pathHi, " + key + "0, " + key + "1);");
  }

  // Reverse rule of node i: contributions to a, then b, skipping arguments
  // that depend on no input (their adjoints reach no Greek); every market, or market `only`.
  void reverseRule(int32_t i, const std::string& prefix, int only = kAllMarkets) {
    if (!dependsOnInput_[i] || arity(tape_.op[i]) == 0) return;
    const OpInfo& op = info(tape_.op[i]);
    for (auto [m, last] = copiesIn(i, only); m < last; ++m) {
      if (dependsOnInput_[tape_.a[i]])
        line(adjoint(tape_.a[i], m) + " += " + spellRule(op.adjointA, i, m, prefix) + ";");
      if (op.arity == 2 && dependsOnInput_[tape_.b[i]])
        line(adjoint(tape_.b[i], m) + " += " + spellRule(op.adjointB, i, m, prefix) + ";");
    }
  }

  // Scratch addresses of node j's copy for market m. A load's address is opaque (keyed by zero) so the
  // compiler cannot forward the stored value through a register. SoA
  // addresses use tl_inv, `invocations` made path-loop-variant: with the
  // plain parameter every slot's address is loop-invariant, the compiler
  // hoists them all out of the path loop (one 64-bit address per slot,
  // 191 at the 252-step Asian's seglen 24) and spills them (nvcc sm_90:
  // 96 registers + 2 KB stack; with tl_inv: 72 registers, no stack, as AoS).
  std::string scratchStore(int32_t j, int m) const { return slotStore(firstScratchSlot_[j] + (dependsOnInput_[j] ? m : 0)); }
  std::string scratchLoad(int32_t j, int m) const { return slotLoad(firstScratchSlot_[j] + (dependsOnInput_[j] ? m : 0)); }
  // Slot `slot` of this lane (SoA: through `inv`, the invocations; tl_inv in the path loop).
  std::string slotStore(int slot, const std::string& inv = "tl_inv") const {
    if (options_.layout == ScratchLayout::AoS)
      return "tl_tid * " + uintLiteral(laneSlots()) + " + " + uintLiteral(slot);
    return uintLiteral(slot) + " * " + inv + " + tl_tid";
  }
  std::string slotLoad(int slot) const {
    if (options_.layout == ScratchLayout::AoS)
      return "(tl_tid * " + uintLiteral(laneSlots()) + " + " + uintLiteral(slot) + ") ^ " + zeroKey();
    return uintLiteral(slot) + " * (tl_inv ^ " + zeroKey() + ") + tl_tid";
  }
  // Kahan cell i (sum i, at kahanSums() + i its compensation) in local memory.
  std::string kahanCell(int i) const { return "tl_red[" + uintLiteral(int64_t(i) * workgroupSize_) + " + tl_lid]"; }

  // ---- the text
  void header() {
    source_ += dialect_.prologue;
    if (options_.precision == Precision::F64) source_ += dialect_.fp64Prologue;
    if (!config_.philoxUnrolled || marketLoop_)
      source_ += dialect_.dontUnrollPrologue;
    const std::string name = tape_.name.empty() ? "(unnamed)" : tape_.name;
    source_ += "// tapelab kernel: tape " + name + ", " + std::to_string(tape_.size()) + " nodes, " +
               toString(options_.kind);
    if (checkpointed_)
      source_ += " (" + std::to_string(options_.plan.segments()) + " segments, " + options_.plan.strategy + ")";
    if (options_.kind == KernelKind::Scratch)
      source_ += std::string(", ") + toString(options_.layout) + ", " + std::to_string(scratchSlots_) + " slots";
    if (sequential_) source_ += ", markets sequential";
    if (drawSlots_ > 0) source_ += ", draws stored in scratch";
    source_ += std::string(", ") + toString(options_.precision) + ", " + std::to_string(markets_) + " market(s), " +
               (options_.greeks ? "value + Greeks" : "value only") + ", dialect " + dialect_.name + "\n";
    // The whole config, so that a cache keyed by the source is keyed by it too.
    source_ += "// config: " + configText(config_, dialect_.engine) + "\n";
    for (const std::string& u : unusedFields()) source_ += "// config unused: " + u + "\n";
    source_ += dialect_.helpers;
    if (approx()) source_ += dialect_.spelling(options_.precision).approxHelpers;
  }

  // The helper functions every kernel defines: opq, sel, then Philox and the normal quantile (draws.cpp).
  void prelude() {
    const std::string& qualifier = dialect_.helperQualifier;
    const std::string& T = scalarType_;  // the ABI's T and U (emit.h), short in this text-heavy code
    const std::string& U = uintType_;
    // An add, not an XOR: opq(opq(x)) must stay opaque. With XOR the two cancel
    // where a recomputed segment re-reads a bookmark that was itself opaque (a
    // constant) or fences it again, and the compiler sees through the cut.
    source_ += "// opq: the identity on every bit pattern, opaque to the compiler (z is always 0).\n";
    source_ += qualifier + T + " tl_opq(" + T + " x, " + U + " z) { return " + types_.bitsToFloat + "(" +
               types_.floatToBits + "(x) + " + cast(types_.bitsType, "z") + "); }\n";
    source_ += qualifier + T + " tl_sel(bool c, " + T + " x, " + T + " y) { return c ? x : y; }\n";
    source_ += drawHelpers(dialect_, options_.precision, config_);  // Philox, the quantile (draws.cpp)
  }

  void body() {
    ++indent_;
    const int wg = workgroupSize_;
    const uint32_t block = uint32_t(wg) * uint32_t(config_.lanes);
    const std::string& U = uintType_;
    line("const " + U + " tl_lid = " + dialect_.localId + ";");
    line("const " + U + " tl_g = " + dialect_.groupId + ";");
    if (options_.kind == KernelKind::Scratch || drawSlots_ > 0) line("const " + U + " tl_tid = tl_g * " + uintLiteral(wg) + " + tl_lid;");
    for (int m = 0; m < markets_; ++m)
      for (int k = 0; k < tape_.numInputs(); ++k)
        line(scalarType_ + " tl_in" + std::to_string(m) + "_" + std::to_string(k) + " = inputs[" +
             uintLiteral(int64_t(m) * tape_.numInputs() + k) + "];");
    line("// Kahan sums per market: value, adjoints, then their squares.");
    if (kahanInLocal_) {
      line("// In local memory: sum i of this lane at tl_red[i * WG + lid], its compensation at [(sums + i) * WG + lid].");
      for (int i = 0; i < 2 * kahanSums(); ++i)
        line(kahanCell(i) + " = " + literal(0.0) + ";");
    } else {
      for (int i = 0; i < kahanSums(); ++i)
        line(scalarDecl() + "tl_s" + std::to_string(i) + " = " + literal(0.0) + "; " + scalarDecl() + "tl_c" +
             std::to_string(i) + " = " + literal(0.0) + ";");
    }
    open("for (" + U + " tl_j = 0u; tl_j < " + uintLiteral(config_.lanes) + "; ++tl_j) {");
    line(U + " tl_p = tl_g * " + uintLiteral(block) + " + tl_j * " + uintLiteral(wg) + " + tl_lid;");
    open("if (tl_p < " + param("count") + ") {");
    if (options_.layout == ScratchLayout::SoA &&
        ((options_.kind == KernelKind::Scratch && options_.greeks && options_.plan.segments() > 1) || drawSlots_ > 0))
      line(U + " tl_inv = " + param("invocations") + " + (tl_j & " + zeroKey() +
           ");  // loop-variant: see scratchStore");
    line(U + " tl_pathLo = " + param("pathLo") + " + tl_p;");
    line(U + " tl_pathHi = " + param("pathHi") + " + (tl_pathLo < tl_p ? 1u : 0u);");
    line(U + " tl_fk0 = " + param("seedLo") + "; " + U + " tl_fk1 = " + param("seedHi") + ";");
    if (checkpointed_)
      checkpointedPath();
    else if (tangent())
      tangentPath();
    else
      plainPath();
    addToKahanSums();
    close();
    close();
    reduceWorkgroup();
    --indent_;
  }

  void plainPath() {
    line("// forward sweep");
    newDrawScope();
    for (int32_t i = 0; i < tape_.size(); ++i) {
      drawWords(i, "v", "tl_fk");
      for (int m = 0; m < copiesOf(i); ++m)
        line(scalarDecl() + value("v", i, m) + " = " + forwardExpr(i, m, "v") + ";");
    }
    if (!options_.greeks) return;
    line("// reverse sweep");
    for (int32_t i = 0; i < tape_.size(); ++i) {
      if (!dependsOnInput_[i]) continue;
      for (int m = 0; m < markets_; ++m)
        line(scalarDecl() + adjoint(i, m) + " = " + literal(i == tape_.output ? 1.0 : 0.0) + ";");
    }
    for (int32_t i = tape_.size() - 1; i >= 0; --i) reverseRule(i, "v");
  }

  // The tangent kind: the plain kernel's forward sweep, line for line, each
  // value followed by its tangents (tape/tangent.h); no reverse sweep.
  void tangentPath() {
    line("// forward sweep, each value followed by its tangents (tape/tangent.h)");
    newDrawScope();
    for (int32_t i = 0; i < tape_.size(); ++i) {
      drawWords(i, "v", "tl_fk");
      for (int m = 0; m < copiesOf(i); ++m)
        line(scalarDecl() + value("v", i, m) + " = " + forwardExpr(i, m, "v") + ";");
      for (int m = 0; m < markets_; ++m)
        for (int32_t slot : tangents_.of[i])
          line(scalarDecl() + tangentName(i, slot, m) + " = " + tangentExpr(i, slot, m) + ";");
    }
  }

  // Slot `slot` of node i's tangent: a's term, then b's, each ops.def's adjoint rule with the argument's tangent as d.
  std::string tangentExpr(int32_t i, int32_t slot, int m) const {
    const Op op = tape_.op[i];
    if (op == Op::Input) return literal(1.0);
    auto has = [&](int32_t j) { return std::binary_search(tangents_.of[j].begin(), tangents_.of[j].end(), slot); };
    std::string expr;
    if (has(tape_.a[i])) {
      const std::string d = tangentName(tape_.a[i], slot, m);
      expr = "(" + spellRule(info(op).adjointA, i, m, "v", &d) + ")";
    }
    if (arity(op) == 2 && has(tape_.b[i])) {
      const std::string d = tangentName(tape_.b[i], slot, m);
      expr += (expr.empty() ? "(" : " + (") + spellRule(info(op).adjointB, i, m, "v", &d) + ")";
    }
    return expr;
  }
  std::string tangentName(int32_t j, int32_t slot, int market) const {
    std::string s = "t" + std::to_string(j) + "_" + std::to_string(slot);
    if (markets_ > 1) s += "_" + std::to_string(market);
    return s;
  }
  bool tangent() const { return options_.kind == KernelKind::Tangent && options_.greeks; }

  void checkpointedPath() {
    const Plan& plan = options_.plan;
    const bool scratch = options_.kind == KernelKind::Scratch;
    line("// persistent values: bookmarks, inputs, output");
    for (int32_t j : plan.persistent) {
      if (inArray(j)) {  // the market loop indexes them
        line((inSharedArray(j) ? dialect_.blockShared : std::string()) + scalarDecl() + "v" + std::to_string(j) + "[" +
             std::to_string(markets_) + "];");
        continue;
      }
      for (int m = 0; m < copiesOf(j); ++m) line(scalarDecl() + value("v", j, m) + ";");
    }
    line("// forward sweep, one block per segment");
    for (int s = 0; s < plan.segments(); ++s) {
      open("{  // segment " + std::to_string(s) + ": nodes [" + std::to_string(plan.begin(s)) + ", " +
           std::to_string(plan.end(s)) + ")");
      newDrawScope();
      // Every draw of the segment (a stored one too: it is stored from its variable, below).
      // The market loop: what no market owns (draws, constants) and the inputs first, then each market's
      // nodes in a rolled loop (no shared node reads a market's, so the order is the same per market).
      auto looped = [&](int32_t i) { return marketLoop_ && dependsOnInput_[i] && tape_.op[i] != Op::Input; };
      bool anyLooped = false;
      for (int32_t i = plan.begin(s); i < plan.end(s); ++i) {
        if (looped(i)) {
          anyLooped = true;
          continue;
        }
        drawWords(i, "v", "tl_fk");
        for (int m = 0; m < copiesOf(i); ++m)
          line((plan.isPersistent[i] ? "" : scalarDecl()) + value("v", i, m) + " = " +
               forwardExpr(i, m, "v") + ";");
        if (drawSlot(i) >= 0) line("scratch[" + slotStore(drawSlot(i)) + "] = " + value("v", i, 0) + ";");
      }
      if (anyLooped) {
        openMarketLoop();
        for (int32_t i = plan.begin(s); i < plan.end(s); ++i)
          if (looped(i))
            line((plan.isPersistent[i] ? "" : scalarDecl()) + value("v", i, kLoopMarket) + " = " +
                 forwardExpr(i, kLoopMarket, "v") + ";");
        close();
      }
      if (scratch && options_.greeks && s + 1 < plan.segments())
        for (int32_t j : plan.storedAt[s])
          for (int m = 0; m < copiesOf(j); ++m)
            line("scratch[" + scratchStore(j, m) + "] = " + value("v", j, m) + ";");
      close();
    }
    if (!options_.greeks) return;
    line("// reverse sweep: segments last to first, each recomputed from its bookmarks");
    const Schedule schedule = lowerPlan(tape_, plan);
    if (marketLoop_ && schedule.depth == 1) shared_ = shareAdjointArrays(tape_, plan, dependsOnInput_);
    for (int k = 0; k < shared_.arrays; ++k)
      line(scalarDecl() + "ds" + std::to_string(k) + "[" + std::to_string(markets_) + "];  // set where first written");
    for (int32_t j : plan.persistent) {
      if (!dependsOnInput_[j] || sharedArray(j) >= 0) continue;
      if (inArray(j)) line(scalarDecl() + "d" + std::to_string(j) + "[" + std::to_string(markets_) + "];");
      for (int m = 0; m < markets_; ++m)
        line((inArray(j) ? std::string() : scalarDecl()) + adjoint(j, m) + " = " + adjointSeed(j) + ";");
    }
    int segment = plan.segments();
    for (const ScheduleBlock& b : schedule.blocks) reverseBlock(b, "segment " + std::to_string(--segment));
  }

  // The reverse sweep's blocks (planner/schedule.h). A top-level leaf is the
  // flat kernels' segment block; deeper blocks name their values by depth
  // ("w2_17", bookmarks "k2_17") and key their opaque identity and draws with
  // their own zero multiple, so that no compiler merges the recompute of two
  // blocks (siblings recompute the same nodes from the same imports).
  void reverseBlock(const ScheduleBlock& b, const std::string& label) {
    const std::string prefix = b.depth == 1 ? "w" : "w" + std::to_string(b.depth) + "_";
    std::string heading = "{  // " + label;
    if (b.depth > 1 || !b.leaf()) heading += ": nodes [" + std::to_string(b.begin) + ", " + std::to_string(b.end) + ")";
    if (b.from < b.begin) heading += ", recomputed from " + std::to_string(b.from);
    if (b.kind == ScheduleBlock::Kind::Inner) heading += ", cut again with bookmarks";
    if (b.kind == ScheduleBlock::Kind::Chain) heading += ", a chain: each part recomputed from the start";
    open(heading);
    std::string key = zeroKey();
    if (b.depth > 1 || !b.leaf()) {
      key = "tl_z" + std::to_string(++blockKeys_);
      line("const " + uintType_ + " " + key + " = " +
           (config_.opaque ? "(tl_j & " + param("zero") + ") * " + uintLiteral(blockKeys_ + 1) : std::string("0u")) + ";");
    }
    switch (b.kind) {
      case ScheduleBlock::Kind::Leaf: {
        const std::vector<uint8_t> needed = neededIn(b);
        if (sequential_) {  // what no market owns (the draws) once, then each market's recompute and reverse
          recompute(b, needed, b.end, prefix, key, kSharedOnly);
          const bool loop = marketLoop_ && b.depth == 1;  // the markets as one rolled loop (top-level leaves)
          for (int m = 0; m < (loop ? 1 : markets_); ++m) {
            const int market = loop ? kLoopMarket : m;
            if (loop) {
              openMarketLoop();
              for (int32_t j : adjointsFirstWrittenIn(b)) line(adjoint(j, market) + " = " + adjointSeed(j) + ";");
            } else {
              open("{  // market " + std::to_string(m));
            }
            recompute(b, needed, b.end, prefix, key, market);
            declareAdjoints(b, market);
            for (int32_t i = b.end - 1; i >= b.begin; --i) reverseRule(i, prefix, market);
            close();
          }
          break;
        }
        recompute(b, needed, b.end, prefix, key);
        declareAdjoints(b);
        for (int32_t i = b.end - 1; i >= b.begin; --i) reverseRule(i, prefix);
        break;
      }
      case ScheduleBlock::Kind::Inner: {
        const std::string bookmark = "k" + std::to_string(b.depth) + "_";
        for (int32_t j : b.bookmarks)
          for (int m = 0; m < copiesOf(j); ++m) line(scalarDecl() + value(bookmark, j, m) + ";");
        open("{  // recompute [" + std::to_string(b.from) + ", " + std::to_string(b.advanceEnd) +
             "), keeping the bookmarks");
        std::vector<uint8_t> needed(tape_.size(), 0);
        for (int32_t j : b.bookmarks) needed[j] = 1;
        markArguments(needed, b.from, b.advanceEnd);
        recompute(b, needed, b.advanceEnd, prefix, key);
        for (int32_t j : b.bookmarks)
          for (int m = 0; m < copiesOf(j); ++m) line(value(bookmark, j, m) + " = " + value(prefix, j, m) + ";");
        close();
        declareAdjoints(b);
        for (const ScheduleBlock& c : b.children) reverseBlock(c, "part");
        break;
      }
      case ScheduleBlock::Kind::Chain:
        declareAdjoints(b);
        for (const ScheduleBlock& c : b.children) reverseBlock(c, "part");
        break;
    }
    close();
  }

  // Recomputes the needed nodes of [b.from, to) from the block's imports: the
  // persistent values (scratch kernels: from the buffer) or an enclosing block's bookmarks.
  // `which`: every copy (kAllMarkets), only the values no market owns (kSharedOnly: draws,
  // constants), or only market m's copies of the values that depend on an input (m >= 0).
  void recompute(const ScheduleBlock& b, const std::vector<uint8_t>& needed, int32_t to, const std::string& prefix,
                 const std::string& key, int which = kAllMarkets) {
    const bool scratch = options_.kind == KernelKind::Scratch;
    auto wanted = [&](int32_t j) {
      return needed[j] && (which == kAllMarkets || (which == kSharedOnly) == !dependsOnInput_[j]);
    };
    bool draws = false;
    for (int32_t i = b.from; i < to; ++i) draws = draws || (wanted(i) && tape_.op[i] == Op::Randn && drawSlot(i) < 0);
    if (draws)
      line(uintType_ + " tl_rk0 = " + param("seedLo") + " ^ " + key + "; " + uintType_ + " tl_rk1 = " +
           param("seedHi") + " ^ " + key + ";");
    for (size_t k = 0; k < b.imports.size(); ++k) {
      const int32_t j = b.imports[k];
      if (!wanted(j)) continue;
      const int holder = b.importDepth[k];
      for (auto [m, last] = copiesIn(j, which); m < last; ++m) {
        const std::string declared = scalarDecl() + value(prefix, j, m) + " = ";
        if (holder == 0 && scratch && tape_.op[j] != Op::Input)
          line(declared + "scratch[" + scratchLoad(j, m) + "];");
        else
          line(declared + "tl_opq(" + value(holder == 0 ? "v" : "k" + std::to_string(holder) + "_", j, m) + ", " +
               key + ");");
      }
    }
    newDrawScope();
    for (int32_t i = b.from; i < to; ++i) {
      if (!wanted(i)) continue;
      if (drawSlot(i) >= 0) {  // the forward sweep's draw, read back (an opaque address: not forwarded)
        line(scalarDecl() + value(prefix, i, 0) + " = scratch[" + slotLoad(drawSlot(i)) + "];");
        continue;
      }
      drawWords(i, prefix, "tl_rk");
      for (auto [m, last] = copiesIn(i, which); m < last; ++m)
        line(scalarDecl() + value(prefix, i, m) + " = " + forwardExpr(i, m, prefix) + ";");
    }
  }

  // The shared adjoint arrays top-level segment b sets before its first addition (adjoint_arrays.h).
  std::vector<int32_t> adjointsFirstWrittenIn(const ScheduleBlock& b) const {
    if (shared_.firstWrittenIn.empty()) return {};
    const auto& bounds = options_.plan.bounds;
    return shared_.firstWrittenIn[std::lower_bound(bounds.begin(), bounds.end(), b.begin) - bounds.begin()];
  }

  void declareAdjoints(const ScheduleBlock& b, int only = kAllMarkets) {
    for (int32_t i : b.adjoints)
      if (dependsOnInput_[i])
        for (auto [m, last] = copiesIn(i, only); m < last; ++m) line(scalarDecl() + adjoint(i, m) + " = " + literal(0.0) + ";");
  }

  // The values a leaf's adjoint rules read, and what recomputing them reads
  // (within [from, end) or imported): what the leaf recomputes.
  std::vector<uint8_t> neededIn(const ScheduleBlock& b) const {
    std::vector<uint8_t> needed(tape_.size(), 0);
    for (int32_t i = b.begin; i < b.end; ++i) {
      if (!dependsOnInput_[i] || arity(tape_.op[i]) == 0) continue;
      const OpInfo& op = info(tape_.op[i]);
      auto mark = [&](std::string_view rule) {
        if (mentions(rule, "a")) needed[tape_.a[i]] = 1;
        if (mentions(rule, "b")) needed[tape_.b[i]] = 1;
        if (mentions(rule, "r")) needed[i] = 1;
      };
      if (dependsOnInput_[tape_.a[i]]) mark(op.adjointA);
      if (op.arity == 2 && dependsOnInput_[tape_.b[i]]) mark(op.adjointB);
    }
    markArguments(needed, b.from, b.end);
    return needed;
  }

  // Marks the arguments of every needed node of [from, to), descending.
  void markArguments(std::vector<uint8_t>& needed, int32_t from, int32_t to) const {
    for (int32_t i = to - 1; i >= from; --i) {
      if (!needed[i]) continue;
      const int ar = arity(tape_.op[i]);
      if (ar >= 1) needed[tape_.a[i]] = 1;
      if (ar >= 2) needed[tape_.b[i]] = 1;
    }
  }

  // Adds this path's value and adjoints (and squares) to the lane's Kahan sums.
  void addToKahanSums() {
    for (int m = 0; m < markets_; ++m) {
      for (int k = 0; k < sumsPerMarket_; ++k) {
        std::string x;
        if (k > 0 && tangent()) {  // the output's tangent; a slot it lacks stays a sum of nothing (0)
          const int32_t slot = tangents_.slotOfInput[k - 1];
          const auto& outSlots = tangents_.of[tape_.output];
          if (slot < 0 || !std::binary_search(outSlots.begin(), outSlots.end(), slot)) continue;
          x = tangentName(tape_.output, slot, m);
        } else if (k == 0)
          x = value("v", tape_.output, m);
        else
          x = dependsOnInput_[tape_.inputNodes[k - 1]] ? adjoint(tape_.inputNodes[k - 1], m) : literal(0.0);
        for (int squared = 0; squared < 2; ++squared) {
          const int index = m * 2 * sumsPerMarket_ + squared * sumsPerMarket_ + k;
          const std::string q = std::to_string(index);
          const std::string term = squared ? x + " * " + x : x;
          if (kahanInLocal_) {
            const std::string sum = kahanCell(index), comp = kahanCell(kahanSums() + index);
            line("{ " + scalarDecl() + "s = " + sum + "; " + scalarDecl() + "y = " + term + " - " + comp + "; " +
                 scalarDecl() + "t = s + y; " + comp + " = (t - s) - y; " + sum + " = t; }");
          } else {
            line("{ " + scalarDecl() + "y = " + term + " - tl_c" + q + "; " + scalarDecl() + "t = tl_s" + q +
                 " + y; tl_c" + q + " = (t - tl_s" + q + ") - y; tl_s" + q + " = t; }");
          }
        }
      }
    }
  }

  // Fixed-order tree over the workgroup's lanes, sumsPerReduction_ sums at a time (local: the sums
  // are in place already, every tree at once).
  void reduceWorkgroup() {
    const int wg = workgroupSize_;
    const int sums = kahanSums(), chunk = kahanInLocal_ ? sums : sumsPerReduction_;
    line("// workgroup reduction: a fixed binary tree in local memory, then one partial per sum");
    for (int lo = 0; lo < sums; lo += chunk) {
      const int hi = std::min(sums, lo + chunk);
      for (int i = lo; i < hi && !kahanInLocal_; ++i)
        line("tl_red[" + uintLiteral(int64_t(i - lo) * wg) + " + tl_lid] = " +
             "tl_s" + std::to_string(i) + ";");
      line(dialect_.barrier);
      open("for (" + uintType_ + " tl_st = " + uintLiteral(wg / 2) + "; tl_st > 0u; tl_st >>= 1u) {");
      open("if (tl_lid < tl_st) {");
      for (int i = lo; i < hi; ++i) {
        const std::string at = uintLiteral(int64_t(i - lo) * wg) + " + tl_lid";
        line("tl_red[" + at + "] = tl_red[" + at + "] + tl_red[" + at + " + tl_st];");
      }
      close();
      line(dialect_.barrier);
      close();
      open("if (tl_lid == 0u) {");
      for (int i = lo; i < hi; ++i)
        line("partials[tl_g * " + uintLiteral(sums) + " + " + uintLiteral(i) + "] = tl_red[" +
             uintLiteral(int64_t(i - lo) * wg) + "];");
      close();
      if (hi < sums) line(dialect_.barrier);
    }
  }

  const Tape& tape_;
  const KernelOptions& options_;
  const Dialect& dialect_;
  const KernelConfig& config_;
  int workgroupSize_;
  const PrecisionSpelling& types_;  // the dialect's spellings in the kernel's precision
  int markets_;
  std::string scalarType_, uintType_;  // the ABI's T and U
  std::vector<uint8_t> dependsOnInput_;  // per node: computed from an input (one copy per market, an adjoint)
  std::vector<int32_t> firstScratchSlot_;  // per stored node: its first slot in scratch, else -1
  int scratchSlots_ = 0;
  std::vector<int32_t> drawSlot_;  // config draws=stored: per node, its draw's slot, else -1 (empty: off)
  int drawSlots_ = 0;
  int sumsPerMarket_ = 1;     // the ABI's width: 1 + numInputs with greeks, else 1
  int sumsPerReduction_ = 1;  // Kahan sums reduced together in local memory
  bool checkpointed_ = false;
  bool sequential_ = false;  // MarketOrder::Sequential in effect: leaf blocks reverse one market at a time
  static constexpr int kAllMarkets = -1, kSharedOnly = -2;  // recompute()'s `which` besides a market
  static constexpr int kLoopMarket = -3;  // the market loop's current market, tl_m (config markets=loop)
  bool marketLoop_ = false;  // config markets=loop in effect
  std::vector<uint8_t> dependsOnDraw_;  // per node: a draw reaches it (its value differs between lanes)
  bool sharedConstants_ = false;  // config shared_constants in effect (run() decides: the dialect, the room)
  std::string source_;
  int indent_ = 0;
  int blockKeys_ = 0;  // opaque keys of nested blocks made so far
  std::set<uint32_t> groupsDrawn_;  // draw groups whose words the current block has declared
  SharedAdjointArrays shared_;  // the market loop over a flat plan (adjoint_arrays.h); else empty
  bool kahanInLocal_ = false;  // config sums=local, and the sums fit
  TangentSlots tangents_;      // the tangent kind's slots per node
};

}  // namespace

EmittedKernel emitKernel(const Tape& tape, const KernelOptions& options, const Dialect& dialect,
                         const EmitOptions& emit) {
  if (const std::string problem = validate(tape); !problem.empty()) throw std::invalid_argument(problem);
  if (options.markets < 1 || options.markets > 8)
    throw std::invalid_argument("markets must be 1..8 (got " + std::to_string(options.markets) + ")");
  if (options.precision == Precision::F64 && !dialect.hasFp64)
    throw std::invalid_argument("the " + dialect.name + " dialect has no fp64 kernels");
  if (emit.workgroupSize < 1 || (emit.workgroupSize & (emit.workgroupSize - 1)) != 0 || emit.workgroupSize > 1024)
    throw std::invalid_argument("workgroup size must be a power of two up to 1024");
  if (options.config.lanes < 1) throw std::invalid_argument("paths per lane must be at least 1");
  if (options.kind == KernelKind::Tangent) differentiatedInputs(options, tape.numInputs());  // throws on a bad --wrt
  if (options.kind != KernelKind::Plain && options.kind != KernelKind::Tangent) {
    const Plan& plan = options.plan;
    if (plan.bounds.size() < 2 || plan.bounds.front() != 0 || plan.bounds.back() != tape.size() ||
        plan.isPersistent.size() != static_cast<size_t>(tape.size()))
      throw std::invalid_argument(std::string(toString(options.kind)) + " kernel needs a plan made for this tape");
  }
  return Emitter(tape, options, dialect, emit).run();
}

}  // namespace tapelab
