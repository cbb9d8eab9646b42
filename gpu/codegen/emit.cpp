#include "gpu/codegen/emit.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "planner/plan.h"
#include "tape/philox.h"
#include "tape/spell.h"

namespace tapelab {

std::string spellLiteral(double value, Precision precision, const Dialect& d) {
  char buf[64];
  const int p = precision == Precision::F32 ? 0 : 1;
  if (p == 0) {
    const float f = static_cast<float>(value);
    // A finite double beyond float's range is an infinity in fp32: no language
    // has a literal for it, so spell it by its bits.
    if (std::isinf(f)) {
      const std::string inf = d.bitsToFloat[0] + "(0x7f800000u)";
      return f < 0 ? "(-" + inf + ")" : inf;
    }
    // 9 significant digits name a float uniquely; try fewer for readability.
    for (int digits = 1; digits <= 9; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(f));
      if (std::strtof(buf, nullptr) == f) break;
    }
  } else {
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, value);
      if (std::strtod(buf, nullptr) == value) break;
    }
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += d.literalSuffix[p];
  return s[0] == '-' ? "(" + s + ")" : s;
}

// Fences: the arguments and results of some ops pass through opq in every kernel
// kind. Shader compilers hold builtin calls, comparisons and (in Vulkan, where
// fp32 division may be 2.5 ulp) divisions to no exactness rule: SPIR-V's
// NoContraction covers arithmetic only. Where the compiler sees a producer it
// may rewrite: Mesa folds exp(log(x)) to x; NVIDIA's Vulkan compiler gave a
// plain kernel other adjoint bits than its checkpointed kernels on a random
// tape. A checkpointed kernel hides producers behind bookmarks and the plain
// kernel does not, so without fences the two differ. With them no kernel can
// see into an imprecise op or let it see out (tests/data/regressions).
// Kinks fence the operands of their comparison only (spellFenced).
bool fencedArgs(Op op) {
  const OpGroup g = info(op).group;
  return g == OpGroup::Transcendental || g == OpGroup::Kink || op == Op::Div;
}
bool fencedResult(Op op) { return info(op).group == OpGroup::Transcendental || op == Op::Div; }

std::string spellFenced(std::string_view expr, Op op,
                        const std::function<std::string(std::string_view, bool)>& rename) {
  if (!fencedArgs(op)) return spell(expr, [&](std::string_view id) { return rename(id, false); });
  // A kink fences the operands of its comparison only. Were the selected values
  // the fenced ones too, `sel(x >= y, x, y)` would be a max again, and NVIDIA's
  // Vulkan compiler turned it into fmax (which drops a NaN) in one kernel and
  // not in another (tests/data/regressions/vulkan-max-nan.tape).
  if (info(op).group == OpGroup::Kink && expr.substr(0, 4) == "sel(") {
    size_t k = 4;
    for (int depth = 0; k < expr.size(); ++k) {
      if (expr[k] == '(') ++depth;
      if (expr[k] == ')') --depth;
      if (expr[k] == ',' && depth == 0) break;
    }
    return spell(expr.substr(0, k), [&](std::string_view id) { return rename(id, true); }) +
           spell(expr.substr(k), [&](std::string_view id) { return rename(id, false); });
  }
  return spell(expr, [&](std::string_view id) { return rename(id, true); });
}

namespace {

std::string substitute(std::string text, const std::string& key, const std::string& value) {
  for (size_t pos = 0; (pos = text.find(key, pos)) != std::string::npos; pos += value.size())
    text.replace(pos, key.size(), value);
  return text;
}

class Emitter {
 public:
  Emitter(const Tape& t, const KernelOptions& o, const Dialect& d, const EmitOptions& e)
      : t_(t), o_(o), d_(d), e_(e), p_(o.precision == Precision::F32 ? 0 : 1), m_(o.markets) {
    T_ = d.scalar[p_];
    U_ = d.uintType;
    var_.assign(t.size(), 0);
    for (int32_t i = 0; i < t.size(); ++i) {
      const int ar = arity(t.op[i]);
      var_[i] = t.op[i] == Op::Input || (ar >= 1 && var_[t.a[i]]) || (ar >= 2 && var_[t.b[i]]);
    }
    width_ = o.greeks ? 1 + t.numInputs() : 1;
    checkpointed_ = o.kind != KernelKind::Plain;
    if (o.kind == KernelKind::Scratch) {
      slotBase_.assign(t.size(), -1);
      for (const auto& stored : o.plan.storedAt)
        for (int32_t j : stored) {
          slotBase_[j] = slots_;
          slots_ += copies(j);
        }
    }
  }

