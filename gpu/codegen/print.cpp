#include "gpu/codegen/print.h"

#include <string>
#include <string_view>
#include <vector>

#include "tape/philox.h"

namespace tapelab {

namespace {

std::string substitute(std::string text, const std::string& key, const std::string& value) {
  for (size_t pos = 0; (pos = text.find(key, pos)) != std::string::npos; pos += value.size())
    text.replace(pos, key.size(), value);
  return text;
}

class Printer {
 public:
  Printer(const ir::KernelIR& k, const Dialect& d) : k_(k), d_(d), types_(d.spelling(k.precision)) {}

  std::string expr(const ir::E& e) const {
    using K = ir::Expr::Kind;
    switch (e->kind) {
      case K::Var: return e->name;
      case K::Param: return d_.paramPrefix + e->name;
      case K::LocalId: return d_.localId;
      case K::GroupId: return d_.groupId;
      case K::Float: return spellLiteral(e->number, k_.precision, d_);
      case K::Uint: return std::to_string(e->integer) + "u";
      case K::Int: return std::to_string(e->integer);
      case K::Binary: return expr(e->args[0]) + " " + e->name + " " + expr(e->args[1]);
      case K::Prefix: return e->name + expr(e->args[0]);
      case K::Paren: return "(" + expr(e->args[0]) + ")";
      case K::Select: return expr(e->args[0]) + " ? " + expr(e->args[1]) + " : " + expr(e->args[2]);
      case K::Index: return expr(e->args[0]) + "[" + expr(e->args[1]) + "]";
      case K::Member: return expr(e->args[0]) + "." + e->name;
      case K::Call: return e->name + "(" + list(e->args) + ")";
      case K::Function: return d_.function(k_.precision, e->name, k_.approxMath) + "(" + list(e->args) + ")";
      case K::CastUint: return d_.cCasts ? "(" + d_.uintType + ")(" + expr(e->args[0]) + ")" : d_.uintType + "(" + expr(e->args[0]) + ")";
      case K::CastScalar: return d_.cCasts ? "(" + types_.scalar + ")" + expr(e->args[0]) : types_.scalar + expr(e->args[0]);
      case K::Bits: return types_.floatToBits + "(" + expr(e->args[0]) + ")";
      case K::FromBits: return types_.bitsToFloat + "(" + expr(e->args[0]) + ")";
      case K::Rule: return rule(*e);
    }
    return {};
  }

  void stmts(const std::vector<ir::Stmt>& body, int indent) {
    for (const ir::Stmt& s : body) stmt(s, indent);
  }

  std::string out;

 private:
  std::string list(const std::vector<ir::E>& args) const {
    std::string s;
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + expr(args[i]);
    return s;
  }

  // ops.def's rule, its identifiers renamed: a, b, c, r and d to what the pass bound, a fenced
  // occurrence of a, b or c through the opaque identity, constants to literals, functions by the dialect.
  std::string rule(const ir::Expr& e) const {
    return spellFenced(e.name, e.op, [&](std::string_view id, bool fenced) -> std::string {
      static constexpr std::string_view kBound[] = {"a", "b", "c", "r", "d"};
      for (size_t k = 0; k < 5; ++k)
        if (id == kBound[k]) {
          const std::string x = expr(e.args[k]);
          return fenced && k < 3 && e.fence ? "tl_opq(" + x + ", " + expr(e.fence) + ")" : x;
        }
      if (id == "zero") return spellLiteral(0.0, k_.precision, d_);
      if (id == "one") return spellLiteral(1.0, k_.precision, d_);
      return d_.function(k_.precision, id, k_.approxMath);
    });
  }

  std::string type(const ir::Stmt& s) const {
    switch (s.type) {
      case ir::Type::Scalar: return (s.precise ? d_.precise : std::string()) + types_.scalar;
      case ir::Type::Uint: return d_.uintType;
      case ir::Type::Uint4: return d_.uint4Type;
      case ir::Type::Scalar2: return types_.vector2;
      case ir::Type::Int: return "int";
    }
    return {};
  }

