// The draw helpers every kernel defines (tape/philox.h's definition, spelled per dialect):
// Philox4x32-10, the Box-Muller pair of two of its words, and the four words of a draw group.
// The emitter (emit.cpp) calls them.
#include <string>
#include <vector>

#include "gpu/codegen/emit.h"
#include "tape/philox.h"

namespace tapelab {

const std::vector<std::string>& outlinedDrawHelpers() {
  static const std::vector<std::string> names{"tl_philox", "tl_boxMuller"};  // as drawHelpers spells them
  return names;
}

std::string drawHelpers(const Dialect& dialect, Precision precision, const KernelConfig& config) {
  const PrecisionSpelling& types = dialect.spelling(precision);
  const std::string& T = types.scalar;  // the ABI's T and U (emit.h), short in this text-heavy code
  const std::string& U = dialect.uintType;
  const std::string& U4 = dialect.uint4Type;
  const std::string& precise = dialect.precise;
  const std::string& qualifier = dialect.helperQualifier;
  // outline_draws: the dialect's not-inlined helpers for Philox and Box-Muller.
  const std::string& drawQualifier =
      config.outlineDraws && !dialect.outlineQualifier.empty() ? dialect.outlineQualifier : qualifier;
  auto literal = [&](double v) { return spellLiteral(v, precision, dialect); };
  auto function = [&](const char* id) { return dialect.function(precision, id, config.math == MathContract::Approx); };
  auto toT = [&](const std::string& x) { return dialect.cCasts ? "(" + T + ")" + x : T + x; };
  std::string s;

  // Philox4x32-10 (tape/philox.h): counter {c0, c1, c2, c3}, key {k0, k1}; its four words.
  s += "// Philox4x32-10, its four words (tape/philox.h).\n";
  s += drawQualifier + U4 + " tl_philox(" + U + " c0, " + U + " c1, " + U + " c2, " + U + " c3, " + U + " k0, " + U + " k1) {\n";
  // A rolled loop keeps kernels with hundreds of draws small where compile
  // time matters more than speed (CPU Vulkan devices); same operations.
  if (!config.philoxUnrolled && !dialect.dontUnrollPragma.empty()) s += "  " + dialect.dontUnrollPragma + "\n";
  s += "  " + (config.philoxUnrolled ? std::string() : dialect.dontUnrollAttribute) + "for (int r = 0; r < 10; ++r) {\n";
  s += "    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }\n";
  s += "    " + U + " hi0 = " + dialect.mulHi + "(0xD2511F53u, c0); " + U + " lo0 = 0xD2511F53u * c0;\n";
  s += "    " + U + " hi1 = " + dialect.mulHi + "(0xCD9E8D57u, c2); " + U + " lo1 = 0xCD9E8D57u * c2;\n";
  s += "    " + U + " n0 = hi1 ^ c1 ^ k0; " + U + " n2 = hi0 ^ c3 ^ k1;\n";
  s += "    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;\n";
  s += "  }\n  return " + dialect.makeUint4 + "(c0, c1, c2, c3);\n}\n";

  // Horner's scheme over the coefficients c, in x, then "* x + 1"; each step one fused multiply-add.
  const std::string& fma = dialect.function(precision, "fma");
  auto horner = [&](const auto& c, const std::string& x) {
    std::string h = literal(c[0]);
    for (size_t i = 1; i < std::size(c); ++i) h = fma + "(" + h + ", " + x + ", " + literal(c[i]) + ")";
    return fma + "(" + h + ", " + x + ", " + literal(1.0) + ")";
  };
  // Box-Muller (tape/philox.h, version 4): draws 2p and 2p + 1 from the words (a, b), the radius from a's
  // uniform, the angle from b (its quadrant and, exactly, its offset in the quadrant). No branch.
  s += "// Box-Muller: draws 2p and 2p + 1 from the pair of words (a, b) (tape/philox.h).\n";
  s += drawQualifier + types.vector2 + " tl_boxMuller(" + U + " a, " + U + " b) {\n";
  // u = ((a >> 9) + 0.5) * 2^-23 as (a >> 9) * 2^-23 + 2^-24 in one fma (every step exact: (a >> 9) < 2^23).
  s += "  " + precise + T + " u = " + fma + "(" + toT("(a >> 9u)") + ", " + literal(1.1920928955078125e-07) + ", " +
       literal(5.9604644775390625e-08) + ");\n";
  s += "  " + precise + T + " r2 = " + literal(-2.0) + " * " + function("log") + "(u);\n";
  // max(r2, 0): a no-op for a log below 0 under 1; a log good only to an absolute error near 1 (glsl, approx)
  // could go positive there, and the radius would be NaN.
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

}  // namespace tapelab