  EmittedKernel run() {
    header();
    prelude();
    std::string begin = d_.kernelBegin;
    const int q = quantities();
    batch_ = std::min(q, 16);
    begin = substitute(begin, "$RED", std::to_string(batch_ * e_.workgroupSize));
    begin = substitute(begin, "$WG", std::to_string(e_.workgroupSize));
    begin = substitute(begin, "$ENTRY", d_.entry);
    begin = substitute(begin, "$T", T_);
    begin = substitute(begin, "$U", U_);
    out_ += begin;
    body();
    out_ += d_.kernelEnd;

    EmittedKernel k;
    k.source = std::move(out_);
    k.entry = d_.entry;
    k.dialect = d_.name;
    k.precision = o_.precision;
    k.kind = o_.kind;
    k.layout = o_.layout;
    k.workgroupSize = e_.workgroupSize;
    k.pathsPerLane = e_.pathsPerLane;
    k.markets = m_;
    k.numInputs = t_.numInputs();
    k.width = width_;
    k.scratchSlots = slots_;
    k.segments = checkpointed_ ? o_.plan.segments() : 1;
    return k;
  }

 private:
  // ---- spelling helpers
  std::string lit(double v) const { return spellLiteral(v, o_.precision, d_); }
  std::string par(const char* name) const { return d_.param + name; }
  std::string cast(const std::string& type, const std::string& x) const {
    return d_.cCasts ? "(" + type + ")(" + x + ")" : type + "(" + x + ")";
  }
  std::string decl() const { return d_.precise + T_ + " "; }
  // The opaque identity's key: the run-time `zero`, or a literal 0 when the
  // experiment switches the trick off (the compiler may then merge).
  std::string zeroKey() const { return e_.opaque ? par("zero") : "0u"; }
  int copies(int32_t j) const { return var_[j] ? m_ : 1; }
  std::string val(const std::string& pre, int32_t j, int m) const {
    std::string s = pre + std::to_string(j);
    if (var_[j] && m_ > 1) s += "_" + std::to_string(m);
    return s;
  }
  std::string adj(int32_t j, int m) const {
    std::string s = "d" + std::to_string(j);
    if (m_ > 1) s += "_" + std::to_string(m);
    return s;
  }
  std::string u(int64_t v) const { return std::to_string(v) + "u"; }
  int quantities() const { return m_ * 2 * width_; }

  void line(const std::string& s) {
    out_.append(static_cast<size_t>(indent_) * 2, ' ');
    out_ += s;
    out_ += '\n';
  }
  void open(const std::string& s = "{") {
    line(s);
    ++indent_;
  }
  void close(const std::string& s = "}") {
    --indent_;
    line(s);
  }

  std::string fence(const std::string& x, bool on) const {
    return on ? "tl_opq(" + x + ", " + zeroKey() + ")" : x;
  }
  // Renames the op table's identifiers for node i, market m. Values use the
  // prefix `pre` ("v" in the forward sweep, "w" in a recomputed segment).
  std::string spellRule(std::string_view expr, int32_t i, int m, const std::string& pre) const {
    return spellFenced(expr, t_.op[i], [&](std::string_view id, bool fenced) -> std::string {
      if (id == "a") return fence(val(pre, t_.a[i], m), fenced);
      if (id == "b") return fence(val(pre, t_.b[i], m), fenced);
      if (id == "r") return val(pre, i, m);
      if (id == "d") return adj(i, m);
      if (id == "zero") return lit(0.0);
      if (id == "exp") return d_.math[p_][0];
      if (id == "log") return d_.math[p_][1];
      if (id == "sqrt") return d_.math[p_][2];
      if (id == "sel") return "tl_sel";
      throw std::logic_error("ops.def uses an identifier the emitter cannot spell: " + std::string(id));
    });
  }