  // One statement as text without indentation or newline (a Line's parts; simple statements).
  std::string simple(const ir::Stmt& s) const {
    using K = ir::Stmt::Kind;
    switch (s.kind) {
      case K::Comment: return "// " + s.text;
      case K::Declare: {
        std::string t = (s.shared ? d_.blockShared : std::string()) + (s.isConst ? "const " : "") + type(s) + " " + s.text;
        if (s.array > 0) t += "[" + std::to_string(s.array) + "]";
        if (s.init) t += " = " + expr(s.init);
        return t + ";" + (s.note.empty() ? "" : "  // " + s.note);
      }
      case K::Assign: return expr(s.target) + " = " + expr(s.value) + ";";
      case K::AddAssign: return expr(s.target) + " += " + expr(s.value) + ";";
      case K::Barrier: return d_.barrier;
      case K::Prefetch: {
        std::string t = d_.prefetch;
        const size_t at = t.find("$X");
        return at == std::string::npos ? t : t.replace(at, 2, expr(s.value));
      }
      case K::Kahan: {
        const std::string T = (d_.precise) + types_.scalar + " ";
        const std::string sum = expr(s.target), comp = expr(s.comp), term = expr(s.value);
        if (s.viaCells)
          return "{ " + T + "s = " + sum + "; " + T + "y = " + term + " - " + comp + "; " + T + "t = s + y; " + comp +
                 " = (t - s) - y; " + sum + " = t; }";
        return "{ " + T + "y = " + term + " - " + comp + "; " + T + "t = " + sum + " + y; " + comp + " = (t - " + sum +
               ") - y; " + sum + " = t; }";
      }
      case K::Line: {
        std::string t;
        for (size_t i = 0; i < s.body.size(); ++i) t += (i ? " " : "") + simple(s.body[i]);
        return t;
      }
      default: return {};
    }
  }

  void emit(int indent, const std::string& text) {
    out.append(static_cast<size_t>(indent) * 2, ' ');
    out += text;
    out += '\n';
  }

  void stmt(const ir::Stmt& s, int indent) {
    using K = ir::Stmt::Kind;
    switch (s.kind) {
      case K::Block:
        emit(indent, "{" + (s.text.empty() ? std::string() : "  // " + s.text));
        stmts(s.body, indent + 1);
        emit(indent, "}");
        return;
      case K::Seq: stmts(s.body, indent); return;
      case K::Loop: {
        if (s.rolled && s.unrollBy > 1 && !d_.unrollPragma.empty())
          emit(indent, d_.unrollPragma + std::to_string(s.unrollBy));
        else if (s.rolled && !d_.dontUnrollPragma.empty())
          emit(indent, d_.dontUnrollPragma);
        emit(indent, (s.rolled ? d_.dontUnrollAttribute : std::string()) + "for (" + type(s) + " " + s.text + " = " +
                         expr(s.init) + "; " + expr(s.cond) + "; " + expr(s.step) + ") {" +
                         (s.note.empty() ? std::string() : "  // " + s.note));
        stmts(s.body, indent + 1);
        emit(indent, "}");
        return;
      }
      case K::If:
        emit(indent, "if (" + expr(s.cond) + ") {");
        stmts(s.body, indent + 1);
        emit(indent, "}");
        return;
      default: emit(indent, simple(s));
    }
  }

