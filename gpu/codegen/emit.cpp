#include "gpu/codegen/emit.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "gpu/codegen/names.h"
#include "gpu/codegen/storage.h"
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

// Prints the kernel from its storage plan (storage.h), naming what the plan placed through Names.
class Emitter : Names {
 public:
  Emitter(const Tape& tape, const KernelOptions& options, const Dialect& dialect, int workgroupSize,
          const StoragePlan& storage)
      : Names(storage, options, dialect, workgroupSize), tape_(tape), options_(options), dialect_(dialect),
        config_(options.config), workgroupSize_(workgroupSize), types_(dialect.spelling(options.precision)),
        markets_(options.markets), s_(storage) {
    scalarType_ = types_.scalar;
    uintType_ = dialect.uintType;
    sumsPerMarket_ = options.greeks ? 1 + tape.numInputs() : 1;
    checkpointed_ = options.kind != KernelKind::Plain && options.kind != KernelKind::Tangent;
    sequential_ = sequentialMarkets(options);
  }

  EmittedKernel run() {
    header();
    prelude();
    std::string begin = dialect_.kernelBegin;
    begin = substitute(begin, "$RED", std::to_string(s_.localRows * workgroupSize_));
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
    k.scratchSlots = s_.laneSlots();
    k.segments = checkpointed_ ? options_.plan.segments() : 1;
    k.wrt = options_.kind == KernelKind::Tangent ? options_.wrt : std::vector<int>{};
    k.configUnused = s_.unused;
    k.sharedInputs = s_.sharedInputs;
    for (int i : s_.sharedInputs) k.sharedInputNames.push_back(tape_.inputNames[i]);
    return k;
  }

 private:
  // ---- spelling helpers
  std::string literal(double v) const { return spellLiteral(v, options_.precision, dialect_); }
  std::string function(std::string_view identifier) const {
    return dialect_.function(options_.precision, identifier, approx());
  }
  std::string cast(const std::string& type, const std::string& x) const {
    return dialect_.cCasts ? "(" + type + ")(" + x + ")" : type + "(" + x + ")";
  }
  // What starts a declaration of a scalar: "precise float " in GLSL.
  std::string scalarDecl() const { return dialect_.precise + scalarType_ + " "; }
  bool approx() const { return config_.math == MathContract::Approx; }
  // What a persistent adjoint starts from: 1 for the output, else 0.
  std::string adjointSeed(int32_t j) const { return literal(j == tape_.output ? 1.0 : 0.0); }

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
  std::string spellRule(std::string_view expr, int32_t i, Markets m, const std::string& prefix,
                        const std::string* d = nullptr) const {
    return spellFenced(expr, tape_.op[i], [&](std::string_view id, bool fenced) -> std::string {
      if (id == "a") return fence(value(prefix, tape_.a[i], m), fenced);
      if (id == "b") return fence(value(prefix, tape_.b[i], m), fenced);
      if (id == "c") return fence(value(prefix, tape_.c[i], m), fenced);
      if (id == "r") return value(prefix, i, m);
      if (id == "d") return d ? *d : adjoint(i, m);
      if (id == "zero") return literal(0.0);
      if (id == "one") return literal(1.0);
      return function(id);
    });
  }

  std::string forwardExpr(int32_t i, Markets m, const std::string& prefix) const {
    switch (tape_.op[i]) {
      case Op::Const: return "tl_opq(" + literal(tape_.imm[i]) + ", " + zeroKey() + ")";
      case Op::Input:
        // A recomputed segment reads its inputs through opq too, or the
        // compiler could merge a segment built from inputs and constants alone.
        if (prefix != "v") return "tl_opq(" + value("v", i, m) + ", " + zeroKey() + ")";
        return "tl_in" + std::to_string(m.market) + "_" + std::to_string(static_cast<int>(tape_.imm[i]));
      case Op::Randn: {  // its Box-Muller pair's draw, which drawWords() declared before this line
        const uint32_t k = static_cast<uint32_t>(tape_.imm[i]);
        return drawPairName(prefix, k) + (k % 2 ? ".y" : ".x");
      }
      default: return fence(spellRule(info(tape_.op[i]).forward, i, m, prefix), fencedResult(tape_.op[i]));
    }
  }