  std::string forwardExpr(int32_t i, int m, const std::string& pre, const std::string& key) const {
    switch (t_.op[i]) {
      case Op::Const: return "tl_opq(" + lit(t_.imm[i]) + ", " + zeroKey() + ")";
      case Op::Input:
        // A recomputed segment reads its inputs through opq too, or the
        // compiler could merge a segment built from inputs and constants alone.
        if (pre != "v") return "tl_opq(" + val("v", i, m) + ", " + zeroKey() + ")";
        return "tl_in" + std::to_string(m) + "_" + std::to_string(static_cast<int>(t_.imm[i]));
      case Op::Randn:
        return "tl_randn(" + u(static_cast<int64_t>(t_.imm[i])) + ", tl_pathLo, tl_pathHi, " + key + "0, " + key + "1)";
      default: return fence(spellRule(info(t_.op[i]).forward, i, m, pre), fencedResult(t_.op[i]));
    }
  }

  // Reverse rule of node i: contributions to a, then b, skipping arguments
  // that depend on no input (their adjoints reach no Greek).
  void reverseRule(int32_t i, const std::string& pre) {
    if (!var_[i] || arity(t_.op[i]) == 0) return;
    const OpInfo& op = info(t_.op[i]);
    for (int m = 0; m < m_; ++m) {
      if (var_[t_.a[i]]) line(adj(t_.a[i], m) + " += " + spellRule(op.adjointA, i, m, pre) + ";");
      if (op.arity == 2 && var_[t_.b[i]]) line(adj(t_.b[i], m) + " += " + spellRule(op.adjointB, i, m, pre) + ";");
    }
  }

  // Scratch addresses. A load's address is opaque (keyed by zero) so the
  // compiler cannot forward the stored value through a register. SoA
  // addresses use tl_inv, `invocations` made path-loop-variant: with the
  // plain parameter every slot's address is loop-invariant, the compiler
  // hoists them all out of the path loop (one 64-bit address per slot,
  // 191 at the 252-step Asian's seglen 24) and spills them (nvcc sm_90:
  // 96 registers + 2 KB stack; with tl_inv: 72 registers, no stack, as AoS).
  std::string scratchStore(int32_t j, int m) const {
    const int slot = slotBase_[j] + (var_[j] ? m : 0);
    if (o_.layout == ScratchLayout::AoS) return "tl_tid * " + u(slots_) + " + " + u(slot);
    return u(slot) + " * tl_inv + tl_tid";
  }
  std::string scratchLoad(int32_t j, int m) const {
    const int slot = slotBase_[j] + (var_[j] ? m : 0);
    if (o_.layout == ScratchLayout::AoS) return "(tl_tid * " + u(slots_) + " + " + u(slot) + ") ^ " + zeroKey();
    return u(slot) + " * (tl_inv ^ " + zeroKey() + ") + tl_tid";
  }

  // ---- the text
  void header() {
    out_ += d_.prologue;
    if (p_ == 1) out_ += d_.fp64Prologue;
    if (!e_.unrollDraws) out_ += d_.dontUnrollPrologue;
    const std::string name = t_.name.empty() ? "(unnamed)" : t_.name;
    out_ += "// tapelab kernel: tape " + name + ", " + std::to_string(t_.size()) + " nodes, " + toString(o_.kind);
    if (checkpointed_) out_ += " (" + std::to_string(o_.plan.segments()) + " segments, " + o_.plan.strategy + ")";
    if (o_.kind == KernelKind::Scratch) out_ += std::string(", ") + toString(o_.layout) + ", " + std::to_string(slots_) + " slots";
    out_ += std::string(", ") + toString(o_.precision) + ", " + std::to_string(m_) + " market(s), " +
            (o_.greeks ? "value + Greeks" : "value only") + ", dialect " + d_.name + "\n";
    out_ += d_.helpers;
  }