  const ir::KernelIR& k_;
  const Dialect& d_;
  const PrecisionSpelling& types_;
};

// Tape/philox.h's draws, spelled: Philox4x32-10, a Box-Muller pair, a draw group's words.
std::string drawHelpers(const ir::KernelIR& k, const Dialect& dialect) {
  const PrecisionSpelling& types = dialect.spelling(k.precision);
  const std::string& T = types.scalar;  // the ABI's T and U (emit.h), short in this text-heavy code
  const std::string& U = dialect.uintType;
  const std::string& U4 = dialect.uint4Type;
  const std::string& precise = dialect.precise;
  const std::string& qualifier = dialect.helperQualifier;
  const std::string& drawQualifier =
      k.helpers.outlineDraws && !dialect.outlineQualifier.empty() ? dialect.outlineQualifier : qualifier;
  auto literal = [&](double v) { return spellLiteral(v, k.precision, dialect); };
  auto function = [&](const char* id) { return dialect.function(k.precision, id, k.approxMath); };
  auto toT = [&](const std::string& x) { return dialect.cCasts ? "(" + T + ")" + x : T + x; };
  std::string s;
  s += "// Philox4x32-10, its four words (tape/philox.h).\n";
  s += drawQualifier + U4 + " tl_philox(" + U + " c0, " + U + " c1, " + U + " c2, " + U + " c3, " + U + " k0, " + U + " k1) {\n";
  // A rolled loop keeps kernels with hundreds of draws small where compile time matters more than speed.
  const bool rolled = k.helpers.philoxRolled;
  if (rolled && !dialect.dontUnrollPragma.empty()) s += "  " + dialect.dontUnrollPragma + "\n";
  s += "  " + (rolled ? dialect.dontUnrollAttribute : std::string()) + "for (int r = 0; r < 10; ++r) {\n";
  s += "    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }\n";
  s += "    " + U + " hi0 = " + dialect.mulHi + "(0xD2511F53u, c0); " + U + " lo0 = 0xD2511F53u * c0;\n";
  s += "    " + U + " hi1 = " + dialect.mulHi + "(0xCD9E8D57u, c2); " + U + " lo1 = 0xCD9E8D57u * c2;\n";
  s += "    " + U + " n0 = hi1 ^ c1 ^ k0; " + U + " n2 = hi0 ^ c3 ^ k1;\n";
  s += "    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;\n";
  s += "  }\n  return " + dialect.makeUint4 + "(c0, c1, c2, c3);\n}\n";

  // Horner's scheme over the coefficients c, in x, then "* x + 1"; each step one fused multiply-add.
  const std::string& fma = dialect.function(k.precision, "fma");
  auto horner = [&](const auto& c, const std::string& x) {
    std::string h = literal(c[0]);
    for (size_t i = 1; i < std::size(c); ++i) h = fma + "(" + h + ", " + x + ", " + literal(c[i]) + ")";
    return fma + "(" + h + ", " + x + ", " + literal(1.0) + ")";
  };
  // Box-Muller (version 4): draws 2p and 2p + 1 from the words (a, b), the radius from a's uniform, the
  // angle from b (its quadrant and, exactly, its offset in the quadrant). No branch.
  s += "// Box-Muller: draws 2p and 2p + 1 from the pair of words (a, b) (tape/philox.h).\n";
  s += drawQualifier + types.vector2 + " tl_boxMuller(" + U + " a, " + U + " b) {\n";
  // u = ((a >> 9) + 0.5) * 2^-23 as (a >> 9) * 2^-23 + 2^-24 in one fma (every step exact: (a >> 9) < 2^23).
  s += "  " + precise + T + " u = " + fma + "(" + toT("(a >> 9u)") + ", " + literal(1.1920928955078125e-07) + ", " +
       literal(5.9604644775390625e-08) + ");\n";
  s += "  " + precise + T + " r2 = " + literal(-2.0) + " * " + function("log") + "(u);\n";
  // max(r2, 0): a no-op for a log below 0 under 1; a log good only to an absolute error near 1 (glsl,
  // approx) could go positive there, and the radius would be NaN.
  s += "  " + precise + T + " rho = " + function("sqrt") + "(r2 > " + literal(0.0) + " ? r2 : " + literal(0.0) + ");\n";
  s += "  const " + U + " n = b >> 30u;\n";
  s += "  " + precise + T + " f = " + fma + "(" + toT("((b >> 9u) & " + std::to_string(kAngleMask) + "u)") + ", " +
       literal(kAngleScale) + ", " + literal(kAngleOffset) + ");\n";
  s += "  " + precise + T + " th = f * " + literal(kHalfPi) + ";\n";
  s += "  " + precise + T + " t = th * th;\n";
  s += "  " + precise + T + " s = th * " + horner(kSinTaylor, "t") + ";\n";
  s += "  " + precise + T + " c = " + horner(kCosTaylor, "t") + ";\n";
  s += "  const bool odd = (n & 1u) != 0u;\n";
  s += "  " + precise + T + " x = odd ? s : c;\n";
  s += "  " + precise + T + " y = odd ? c : s;\n";
  s += "  return " + types.makeVector2 + "(rho * (n == 1u || n == 2u ? -x : x), rho * (n >= 2u ? -y : y));\n}\n";

  s += "// The words of draws 4g .. 4g+3 of path (pathHi:pathLo) under key (k0, k1): counter {g, 0, pathLo, pathHi}.\n";
  s += qualifier + U4 + " tl_drawWords(" + U + " g, " + U + " pathLo, " + U + " pathHi, " + U + " k0, " + U + " k1) {\n";
  s += "  return tl_philox(g, 0u, pathLo, pathHi, k0, k1);\n}\n";
  return s;
}

}  // namespace

const std::vector<std::string>& outlinedDrawHelpers() {
  static const std::vector<std::string> names{"tl_philox", "tl_boxMuller"};  // as drawHelpers spells them
  return names;
}

std::string printHelpers(const ir::KernelIR& k, const Dialect& dialect) {
  const PrecisionSpelling& types = dialect.spelling(k.precision);
  const std::string& qualifier = dialect.helperQualifier;
  const std::string& T = types.scalar;
  const std::string& U = dialect.uintType;
  const std::string castBits = dialect.cCasts ? "(" + types.bitsType + ")(z)" : types.bitsType + "(z)";
  std::string s;
  // An add, not an XOR: opq(opq(x)) must stay opaque. With XOR the two cancel where a recomputed segment
  // re-reads a bookmark that was itself opaque (a constant) or fences it again, and the compiler sees
  // through the cut.
  s += "// opq: the identity on every bit pattern, opaque to the compiler (z is always 0).\n";
  s += qualifier + T + " tl_opq(" + T + " x, " + U + " z) { return " + types.bitsToFloat + "(" + types.floatToBits +
       "(x) + " + castBits + "); }\n";
  s += qualifier + T + " tl_sel(bool c, " + T + " x, " + T + " y) { return c ? x : y; }\n";
  return s + drawHelpers(k, dialect);
}

std::string printKernel(const ir::KernelIR& k, const Dialect& d) {
  std::string source = d.prologue;
  if (k.precision == Precision::F64) source += d.fp64Prologue;
  if (k.dontUnrollPrologue) source += d.dontUnrollPrologue;
  for (const std::string& h : k.header) source += "// " + h + "\n";
  source += d.helpers;
  if (k.approxMath) source += d.spelling(k.precision).approxHelpers;
  source += printHelpers(k, d);
  std::string begin = d.kernelBegin;
  begin = substitute(begin, "$RED", std::to_string(k.reductionElements));
  begin = substitute(begin, "$MINBLOCKS", k.minBlocks > 0 ? ", " + std::to_string(k.minBlocks) : "");
  begin = substitute(begin, "$WG", std::to_string(k.workgroupSize));
  begin = substitute(begin, "$ENTRY", d.entry);
  begin = substitute(begin, "$T", d.spelling(k.precision).scalar);
  begin = substitute(begin, "$U", d.uintType);
  source += begin;
  Printer p(k, d);
  p.stmts(k.body, 1);
  source += p.out;
  source += d.kernelEnd;
  return source;
}

}  // namespace tapelab