  // The draws of a block of straight-line code: the first draw of group g that
  // the block computes declares the four words of g's Philox call
  // (tape/philox.h), named by the block's value prefix; later draws of g in
  // the block read them. Likewise the first draw of a Box-Muller pair (draws 2p, 2p + 1) computes the
  // pair, named prefix g<g>n<p % 2>, and its other draw reads it. newDrawScope() at each block's start.
  std::string drawGroupName(const std::string& prefix, uint32_t group) const {
    return prefix + "g" + std::to_string(group);
  }
  std::string drawPairName(const std::string& prefix, uint32_t draw) const {
    return drawGroupName(prefix, draw / kDrawsPerCall) + "n" + std::to_string(draw % kDrawsPerCall / 2);
  }
  void newDrawScope() {
    groupsDrawn_.clear();
    pairsDrawn_.clear();
  }
  void drawWords(int32_t i, const std::string& prefix, const std::string& key) {
    if (tape_.op[i] != Op::Randn) return;
    const uint32_t k = static_cast<uint32_t>(tape_.imm[i]), group = k / kDrawsPerCall;
    const std::string words = drawGroupName(prefix, group);
    if (groupsDrawn_.insert(group).second)
      line("const " + dialect_.uint4Type + " " + words + " = tl_drawWords(" + uintLiteral(group) +
           ", tl_pathLo, tl_pathHi, " + key + "0, " + key + "1);");
    if (pairsDrawn_.insert(k / 2).second) {
      const uint32_t first = pairFirstWord(k);
      line("const " + types_.vector2 + " " + drawPairName(prefix, k) + " = tl_boxMuller(" + words + "." +
           kWordFields[first] + ", " + words + "." + kWordFields[first + 1] + ");");
    }
  }

  // Reverse rule of node i: contributions to a, then b, then c, skipping arguments
  // that depend on no input (their adjoints reach no Greek) and rules that send
  // nothing (`zero`); every market, or market `only`.
  void reverseRule(int32_t i, const std::string& prefix, Markets only = Markets::all()) {
    if (!hasAdjoint(i) || arity(tape_.op[i]) == 0) return;
    const OpInfo& op = info(tape_.op[i]);
    for (Markets m : adjointCopiesIn(only))
      for (int k = 0; k < op.arity; ++k)
        if (contributes(op.adjoint(k)) && hasAdjoint(tape_.arg(i, k)))
          line(adjoint(tape_.arg(i, k), m) + " += " + spellRule(op.adjoint(k), i, m, prefix) + ";");
  }

  // ---- the text
  void header() {
    source_ += dialect_.prologue;
    if (options_.precision == Precision::F64) source_ += dialect_.fp64Prologue;
    if (!config_.philoxUnrolled || s_.marketLoop || s_.prefill)  // prefill: its loop over the draws stays rolled
      source_ += dialect_.dontUnrollPrologue;
    const std::string name = tape_.name.empty() ? "(unnamed)" : tape_.name;
    source_ += "// tapelab kernel: tape " + name + ", " + std::to_string(tape_.size()) + " nodes, " +
               toString(options_.kind);
    if (checkpointed_)
      source_ += " (" + std::to_string(options_.plan.segments()) + " segments, " + options_.plan.strategy + ")";
    if (options_.kind == KernelKind::Scratch)
      source_ += std::string(", ") + toString(options_.layout) + ", " + std::to_string(s_.scratchSlots) + " slots";
    if (sequential_) source_ += ", markets sequential";
    if (s_.drawSlots > 0) source_ += s_.prefill ? ", draws prefilled into scratch" : ", draws stored in scratch";
    source_ += std::string(", ") + toString(options_.precision) + ", " + std::to_string(markets_) + " market(s), " +
               (options_.greeks ? "value + Greeks" : "value only") + ", dialect " + dialect_.name + "\n";
    // The whole config, so that a cache keyed by the source is keyed by it too.
    source_ += "// config: " + configText(config_, dialect_.engine) + "\n";
    if (!s_.sharedInputs.empty()) {
      source_ += "// inputs every market shares, read once:";
      for (int k : s_.sharedInputs) source_ += " " + tape_.inputNames[k];
      source_ += "\n";
    }
    for (const std::string& u : s_.unused) source_ += "// config unused: " + u + "\n";
    source_ += dialect_.helpers;
    if (approx()) source_ += dialect_.spelling(options_.precision).approxHelpers;
  }