  void prelude() {
    const std::string Q = d_.funcQualifier, T = T_, U = U_, P = d_.precise;
    auto L = [&](double v) { return lit(v); };
    // An add, not an XOR: opq(opq(x)) must stay opaque. With XOR the two cancel
    // where a recomputed segment re-reads a bookmark that was itself opaque (a
    // constant) or fences it again, and the compiler sees through the cut.
    out_ += "// opq: the identity on every bit pattern, opaque to the compiler (z is always 0).\n";
    out_ += Q + T + " tl_opq(" + T + " x, " + U + " z) { return " + d_.bitsToFloat[p_] + "(" +
            d_.floatToBits[p_] + "(x) + " + cast(d_.bitsType[p_], "z") + "); }\n";
    out_ += Q + T + " tl_sel(bool c, " + T + " x, " + T + " y) { return c ? x : y; }\n";
    // Philox4x32-10 word 0 (tape/philox.h): counter {c0, c1, c2, c3}, key {k0, k1}.
    out_ += "// Philox4x32-10, word 0 (tape/philox.h).\n";
    out_ += Q + U + " tl_philox(" + U + " c0, " + U + " c1, " + U + " c2, " + U + " c3, " + U + " k0, " + U + " k1) {\n";
    // A rolled loop keeps kernels with hundreds of draws small where compile
    // time matters more than speed (CPU Vulkan devices); same operations.
    out_ += "  " + (e_.unrollDraws ? std::string() : d_.dontUnroll) + "for (int r = 0; r < 10; ++r) {\n";
    out_ += "    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }\n";
    out_ += "    " + U + " hi0 = " + d_.mulHi + "(0xD2511F53u, c0); " + U + " lo0 = 0xD2511F53u * c0;\n";
    out_ += "    " + U + " hi1 = " + d_.mulHi + "(0xCD9E8D57u, c2); " + U + " lo1 = 0xCD9E8D57u * c2;\n";
    out_ += "    " + U + " n0 = hi1 ^ c1 ^ k0; " + U + " n2 = hi0 ^ c3 ^ k1;\n";
    out_ += "    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;\n";
    out_ += "  }\n  return c0;\n}\n";
    // u and Acklam's quantile, in T, in the reference's order (tape/philox.h).
    const double low = o_.precision == Precision::F32 ? double(float(kNormalLow)) : kNormalLow;
    const double high = o_.precision == Precision::F32 ? double(1.0f - float(kNormalLow)) : 1.0 - kNormalLow;
    auto horner = [&](const double* c, int n, const std::string& x, bool endsWithOne) {
      std::string s = L(c[0]);
      for (int i = 1; i < n; ++i) s = "(" + s + " * " + x + " + " + L(c[i]) + ")";
      if (endsWithOne) s = "(" + s + " * " + x + " + " + L(1.0) + ")";
      return s;
    };
    out_ += "// Acklam's normal quantile of u = ((w >> 9) + 0.5) * 2^-23 (tape/philox.h).\n";
    out_ += Q + T + " tl_normal(" + U + " w) {\n";
    out_ += "  " + P + T + " u = (" + cast(T, "w >> 9u") + " + " + L(0.5) + ") * " + L(1.1920928955078125e-07) + ";\n";
    out_ += "  if (u < " + L(low) + " || u > " + L(high) + ") {\n";
    out_ += "    " + P + T + " tail = u < " + L(low) + " ? u : " + L(1.0) + " - u;\n";
    out_ += "    " + P + T + " q = " + d_.math[p_][2] + "(" + L(-2.0) + " * " + d_.math[p_][1] + "(tail));\n";
    out_ += "    " + P + T + " num = " + horner(kNormalC, 6, "q", false) + ";\n";
    out_ += "    " + P + T + " den = " + horner(kNormalD, 4, "q", true) + ";\n";
    out_ += "    " + P + T + " x = num / den;\n";
    out_ += "    return u < " + L(low) + " ? x : -x;\n";
    out_ += "  }\n";
    out_ += "  " + P + T + " q = u - " + L(0.5) + ";\n";
    out_ += "  " + P + T + " r = q * q;\n";
    out_ += "  " + P + T + " num = " + horner(kNormalA, 6, "r", false) + " * q;\n";
    out_ += "  " + P + T + " den = " + horner(kNormalB, 5, "r", true) + ";\n";
    out_ += "  " + P + T + " z = num / den;\n";
    out_ += "  return z;\n";
    out_ += "}\n";
    out_ += "// Draw k of path (pathHi:pathLo) under key (k0, k1): counter {k, 0, pathLo, pathHi}.\n";
    out_ += Q + T + " tl_randn(" + U + " k, " + U + " pathLo, " + U + " pathHi, " + U + " k0, " + U + " k1) {\n";
    out_ += "  return tl_normal(tl_philox(k, 0u, pathLo, pathHi, k0, k1));\n}\n";
  }

