// The build pass's frame: the kernel's header and attributes, the lane loop and path guard, the Kahan
// sums and the workgroup's reduction; the helpers the forward and reverse builders share.
#include <algorithm>
#include <stdexcept>

#include "gpu/codegen/build.h"
#include "gpu/codegen/draws.h"
#include "planner/plan.h"

namespace tapelab {

ir::KernelIR buildKernel(const Tape& tape, const KernelOptions& options, const Dialect& dialect,
                         const KernelAnalyses& analyses) {
  return build::Builder(tape, options, dialect, analyses).build();
}

namespace build {

using namespace ir;

Builder::Builder(const Tape& tape, const KernelOptions& options, const Dialect& dialect, const KernelAnalyses& a)
    : Names(*a.storage, options, options.config.workgroup), tape_(tape), options_(options), dialect_(dialect),
      config_(options.config), s_(*a.storage), a_(a), workgroupSize_(options.config.workgroup),
      markets_(options.markets) {
  sumsPerMarket_ = options.greeks ? 1 + tape.numInputs() : 1;
  checkpointed_ = options.kind != KernelKind::Plain && options.kind != KernelKind::Tangent;
  sequential_ = sequentialMarkets(options);
}

KernelIR Builder::build() {
  KernelIR k;
  k.dialect = dialect_.name;
  k.precision = options_.precision;
  k.approxMath = config_.math == MathContract::Approx;
  k.workgroupSize = workgroupSize_;
  k.reductionElements = s_.localRows * workgroupSize_;
  k.minBlocks = config_.minBlocks;
  // A rolled Philox, the market loop and the prefill loop ask the compiler to keep loops rolled.
  const bool rolled = (a_.rolling && a_.rolling->rolled) || (a_.segments && a_.segments->rolled);
  k.dontUnrollPrologue = !config_.philoxUnrolled || s_.marketLoop || s_.prefill || rolled;
  k.helpers.philoxRolled = !config_.philoxUnrolled;
  k.helpers.outlineDraws = config_.outlineDraws && !rolled;  // a rolled loop has one copy of its draws already
  k.header = header();
  k.body = body();
  return k;
}

std::vector<std::string> Builder::header() const {
  const std::string name = tape_.name.empty() ? "(unnamed)" : tape_.name;
  std::string first = "tapelab kernel: tape " + name + ", " + std::to_string(tape_.size()) + " nodes, " +
                      toString(options_.kind);
  if (checkpointed_)
    first += " (" + std::to_string(options_.plan.segments()) + " segments, " + options_.plan.strategy + ")";
  if (options_.kind == KernelKind::Scratch)
    first += std::string(", ") + toString(config_.layout) + ", " + std::to_string(s_.scratchSlots) + " slots";
  if (sequential_) first += ", markets sequential";
  if (a_.rolling && a_.rolling->rolled)
    first += ", time loop rolled (" + std::to_string(a_.rolling->trips()) + " trips of " + std::to_string(a_.rolling->unroll) + ")";
  if (a_.segments && a_.segments->rolled)
    first += ", segments " + std::to_string(a_.segments->first) + ".." + std::to_string(a_.segments->first + a_.segments->trips - 1) +
             " rolled";
  if (s_.drawSlots > 0) first += s_.prefill ? ", draws prefilled into scratch" : ", draws stored in scratch";
  first += std::string(", ") + toString(options_.precision) + ", " + std::to_string(markets_) + " market(s), " +
           (options_.greeks ? "value + Greeks" : "value only") + ", dialect " + dialect_.name;
  // The whole config, so that a cache keyed by the source is keyed by it too.
  std::vector<std::string> lines{first, "config: " + kernelConfigText(config_, dialect_.engine)};
  if (!s_.sharedInputs.empty()) {
    std::string shared = "inputs every market shares, read once:";
    for (int k : s_.sharedInputs) shared += " " + tape_.inputNames[k];
    lines.push_back(shared);
  }
  for (const std::string& u : a_.unused) lines.push_back("config unused: " + u);
  return lines;
}

Stmts Builder::body() {
  Stmts out;
  const int wg = workgroupSize_;
  const uint32_t block = uint32_t(wg) * uint32_t(config_.lanes);
  out.push_back(declare(Type::Uint, "tl_lid", localId(), true));
  out.push_back(declare(Type::Uint, "tl_g", groupId(), true));
  if (options_.kind == KernelKind::Scratch || s_.drawSlots > 0)
    out.push_back(declare(Type::Uint, "tl_tid", bin(bin(var("tl_g"), "*", ulit(wg)), "+", var("tl_lid")), true));
  for (int m = 0; m < markets_; ++m)
    for (int k = 0; k < tape_.numInputs(); ++k)
      if (m == 0 || std::find(s_.sharedInputs.begin(), s_.sharedInputs.end(), k) == s_.sharedInputs.end())
        out.push_back(declare(Type::Scalar, "tl_in" + std::to_string(m) + "_" + std::to_string(k),
                              index(var("inputs"), ulit(int64_t(m) * tape_.numInputs() + k))));
  out.push_back(comment("Kahan sums per market: value, adjoints, then their squares."));
  if (s_.kahanInLocal) {
    out.push_back(comment(
        "In local memory: sum i of this lane at tl_red[i * WG + lid], its compensation at [(sums + i) * WG + lid]."));
    for (int i = 0; i < 2 * s_.kahanSums; ++i) out.push_back(assign(kahanCell(i), literal(0.0)));
  } else {
    for (int i = 0; i < s_.kahanSums; ++i)
      out.push_back(line({declareT("tl_s" + std::to_string(i), literal(0.0)), declareT("tl_c" + std::to_string(i), literal(0.0))}));
  }
  Stmts lane;
  lane.push_back(declare(Type::Uint, "tl_p",
                         bin(bin(bin(var("tl_g"), "*", ulit(block)), "+", bin(var("tl_j"), "*", ulit(wg))), "+", var("tl_lid"))));
  Stmts path;
  if (config_.layout == ScratchLayout::SoA &&
      ((options_.kind == KernelKind::Scratch && options_.greeks && options_.plan.segments() > 1) || s_.drawSlots > 0))
    path.push_back(withNote(declare(Type::Uint, "tl_inv", bin(param("invocations"), "+", paren(bin(var("tl_j"), "&", zeroKey())))),
                            "loop-variant: see scratchStore"));
  path.push_back(declare(Type::Uint, "tl_pathLo", bin(param("pathLo"), "+", var("tl_p"))));
  path.push_back(declare(Type::Uint, "tl_pathHi",
                         bin(param("pathHi"), "+", paren(select(bin(var("tl_pathLo"), "<", var("tl_p")), ulit(1), ulit(0))))));
  path.push_back(line({declare(Type::Uint, "tl_fk0", param("seedLo")), declare(Type::Uint, "tl_fk1", param("seedHi"))}));
  if (checkpointed_) {
    checkpointedForward(path);
    if (options_.greeks) reverseSweep(path);
  } else if (tangent()) {
    tangentPath(path);
  } else {
    plainPath(path);
  }
  addToKahanSums(path);
  lane.push_back(ifThen(bin(var("tl_p"), "<", param("count")), std::move(path)));
  out.push_back(loop(Type::Uint, "tl_j", ulit(0), bin(var("tl_j"), "<", ulit(config_.lanes)), prefix("++", var("tl_j")), false,
                     "", std::move(lane)));
  reduceWorkgroup(out);
  return out;
}

// Adds this path's value and adjoints (and squares) to the lane's Kahan sums.
void Builder::addToKahanSums(Stmts& out) const {
  for (int m = 0; m < markets_; ++m) {
    for (int k = 0; k < sumsPerMarket_; ++k) {
      E x;
      if (k > 0 && tangent()) {  // the output's tangent; a slot it lacks stays a sum of nothing (0)
        const int32_t slot = s_.tangents.slotOfInput[k - 1];
        const auto& outSlots = s_.tangents.of[tape_.output];
        if (slot < 0 || !std::binary_search(outSlots.begin(), outSlots.end(), slot)) continue;
        x = tangentRef(tape_.output, slot, m);
      } else if (k == 0) {
        x = value("v", tape_.output, Markets::one(m));
      } else {
        x = hasAdjoint(tape_.inputNodes[k - 1]) ? adjoint(tape_.inputNodes[k - 1], Markets::one(m)) : literal(0.0);
      }
      for (int squared = 0; squared < 2; ++squared) {
        const int at = m * 2 * sumsPerMarket_ + squared * sumsPerMarket_ + k;
        const E term = squared ? bin(x, "*", x) : x;
        if (s_.kahanInLocal)
          out.push_back(kahan(kahanCell(at), kahanCell(s_.kahanSums + at), term, true));
        else
          out.push_back(kahan(var("tl_s" + std::to_string(at)), var("tl_c" + std::to_string(at)), term, false));
      }
    }
  }
}

// Fixed-order tree over the workgroup's lanes, s_.reductionSums sums at a time (local: the sums are in
// place already, every tree at once).
void Builder::reduceWorkgroup(Stmts& out) const {
  const int wg = workgroupSize_;
  const int sums = s_.kahanSums, chunk = s_.reductionSums;
  auto red = [](E at) { return index(var("tl_red"), std::move(at)); };
  out.push_back(comment("workgroup reduction: a fixed binary tree in local memory, then one partial per sum"));
  for (int lo = 0; lo < sums; lo += chunk) {
    const int hi = std::min(sums, lo + chunk);
    for (int i = lo; i < hi && !s_.kahanInLocal; ++i)
      out.push_back(assign(red(bin(ulit(int64_t(i - lo) * wg), "+", var("tl_lid"))), var("tl_s" + std::to_string(i))));
    out.push_back(barrier());
    Stmts add;
    for (int i = lo; i < hi; ++i) {
      const E at = bin(ulit(int64_t(i - lo) * wg), "+", var("tl_lid"));
      add.push_back(assign(red(at), bin(red(at), "+", red(bin(at, "+", var("tl_st"))))));
    }
    Stmts tree;
    tree.push_back(ifThen(bin(var("tl_lid"), "<", var("tl_st")), std::move(add)));
    tree.push_back(barrier());
    out.push_back(loop(Type::Uint, "tl_st", ulit(wg / 2), bin(var("tl_st"), ">", ulit(0)), bin(var("tl_st"), ">>=", ulit(1)),
                       false, "", std::move(tree)));
    Stmts write;
    for (int i = lo; i < hi; ++i)
      write.push_back(assign(index(var("partials"), bin(bin(var("tl_g"), "*", ulit(sums)), "+", ulit(i))),
                             red(ulit(int64_t(i - lo) * wg))));
    out.push_back(ifThen(bin(var("tl_lid"), "==", ulit(0)), std::move(write)));
    if (hi < sums) out.push_back(barrier());
  }
}

// ---- shared helpers

E Builder::spellRule(std::string_view text, int32_t i, Markets m, const std::string& prefix, E d) const {
  const Op op = tape_.op[i];
  const int n = arity(op);
  auto arg = [&](int k) { return k < n ? value(prefix, tape_.arg(i, k), m) : nullptr; };
  return rule(op, std::string(text), arg(0), arg(1), arg(2), value(prefix, i, m), d ? d : adjoint(i, m), zeroKey());
}

E Builder::forwardExpr(int32_t i, Markets m, const std::string& prefix) const {
  switch (tape_.op[i]) {
    case Op::Const: return opq(literal(tape_.imm[i]), zeroKey());
    case Op::Input:
      // A recomputed segment reads its inputs through opq too, or the compiler could merge a segment built
      // from inputs and constants alone.
      if (prefix != "v") return opq(value("v", i, m), zeroKey());
      return var("tl_in" + std::to_string(m.market) + "_" + std::to_string(static_cast<int>(tape_.imm[i])));
    case Op::Randn: {  // its Box-Muller pair's draw, which the draws pass declares before this statement
      const uint32_t k = static_cast<uint32_t>(static_cast<int64_t>(tape_.imm[i]) - drawShift_);
      if (stepDraws_) return var(drawStepName(prefix, k));
      return member(var(drawPairName(prefix, k)), k % 2 ? "y" : "x");
    }
    default: return fence(spellRule(info(tape_.op[i]).forward, i, m, prefix), fencedResult(tape_.op[i]));
  }
}

Stmt Builder::define(bool isDeclaration, const std::string& prefix, int32_t i, Markets m, E x) const {
  Stmt s = isDeclaration ? declareT(valueName(prefix, i, m), std::move(x)) : assign(value(prefix, i, m), std::move(x));
  return tape_.op[i] == Op::Randn && !prefilled(i) ? readsDraw(std::move(s), static_cast<int64_t>(tape_.imm[i]) - drawShift_) : s;
}

Stmt Builder::declareAdjoint(const E& name, E init) const {
  if (name->kind != Expr::Kind::Var) throw std::logic_error("build: declaring an element of an array");
  Stmt s = declareT(name->name, std::move(init));
  s.adjoint = true;
  return s;
}

void Builder::reverseRule(int32_t i, const std::string& prefix, Markets only, Stmts& out) const {
  if (!hasAdjoint(i) || arity(tape_.op[i]) == 0) return;
  const OpInfo& op = info(tape_.op[i]);
  for (Markets m : adjointCopiesIn(only))
    for (int k = 0; k < op.arity; ++k)
      if (contributes(op.adjoint(k)) && hasAdjoint(tape_.arg(i, k)))
        out.push_back(addAssign(adjoint(tape_.arg(i, k), m), spellRule(op.adjoint(k), i, m, prefix)));
}

Stmt Builder::marketLoop(Stmts body) const {
  Stmt s = loop(Type::Int, "tl_m", ilit(0), bin(var("tl_m"), "<", ilit(markets_)), prefix("++", var("tl_m")), true,
                "markets, one at a time", std::move(body));
  // config market_unroll: the compiler's unrolling, N markets a trip or whole
  s.unrollBy = config_.marketUnroll == kUnrollWhole ? markets_ : std::min(config_.marketUnroll, markets_);
  return s;
}

}  // namespace build
}  // namespace tapelab