  // The helper functions every kernel defines: opq, sel, then Philox and Box-Muller (draws.cpp).
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
    source_ += drawHelpers(dialect_, options_.precision, config_);
  }

  void body() {
    ++indent_;
    const int wg = workgroupSize_;
    const uint32_t block = uint32_t(wg) * uint32_t(config_.lanes);
    const std::string& U = uintType_;
    line("const " + U + " tl_lid = " + dialect_.localId + ";");
    line("const " + U + " tl_g = " + dialect_.groupId + ";");
    if (options_.kind == KernelKind::Scratch || s_.drawSlots > 0) line("const " + U + " tl_tid = tl_g * " + uintLiteral(wg) + " + tl_lid;");
    for (int m = 0; m < markets_; ++m)
      for (int k = 0; k < tape_.numInputs(); ++k)
        if (m == 0 || std::find(s_.sharedInputs.begin(), s_.sharedInputs.end(), k) == s_.sharedInputs.end())
          line(scalarType_ + " tl_in" + std::to_string(m) + "_" + std::to_string(k) + " = inputs[" +
             uintLiteral(int64_t(m) * tape_.numInputs() + k) + "];");
    line("// Kahan sums per market: value, adjoints, then their squares.");
    if (s_.kahanInLocal) {
      line("// In local memory: sum i of this lane at tl_red[i * WG + lid], its compensation at [(sums + i) * WG + lid].");
      for (int i = 0; i < 2 * s_.kahanSums; ++i)
        line(kahanCell(i) + " = " + literal(0.0) + ";");
    } else {
      for (int i = 0; i < s_.kahanSums; ++i)
        line(scalarDecl() + "tl_s" + std::to_string(i) + " = " + literal(0.0) + "; " + scalarDecl() + "tl_c" +
             std::to_string(i) + " = " + literal(0.0) + ";");
    }
    open("for (" + U + " tl_j = 0u; tl_j < " + uintLiteral(config_.lanes) + "; ++tl_j) {");
    line(U + " tl_p = tl_g * " + uintLiteral(block) + " + tl_j * " + uintLiteral(wg) + " + tl_lid;");
    open("if (tl_p < " + param("count") + ") {");
    if (options_.layout == ScratchLayout::SoA &&
        ((options_.kind == KernelKind::Scratch && options_.greeks && options_.plan.segments() > 1) || s_.drawSlots > 0))
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
      for (Markets m : copiesIn(i, Markets::all())) line(scalarDecl() + value("v", i, m) + " = " + forwardExpr(i, m, "v") + ";");
    }
    if (!options_.greeks) return;
    line("// reverse sweep");
    for (int32_t i = 0; i < tape_.size(); ++i) {
      if (!hasAdjoint(i)) continue;
      for (int m = 0; m < markets_; ++m) line(scalarDecl() + adjoint(i, Markets::one(m)) + " = " + adjointSeed(i) + ";");
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
      for (Markets m : copiesIn(i, Markets::all())) line(scalarDecl() + value("v", i, m) + " = " + forwardExpr(i, m, "v") + ";");
      for (int m = 0; m < markets_; ++m)
        for (int32_t slot : s_.tangents.of[i])
          line(scalarDecl() + tangentName(i, slot, m) + " = " + tangentExpr(i, slot, m) + ";");
    }
  }

  // Slot `slot` of node i's tangent: a's term, then b's, then c's, each ops.def's adjoint rule with the
  // argument's tangent as d (rules that send nothing left out; none left: zero).
  std::string tangentExpr(int32_t i, int32_t slot, int m) const {
    const Op op = tape_.op[i];
    if (op == Op::Input) return literal(1.0);
    auto has = [&](int32_t j) { return std::binary_search(s_.tangents.of[j].begin(), s_.tangents.of[j].end(), slot); };
    std::string expr;
    for (int k = 0; k < arity(op); ++k) {
      const int32_t j = tape_.arg(i, k);
      if (!contributes(info(op).adjoint(k)) || !has(j)) continue;
      const std::string d = tangentName(j, slot, m);
      expr += (expr.empty() ? "(" : " + (") + spellRule(info(op).adjoint(k), i, Markets::one(m), "v", &d) + ")";
    }
    return expr.empty() ? literal(0.0) : expr;
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
      const ValuePlace place = s_.nodes[j].value;
      if (inArray(place)) {  // the market loop indexes them
        line((place == ValuePlace::SharedArray ? dialect_.blockShared : std::string()) + scalarDecl() + "v" +
             std::to_string(j) + "[" + std::to_string(markets_) + "];");
        continue;
      }
      for (Markets m : copiesIn(j, Markets::all())) line(scalarDecl() + value("v", j, m) + ";");
    }
    if (s_.prefill) prefillDraws();
    line("// forward sweep, one block per segment");
    for (int s = 0; s < plan.segments(); ++s) {
      open("{  // segment " + std::to_string(s) + ": nodes [" + std::to_string(plan.begin(s)) + ", " +
           std::to_string(plan.end(s)) + ")");
      newDrawScope();
      const std::string drawKey = s_.prefill ? prefillKey(s) : std::string();
      // Every draw of the segment (a stored one too: it is stored from its variable, below).
      // The market loop: what no market owns (draws, constants) and the inputs first, then each market's
      // nodes in a rolled loop (no shared node reads a market's, so the order is the same per market).
      auto looped = [&](int32_t i) { return s_.marketLoop && perMarket(i) && tape_.op[i] != Op::Input; };
      bool anyLooped = false;
      for (int32_t i = plan.begin(s); i < plan.end(s); ++i) {
        if (looped(i)) {
          anyLooped = true;
          continue;
        }
        if (prefilled(i)) {  // the prefill loop's draw, read (an opaque address, as a recompute reads it)
          line((plan.isPersistent[i] ? "" : scalarDecl()) + value("v", i, Markets::one(0)) + " = scratch[" +
               slotLoad(s_.nodes[i].drawSlot, drawKey) + "];");
          continue;
        }
        drawWords(i, "v", "tl_fk");
        for (Markets m : copiesIn(i, Markets::all()))
          line((plan.isPersistent[i] ? "" : scalarDecl()) + value("v", i, m) + " = " + forwardExpr(i, m, "v") + ";");
        if (const int slot = s_.nodes[i].drawSlot; slot >= 0)
          line("scratch[" + slotStore(slot) + "] = " + value("v", i, Markets::one(0)) + ";");
      }
      if (anyLooped) {
        openMarketLoop();
        for (int32_t i = plan.begin(s); i < plan.end(s); ++i)
          if (looped(i))
            line((plan.isPersistent[i] ? "" : scalarDecl()) + value("v", i, Markets::loop()) + " = " +
                 forwardExpr(i, Markets::loop(), "v") + ";");
        close();
      }
      if (scratch && options_.greeks && s + 1 < plan.segments())
        for (int32_t j : plan.storedAt[s])
          for (Markets m : copiesIn(j, Markets::all())) line("scratch[" + scratchStore(j, m) + "] = " + value("v", j, m) + ";");
      close();
    }
    if (!options_.greeks) return;
    line("// reverse sweep: segments last to first, each recomputed from its bookmarks");
    const Schedule schedule = lowerPlan(tape_, plan);
    for (int k = 0; k < s_.sharedAdjointArrays; ++k)
      line(scalarDecl() + "ds" + std::to_string(k) + "[" + std::to_string(markets_) + "];  // set where first written");
    for (int32_t j : plan.persistent) {
      const AdjointPlace place = s_.nodes[j].adjoint;
      if (place == AdjointPlace::None || place == AdjointPlace::SharedArray) continue;
      const bool array = place == AdjointPlace::LaneArray;
      if (array) line(scalarDecl() + "d" + std::to_string(j) + "[" + std::to_string(markets_) + "];");
      for (int m = 0; m < markets_; ++m)
        line((array ? std::string() : scalarDecl()) + adjoint(j, Markets::one(m)) + " = " + adjointSeed(j) + ";");
    }
    int segment = plan.segments();
    for (const ScheduleBlock& b : schedule.blocks) reverseBlock(b, "segment " + std::to_string(--segment));
  }

  bool prefilled(int32_t i) const { return s_.prefill && s_.nodes[i].drawSlot >= 0; }
  // The key of forward segment s's draw loads (draws=prefill): 0 at run time, but made of the last value
  // the previous segment computes (a persistent register scalar), so that the compiler cannot hoist every
  // segment's loads to the kernel's start (252 of them: ptxas spilled them) and loads them a segment at a time.
  // config prefill_ahead = N: the last value of segment s-1-N instead, so the loads can start N segments earlier.
  std::string prefillKey(int s) {
    const Plan& plan = options_.plan;
    // Without an earlier value (segment 0; opaque off: zero's literal) a key the recomputes do not use either,
    // so no compiler takes a recompute's load for a repeat of the forward sweep's and keeps the draw live.
    const std::string unkeyed = config_.opaque ? "(" + param("seedLo") + " & " + zeroKey() + ")" : zeroKey();
    const int from = s - 1 - config_.prefillAhead;
    if (from < 0 || !config_.opaque) return unkeyed;
    for (int32_t j = plan.end(from) - 1; j >= plan.begin(from); --j) {
      const ValuePlace place = s_.nodes[j].value;
      if (!plan.isPersistent[j] || tape_.op[j] == Op::Randn || tape_.op[j] == Op::Input ||
          (place != ValuePlace::Scalar && place != ValuePlace::MarketScalars))
        continue;
      const std::string key = "tl_dk" + std::to_string(s);
      line("const " + uintType_ + " " + key + " = " + cast(uintType_, types_.floatToBits + "(" + value("v", j, Markets::one(0)) + ")") +
           " & " + zeroKey() + ";  // 0: this segment's draws are loaded after the previous segment");
      return key;
    }
    return unkeyed;
  }

  // config draws=prefill: every draw of the path into its scratch slot before the forward sweep. The
  // groups 0..G-1 whose four draws have slots base + 4g + j (a tape drawing 0, 1, 2, ... in any node
  // order) in one rolled loop, any other group after it in a block of its own; a pair with a slot is
  // computed whole (tl_boxMuller), its draws with slots stored.
  void prefillDraws() {
    line("// draws=prefill: every draw of the path into its scratch slot, then the sweeps read them");
    const std::string& U = uintType_;
    std::map<uint32_t, std::vector<std::pair<uint32_t, int>>> groups;  // group: (word, slot)
    for (const auto& [draw, slot] : s_.drawSlotOf) groups[draw / kDrawsPerCall].push_back({draw % kDrawsPerCall, slot});
    const int base = s_.drawSlotOf.front().second;
    uint32_t full = 0;
    for (auto it = groups.find(0); it != groups.end() && it->first == full && it->second.size() == kDrawsPerCall; ++it) {
      bool regular = true;
      for (const auto& [word, slot] : it->second) regular = regular && slot == base + int(full * kDrawsPerCall + word);
      if (!regular) break;
      ++full;
    }
    if (full < 2) full = 0;  // a loop of one call: a block like the others
    auto group = [&](const std::string& g, const std::vector<std::pair<uint32_t, std::string>>& words) {
      line("const " + dialect_.uint4Type + " tl_dw = tl_drawWords(" + g + ", tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);");
      std::set<uint32_t> pairs;
      for (const auto& [word, slot] : words) {
        const uint32_t pair = word / 2;
        const std::string name = "tl_dn" + std::to_string(pair);
        if (pairs.insert(pair).second)
          line("const " + types_.vector2 + " " + name + " = tl_boxMuller(tl_dw." + kWordFields[2 * pair] + ", tl_dw." +
               kWordFields[2 * pair + 1] + ");");
        line("scratch[" + slotStore(slot) + "] = " + name + (word % 2 ? ".y" : ".x") + ";");
      }
    };
    if (full > 0) {
      openRolledLoop("for (" + U + " tl_dg = 0u; tl_dg < " + uintLiteral(full) + "; ++tl_dg) {");
      std::vector<std::pair<uint32_t, std::string>> words;
      for (uint32_t j = 0; j < kDrawsPerCall; ++j)
        words.push_back({j, "(" + uintLiteral(base + int(j)) + " + tl_dg * " + uintLiteral(kDrawsPerCall) + ")"});
      group("tl_dg", words);
      close();
    }
    for (const auto& [g, list] : groups) {
      if (g < full) continue;
      open("{");
      std::vector<std::pair<uint32_t, std::string>> words;
      for (const auto& [word, slot] : list) words.push_back({word, uintLiteral(slot)});
      group(uintLiteral(g), words);
      close();
    }
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
          recompute(b, needed, b.end, prefix, key, Markets::sharedOnly());
          const bool loop = s_.marketLoop && b.depth == 1;  // the markets as one rolled loop (top-level leaves)
          for (int m = 0; m < (loop ? 1 : markets_); ++m) {
            const Markets market = loop ? Markets::loop() : Markets::one(m);
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
          for (Markets m : copiesIn(j, Markets::all())) line(scalarDecl() + value(bookmark, j, m) + ";");
        open("{  // recompute [" + std::to_string(b.from) + ", " + std::to_string(b.advanceEnd) +
             "), keeping the bookmarks");
        std::vector<uint8_t> needed(tape_.size(), 0);
        for (int32_t j : b.bookmarks) needed[j] = 1;
        markArguments(needed, b.from, b.advanceEnd);
        recompute(b, needed, b.advanceEnd, prefix, key);
        for (int32_t j : b.bookmarks)
          for (Markets m : copiesIn(j, Markets::all())) line(value(bookmark, j, m) + " = " + value(prefix, j, m) + ";");
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
  // persistent values (those with a scratch slot: from the buffer) or an enclosing block's bookmarks.
  // `which`: every copy, only the values no market owns (one copy: draws, constants), or one
  // market's copies of the values with a copy per market.
  void recompute(const ScheduleBlock& b, const std::vector<uint8_t>& needed, int32_t to, const std::string& prefix,
                 const std::string& key, Markets which = Markets::all()) {
    auto wanted = [&](int32_t j) {
      return needed[j] && (which.kind == Markets::Kind::All || (which.kind == Markets::Kind::SharedOnly) == !perMarket(j));
    };
    bool draws = false;
    for (int32_t i = b.from; i < to; ++i) draws = draws || (wanted(i) && tape_.op[i] == Op::Randn && s_.nodes[i].drawSlot < 0);
    if (draws)
      line(uintType_ + " tl_rk0 = " + param("seedLo") + " ^ " + key + "; " + uintType_ + " tl_rk1 = " +
           param("seedHi") + " ^ " + key + ";");
    for (size_t k = 0; k < b.imports.size(); ++k) {
      const int32_t j = b.imports[k];
      if (!wanted(j)) continue;
      const int holder = b.importDepth[k];
      for (Markets m : copiesIn(j, which)) {
        const std::string declared = scalarDecl() + value(prefix, j, m) + " = ";
        if (holder == 0 && s_.nodes[j].slot >= 0)
          line(declared + "scratch[" + scratchLoad(j, m) + "];");
        else
          line(declared + "tl_opq(" + value(holder == 0 ? "v" : "k" + std::to_string(holder) + "_", j, m) + ", " +
               key + ");");
      }
    }
    newDrawScope();
    for (int32_t i = b.from; i < to; ++i) {
      if (!wanted(i)) continue;
      if (const int slot = s_.nodes[i].drawSlot; slot >= 0) {  // the forward sweep's draw, read back (an opaque address: not forwarded)
        line(scalarDecl() + value(prefix, i, Markets::one(0)) + " = scratch[" + slotLoad(slot) + "];");
        continue;
      }
      drawWords(i, prefix, "tl_rk");
      for (Markets m : copiesIn(i, which)) line(scalarDecl() + value(prefix, i, m) + " = " + forwardExpr(i, m, prefix) + ";");
    }
  }

  // The shared adjoint arrays top-level segment b sets before its first addition (adjoint_arrays.h).
  std::vector<int32_t> adjointsFirstWrittenIn(const ScheduleBlock& b) const {
    if (s_.adjointArraysSetIn.empty()) return {};
    const auto& bounds = options_.plan.bounds;
    return s_.adjointArraysSetIn[std::lower_bound(bounds.begin(), bounds.end(), b.begin) - bounds.begin()];
  }

  void declareAdjoints(const ScheduleBlock& b, Markets only = Markets::all()) {
    for (int32_t i : b.adjoints)
      if (hasAdjoint(i))
        for (Markets m : adjointCopiesIn(only)) line(scalarDecl() + adjoint(i, m) + " = " + literal(0.0) + ";");
  }

  // The values a leaf's adjoint rules read, and what recomputing them reads
  // (within [from, end) or imported): what the leaf recomputes.
  std::vector<uint8_t> neededIn(const ScheduleBlock& b) const {
    std::vector<uint8_t> needed(tape_.size(), 0);
    for (int32_t i = b.begin; i < b.end; ++i) {
      if (!hasAdjoint(i) || arity(tape_.op[i]) == 0) continue;
      const OpInfo& op = info(tape_.op[i]);
      auto mark = [&](std::string_view rule) {
        if (mentions(rule, "a")) needed[tape_.a[i]] = 1;
        if (mentions(rule, "b")) needed[tape_.b[i]] = 1;
        if (mentions(rule, "c")) needed[tape_.c[i]] = 1;
        if (mentions(rule, "r")) needed[i] = 1;
      };
      for (int k = 0; k < op.arity; ++k)
        if (contributes(op.adjoint(k)) && hasAdjoint(tape_.arg(i, k))) mark(op.adjoint(k));
    }
    markArguments(needed, b.from, b.end);
    return needed;
  }

  // Marks the arguments of every needed node of [from, to), descending.
  void markArguments(std::vector<uint8_t>& needed, int32_t from, int32_t to) const {
    for (int32_t i = to - 1; i >= from; --i) {
      if (!needed[i]) continue;
      forEachArg(tape_, i, [&](int32_t j) { needed[j] = 1; });
    }
  }

  // Adds this path's value and adjoints (and squares) to the lane's Kahan sums.
  void addToKahanSums() {
    for (int m = 0; m < markets_; ++m) {
      for (int k = 0; k < sumsPerMarket_; ++k) {
        std::string x;
        if (k > 0 && tangent()) {  // the output's tangent; a slot it lacks stays a sum of nothing (0)
          const int32_t slot = s_.tangents.slotOfInput[k - 1];
          const auto& outSlots = s_.tangents.of[tape_.output];
          if (slot < 0 || !std::binary_search(outSlots.begin(), outSlots.end(), slot)) continue;
          x = tangentName(tape_.output, slot, m);
        } else if (k == 0)
          x = value("v", tape_.output, Markets::one(m));
        else
          x = hasAdjoint(tape_.inputNodes[k - 1]) ? adjoint(tape_.inputNodes[k - 1], Markets::one(m)) : literal(0.0);
        for (int squared = 0; squared < 2; ++squared) {
          const int index = m * 2 * sumsPerMarket_ + squared * sumsPerMarket_ + k;
          const std::string q = std::to_string(index);
          const std::string term = squared ? x + " * " + x : x;
          if (s_.kahanInLocal) {
            const std::string sum = kahanCell(index), comp = kahanCell(s_.kahanSums + index);
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

  // Fixed-order tree over the workgroup's lanes, s_.reductionSums sums at a time (local: the sums
  // are in place already, every tree at once).
  void reduceWorkgroup() {
    const int wg = workgroupSize_;
    const int sums = s_.kahanSums, chunk = s_.reductionSums;
    line("// workgroup reduction: a fixed binary tree in local memory, then one partial per sum");
    for (int lo = 0; lo < sums; lo += chunk) {
      const int hi = std::min(sums, lo + chunk);
      for (int i = lo; i < hi && !s_.kahanInLocal; ++i)
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
  const StoragePlan& s_;  // where every value and adjoint lives (storage.h)
  std::string scalarType_, uintType_;  // the ABI's T and U
  int sumsPerMarket_ = 1;     // the ABI's width: 1 + numInputs with greeks, else 1
  bool checkpointed_ = false;
  bool sequential_ = false;  // MarketOrder::Sequential in effect: leaf blocks reverse one market at a time
  std::string source_;
  int indent_ = 0;
  int blockKeys_ = 0;  // opaque keys of nested blocks made so far
  std::set<uint32_t> groupsDrawn_;  // draw groups whose words the current block has declared
  std::set<uint32_t> pairsDrawn_;   // Box-Muller pairs (draw / 2) the current block has computed
};

}  // namespace

EmittedKernel emitKernel(const Tape& tape, const KernelOptions& options, const Dialect& dialect) {
  const StoragePlan storage = planStorage(tape, options, dialect, options.config.workgroup);
  return Emitter(tape, options, dialect, options.config.workgroup, storage).run();
}

}  // namespace tapelab