  void body() {
    ++indent_;
    const int wg = e_.workgroupSize;
    const uint32_t block = uint32_t(wg) * uint32_t(e_.pathsPerLane);
    line("const " + U_ + " tl_lid = " + d_.localId + ";");
    line("const " + U_ + " tl_g = " + d_.groupId + ";");
    if (o_.kind == KernelKind::Scratch) line("const " + U_ + " tl_tid = tl_g * " + u(wg) + " + tl_lid;");
    for (int m = 0; m < m_; ++m)
      for (int k = 0; k < t_.numInputs(); ++k)
        line(T_ + " tl_in" + std::to_string(m) + "_" + std::to_string(k) + " = inputs[" +
             u(int64_t(m) * t_.numInputs() + k) + "];");
    const int q = quantities();
    line("// Kahan sums per market: value, adjoints, then their squares.");
    for (int i = 0; i < q; ++i)
      line(decl() + "tl_s" + std::to_string(i) + " = " + lit(0.0) + "; " + decl() + "tl_c" + std::to_string(i) + " = " +
           lit(0.0) + ";");
    open("for (" + U_ + " tl_j = 0u; tl_j < " + u(e_.pathsPerLane) + "; ++tl_j) {");
    line(U_ + " tl_p = tl_g * " + u(block) + " + tl_j * " + u(wg) + " + tl_lid;");
    open("if (tl_p < " + par("count") + ") {");
    if (o_.kind == KernelKind::Scratch && o_.layout == ScratchLayout::SoA && o_.greeks && o_.plan.segments() > 1)
      line(U_ + " tl_inv = " + par("invocations") + " + (tl_j & " + zeroKey() + ");  // loop-variant: see scratchStore");
    line(U_ + " tl_pathLo = " + par("pathLo") + " + tl_p;");
    line(U_ + " tl_pathHi = " + par("pathHi") + " + (tl_pathLo < tl_p ? 1u : 0u);");
    line(U_ + " tl_fk0 = " + par("seedLo") + "; " + U_ + " tl_fk1 = " + par("seedHi") + ";");
    if (checkpointed_) checkpointedPath(); else plainPath();
    kahan();
    close();
    close();
    reduce();
    --indent_;
  }

  void plainPath() {
    line("// forward sweep");
    for (int32_t i = 0; i < t_.size(); ++i)
      for (int m = 0; m < copies(i); ++m) line(decl() + val("v", i, m) + " = " + forwardExpr(i, m, "v", "tl_fk") + ";");
    if (!o_.greeks) return;
    line("// reverse sweep");
    for (int32_t i = 0; i < t_.size(); ++i) {
      if (!var_[i]) continue;
      for (int m = 0; m < m_; ++m)
        line(decl() + adj(i, m) + " = " + lit(i == t_.output ? 1.0 : 0.0) + ";");
    }
    for (int32_t i = t_.size() - 1; i >= 0; --i) reverseRule(i, "v");
  }

  void checkpointedPath() {
    const Plan& p = o_.plan;
    const bool scratch = o_.kind == KernelKind::Scratch;
    line("// persistent values: bookmarks, inputs, output");
    for (int32_t j : p.persistent)
      for (int m = 0; m < copies(j); ++m) line(decl() + val("v", j, m) + ";");
    line("// forward sweep, one block per segment");
    for (int s = 0; s < p.segments(); ++s) {
      open("{  // segment " + std::to_string(s) + ": nodes [" + std::to_string(p.begin(s)) + ", " +
           std::to_string(p.end(s)) + ")");
      for (int32_t i = p.begin(s); i < p.end(s); ++i)
        for (int m = 0; m < copies(i); ++m)
          line((p.isPersistent[i] ? "" : decl()) + val("v", i, m) + " = " + forwardExpr(i, m, "v", "tl_fk") + ";");
      if (scratch && o_.greeks && s + 1 < p.segments())
        for (int32_t j : p.storedAt[s])
          for (int m = 0; m < copies(j); ++m) line("scratch[" + scratchStore(j, m) + "] = " + val("v", j, m) + ";");
      close();
    }
    if (!o_.greeks) return;
    line("// reverse sweep: segments last to first, each recomputed from its bookmarks");
    for (int32_t j : p.persistent) {
      if (!var_[j]) continue;
      for (int m = 0; m < m_; ++m) line(decl() + adj(j, m) + " = " + lit(j == t_.output ? 1.0 : 0.0) + ";");
    }
    for (int s = p.segments() - 1; s >= 0; --s) {
      open("{  // segment " + std::to_string(s));
      const std::vector<uint8_t> need = neededInReverse(s);
      bool draws = false;
      for (int32_t i = p.begin(s); i < p.end(s); ++i) draws = draws || (need[i] && t_.op[i] == Op::Randn);
      if (draws)
        line(U_ + " tl_rk0 = " + par("seedLo") + " ^ " + zeroKey() + "; " + U_ + " tl_rk1 = " + par("seedHi") + " ^ " +
             zeroKey() + ";");
      for (int32_t j : segmentImports(t_, p, s)) {
        if (!need[j]) continue;
        for (int m = 0; m < copies(j); ++m) {
          const std::string w = decl() + val("w", j, m) + " = ";
          if (scratch && t_.op[j] != Op::Input)
            line(w + "scratch[" + scratchLoad(j, m) + "];");
          else
            line(w + "tl_opq(" + val("v", j, m) + ", " + zeroKey() + ");");
        }
      }
      for (int32_t i = p.begin(s); i < p.end(s); ++i)
        if (need[i])
          for (int m = 0; m < copies(i); ++m) line(decl() + val("w", i, m) + " = " + forwardExpr(i, m, "w", "tl_rk") + ";");
      for (int32_t i = p.begin(s); i < p.end(s); ++i)
        if (var_[i] && !p.isPersistent[i])
          for (int m = 0; m < m_; ++m) line(decl() + adj(i, m) + " = " + lit(0.0) + ";");
      for (int32_t i = p.end(s) - 1; i >= p.begin(s); --i) reverseRule(i, "w");
      close();
    }
  }

  // The values segment s's adjoint rules read, and what recomputing them
  // reads (within the segment or imported): what its reverse block recomputes.
  std::vector<uint8_t> neededInReverse(int s) const {
    const Plan& p = o_.plan;
    std::vector<uint8_t> need(t_.size(), 0);
    for (int32_t i = p.begin(s); i < p.end(s); ++i) {
      if (!var_[i] || arity(t_.op[i]) == 0) continue;
      const OpInfo& op = info(t_.op[i]);
      auto mark = [&](std::string_view rule) {
        if (mentions(rule, "a")) need[t_.a[i]] = 1;
        if (mentions(rule, "b")) need[t_.b[i]] = 1;
        if (mentions(rule, "r")) need[i] = 1;
      };
      if (var_[t_.a[i]]) mark(op.adjointA);
      if (op.arity == 2 && var_[t_.b[i]]) mark(op.adjointB);
    }
    for (int32_t i = p.end(s) - 1; i >= p.begin(s); --i) {
      if (!need[i]) continue;
      const int ar = arity(t_.op[i]);
      if (ar >= 1) need[t_.a[i]] = 1;
      if (ar >= 2) need[t_.b[i]] = 1;
    }
    return need;
  }

  // Adds this path's value and adjoints (and squares) to the lane's Kahan sums.
  void kahan() {
    const std::string pre = "v";
    for (int m = 0; m < m_; ++m) {
      for (int k = 0; k < width_; ++k) {
        std::string x;
        if (k == 0)
          x = val(pre, t_.output, m);
        else
          x = var_[t_.inputNodes[k - 1]] ? adj(t_.inputNodes[k - 1], m) : lit(0.0);
        for (int sq = 0; sq < 2; ++sq) {
          const std::string q = std::to_string(m * 2 * width_ + sq * width_ + k);
          const std::string term = sq ? x + " * " + x : x;
          line("{ " + decl() + "y = " + term + " - tl_c" + q + "; " + decl() + "t = tl_s" + q + " + y; tl_c" + q +
               " = (t - tl_s" + q + ") - y; tl_s" + q + " = t; }");
        }
      }
    }
  }

  // Fixed-order tree over the workgroup's lanes, batch_ sums at a time.
  void reduce() {
    const int wg = e_.workgroupSize;
    const int q = quantities();
    line("// workgroup reduction: a fixed binary tree in local memory, then one partial per sum");
    for (int lo = 0; lo < q; lo += batch_) {
      const int hi = std::min(q, lo + batch_);
      for (int i = lo; i < hi; ++i) line("tl_red[" + u(int64_t(i - lo) * wg) + " + tl_lid] = tl_s" + std::to_string(i) + ";");
      line(d_.barrier);
      open("for (" + U_ + " tl_st = " + u(wg / 2) + "; tl_st > 0u; tl_st >>= 1u) {");
      open("if (tl_lid < tl_st) {");
      for (int i = lo; i < hi; ++i) {
        const std::string at = u(int64_t(i - lo) * wg) + " + tl_lid";
        line("tl_red[" + at + "] = tl_red[" + at + "] + tl_red[" + at + " + tl_st];");
      }
      close();
      line(d_.barrier);
      close();
      open("if (tl_lid == 0u) {");
      for (int i = lo; i < hi; ++i)
        line("partials[tl_g * " + u(q) + " + " + u(i) + "] = tl_red[" + u(int64_t(i - lo) * wg) + "];");
      close();
      if (hi < q) line(d_.barrier);
    }
  }

  const Tape& t_;
  const KernelOptions& o_;
  const Dialect& d_;
  EmitOptions e_;
  int p_, m_;
  std::string T_, U_;
  std::vector<uint8_t> var_;
  std::vector<int32_t> slotBase_;
  int slots_ = 0, width_ = 1, batch_ = 1;
  bool checkpointed_ = false;
  std::string out_;
  int indent_ = 0;
};

}  // namespace

EmittedKernel emitKernel(const Tape& tape, const KernelOptions& options, const Dialect& dialect,
                         const EmitOptions& emit) {
  if (const std::string problem = validate(tape); !problem.empty()) throw std::invalid_argument(problem);
  if (options.markets < 1 || options.markets > 8)
    throw std::invalid_argument("markets must be 1..8 (got " + std::to_string(options.markets) + ")");
  if (options.precision == Precision::F64 && !dialect.fp64)
    throw std::invalid_argument("the " + dialect.name + " dialect has no fp64 kernels");
  if (emit.workgroupSize < 1 || (emit.workgroupSize & (emit.workgroupSize - 1)) != 0 || emit.workgroupSize > 1024)
    throw std::invalid_argument("workgroup size must be a power of two up to 1024");
  if (emit.pathsPerLane < 1) throw std::invalid_argument("paths per lane must be at least 1");
  if (options.kind != KernelKind::Plain) {
    const Plan& p = options.plan;
    if (p.bounds.size() < 2 || p.bounds.front() != 0 || p.bounds.back() != tape.size() ||
        p.isPersistent.size() != static_cast<size_t>(tape.size()))
      throw std::invalid_argument(std::string(toString(options.kind)) + " kernel needs a plan made for this tape");
  }
  return Emitter(tape, options, dialect, emit).run();
}

}  // namespace tapelab
