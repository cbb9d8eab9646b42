// The draw helpers every kernel defines (tape/philox.h's definition, spelled per dialect):
// Philox4x32-10, Acklam's normal quantile (branching on the tails, or by per-lane selection) and
// the four words of a draw group. The emitter (emit.cpp) calls them; the kernel's config picks the shape.
#include <functional>
#include <string>
#include <vector>

#include "gpu/codegen/emit.h"
#include "tape/philox.h"

namespace tapelab {

const std::vector<std::string>& outlinedDrawHelpers() {
  static const std::vector<std::string> names{"tl_philox", "tl_normal"};  // as drawHelpers spells them
  return names;
}

std::string drawHelpers(const Dialect& dialect, Precision precision, const KernelConfig& config, int workgroupSize,
                        bool queuedTails) {
  const PrecisionSpelling& types = dialect.spelling(precision);
  const std::string& T = types.scalar;  // the ABI's T and U (emit.h), short in this text-heavy code
  const std::string& U = dialect.uintType;
  const std::string& U4 = dialect.uint4Type;
  const std::string& precise = dialect.precise;
  const std::string& qualifier = dialect.helperQualifier;
  // outline_draws: the dialect's not-inlined helpers for Philox and the quantile.
  const std::string& drawQualifier =
      config.outlineDraws && !dialect.outlineQualifier.empty() ? dialect.outlineQualifier : qualifier;
  auto literal = [&](double v) { return spellLiteral(v, precision, dialect); };
  auto function = [&](const char* id) { return dialect.function(precision, id, config.math == MathContract::Approx); };
  const std::string quotient = dialect.divide(precision, "num", "den", config.math == MathContract::Approx);
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

  // u and Acklam's quantile, in T, in the reference's order (tape/philox.h).
  const bool f32 = precision == Precision::F32;
  const double low = f32 ? double(float(kNormalLow)) : kNormalLow;
  const double high = f32 ? double(1.0f - float(kNormalLow)) : 1.0 - kNormalLow;
  // Horner's scheme over n coefficients spelled by coef(i), in x, then "* x + 1" when endsWithOne;
  // each step one fused multiply-add (version 3 of the draws: tape/philox.h).
  const std::string& fma = dialect.function(precision, "fma");
  auto horner = [&](int n, const std::function<std::string(int)>& coef, const std::string& x, bool endsWithOne) {
    std::string h = coef(0);
    for (int i = 1; i < n; ++i) h = fma + "(" + h + ", " + x + ", " + coef(i) + ")";
    if (endsWithOne) h = fma + "(" + h + ", " + x + ", " + literal(1.0) + ")";
    return h;
  };
  auto fixed = [&](const double* c) { return [&, c](int i) { return literal(c[i]); }; };
  // u of a word: ((word >> 9) + 0.5) * 2^-23 as (word >> 9) * 2^-23 + 2^-24 in one fma (every step exact:
  // (word >> 9) < 2^23), the same u.
  auto uOf = [&](const std::string& word) {
    const std::string top = "(" + word + " >> 9u)";
    return fma + "(" + (dialect.cCasts ? "(" + T + ")" + top : T + top) + ", " + literal(1.1920928955078125e-07) +
           ", " + literal(5.9604644775390625e-08) + ")";
  };
  // The branching form's two regions, statements from u to a return (the gather form calls them too:
  // the same operations, so the same bits).
  auto tailRegion = [&](const std::string& in) {
    std::string t;
    t += in + precise + T + " tail = u < " + literal(low) + " ? u : " + literal(1.0) + " - u;\n";
    t += in + precise + T + " q = " + function("sqrt") + "(" + literal(-2.0) + " * " + function("log") + "(tail));\n";
    t += in + precise + T + " num = " + horner(6, fixed(kNormalC), "q", false) + ";\n";
    t += in + precise + T + " den = " + horner(4, fixed(kNormalD), "q", true) + ";\n";
    t += in + precise + T + " x = " + quotient + ";\n";
    t += in + "return u < " + literal(low) + " ? x : -x;\n";
    return t;
  };
  auto centralRegion = [&](const std::string& in) {
    std::string t;
    t += in + precise + T + " q = u - " + literal(0.5) + ";\n";
    t += in + precise + T + " r = q * q;\n";
    t += in + precise + T + " num = " + horner(6, fixed(kNormalA), "r", false) + " * q;\n";
    t += in + precise + T + " den = " + horner(5, fixed(kNormalB), "r", true) + ";\n";
    t += in + precise + T + " z = " + quotient + ";\n";
    t += in + "return z;\n";
    return t;
  };
  // quantile=gather: tl_normals(words, use, act) gives the four draws of one Philox call (those `use` marks:
  // bit j for word j). Each lane computes the central region of its words; the warp's tail words (a tail is
  // about 4.85% of draws: some lane of a warp has one in 80% of single draws, but 128 words hold about 6)
  // go to workgroup-shared slots, one per lane of the warp, by their rank among the warp's tails, and the
  // warp's active lanes (act, a ballot before the lanes past the dispatch's count leave) compute them
  // together, as many passes as there are warp-fulls of tails (one, nearly always), then read them back.
  // What both warp forms (the gathered quantile, draws=prefill's tail queue) start from: the dialect's ballot
  // (else the refusal configProblem gives front ends first), the two regions as helpers, and a lane's place in
  // its warp (`lanes`: lane, the warp's first lane base, the mask lt of the lanes before it).
  const std::string lanes = "  const " + U + " lane = " + dialect.localId + " & 31u, base = " + dialect.localId +
                            " - lane, lt = (1u << lane) - 1u;\n";
  auto warpRegions = [&]() {
    if (dialect.ballot.empty() || types.vector4.empty())
      throw std::invalid_argument("quantile=gather: the " + dialect.name +
                                  " dialect has no 32-lane warp ballot (cuda has; configProblem says so)");
    return qualifier + T + " tl_central(" + T + " u) {\n" + centralRegion("  ") + "}\n" + qualifier + T + " tl_tail(" +
           T + " u) {\n" + tailRegion("  ") + "}\n";
  };
  auto gatherHelpers = [&]() {
    const std::string& V = types.vector4;
    const int n = 4;  // one Philox call's words
    const std::string& popc = dialect.popcount;
    std::string g = warpRegions();
    g += "// quantile=gather: the four draws of one Philox call, the warp's tails computed by its lanes together.\n";
    g += drawQualifier + V + " tl_normals(" + U4 + " w, " + U + " use, " + U + " act) {\n";
    g += "  " + dialect.blockShared + T + " tl_tails[" + std::to_string(workgroupSize) + "];\n";
    g += lanes;
    g += "  const " + U + " rank = " + popc + "(act & lt), cap = " + popc + "(act);\n";
    const char* f[4] = {"x", "y", "z", "w"};
    for (int j = 0; j < n; ++j) {
      const std::string J = std::to_string(j), bit = std::to_string(1u << j) + "u";
      g += "  " + precise + T + " u" + J + " = " + uOf(std::string("w.") + f[j]) + ";\n";
      g += "  const bool t" + J + " = (use & " + bit + ") != 0u && (u" + J + " < " + literal(low) + " || u" + J +
           " > " + literal(high) + ");\n";
      g += "  " + T + " z" + J + " = " + literal(0.0) + ";\n";
      g += "  if ((use & " + bit + ") != 0u) z" + J + " = tl_central(u" + J + ");\n";
      g += "  const " + U + " m" + J + " = " + dialect.ballot + "(act, t" + J + ");\n";
    }
    // i_j: word j's rank among the warp's tails (words in order, lanes in order within a word).
    g += "  " + U + " before = 0u;\n";
    for (int j = 0; j < n; ++j) {
      const std::string J = std::to_string(j);
      g += "  const " + U + " i" + J + " = before + " + popc + "(m" + J + " & lt); before += " + popc + "(m" + J + ");\n";
    }
    g += "  const " + U + " total = before;\n";
    g += "  for (" + U + " pass = 0u; pass < total; pass += cap) {\n";
    for (int j = 0; j < n; ++j) {
      const std::string J = std::to_string(j);
      g += "    if (t" + J + " && i" + J + " - pass < cap) tl_tails[base + i" + J + " - pass] = u" + J + ";\n";
    }
    g += "    " + dialect.syncLanes + "(act);\n";
    g += "    if (rank < total - pass) tl_tails[base + rank] = tl_tail(tl_tails[base + rank]);\n";
    g += "    " + dialect.syncLanes + "(act);\n";
    for (int j = 0; j < n; ++j) {
      const std::string J = std::to_string(j);
      g += "    if (t" + J + " && i" + J + " - pass < cap) z" + J + " = tl_tails[base + i" + J + " - pass];\n";
    }
    g += "    " + dialect.syncLanes + "(act);\n";
    g += "  }\n";
    g += "  return " + types.makeVector4 + "(z0, z1, z2, z3);\n}\n";
    return g;
  };
  // tl_normal: Acklam's quantile of one word, branching on the tails or by per-lane selection.
  auto normalHelper = [&]() {
    std::string t;
    t += "// Acklam's normal quantile of u = ((w >> 9) + 0.5) * 2^-23 (tape/philox.h).\n";
    t += drawQualifier + T + " tl_normal(" + U + " w) {\n";
    t += "  " + precise + T + " u = " + uOf("w") + ";\n";
    if (config.quantile == QuantileForm::Select) {
      // Both regions' operands, then one rational function whose coefficients each lane selects:
      // the tail's denominator has one coefficient fewer, padded with a leading 0 (0 * q + d0 is
      // d0 exactly, q being finite), and the tail's numerator is multiplied by 1 where the central
      // one is multiplied by q. So each lane performs its region's operations of the branching form
      // in the same order: the same bits, without divergence.
      auto selected = [&](const double* central, int n, const double* tail, int m) {
        return [&, central, n, tail, m](int i) {  // tail[i - (n - m)], leading zeros padding it
          const int j = i - (n - m);
          return "(tl_t ? " + literal(j >= 0 ? tail[j] : 0.0) + " : " + literal(central[i]) + ")";
        };
      };
      t += "  bool tl_t = u < " + literal(low) + " || u > " + literal(high) + ";\n";
      t += "  " + precise + T + " tail = u < " + literal(low) + " ? u : " + literal(1.0) + " - u;\n";
      t += "  " + precise + T + " qt = " + function("sqrt") + "(" + literal(-2.0) + " * " + function("log") + "(tail));\n";
      t += "  " + precise + T + " q = u - " + literal(0.5) + ";\n";
      t += "  " + precise + T + " r = q * q;\n";
      t += "  " + precise + T + " x = tl_t ? qt : r;\n";
      t += "  " + precise + T + " num = " + horner(6, selected(kNormalA, 6, kNormalC, 6), "x", false) + " * (tl_t ? " +
           literal(1.0) + " : q);\n";
      t += "  " + precise + T + " den = " + horner(5, selected(kNormalB, 5, kNormalD, 4), "x", true) + ";\n";
      t += "  " + precise + T + " z = " + quotient + ";\n";
      t += "  return u > " + literal(high) + " ? -z : z;\n";
    } else {
      t += "  if (u < " + literal(low) + " || u > " + literal(high) + ") {\n";
      t += tailRegion("    ");
      t += "  }\n";
      t += centralRegion("  ");
    }
    t += "}\n";
    return t;
  };
  // draws=prefill with quantile=gather: the prefill loop (emit.cpp) hands each word to tl_queueDraw, which
  // stores a central draw at once and queues a tail word (its u and scratch address) in the warp's 32 slots
  // of workgroup memory; a full queue, and the path's last words, are computed by the warp's active lanes
  // together (tl_flushTails), so a tail pass has 32 tails, not the ~6 of one Philox call.
  auto queueHelpers = [&]() {
    const std::string& popc = dialect.popcount;
    const std::string wg = std::to_string(workgroupSize);
    std::string g = warpRegions();
    g += "// draws=prefill, quantile=gather: the warp's queued tail words (u) and their scratch addresses.\n";
    g += dialect.blockShared + T + " tl_qu[" + wg + "];\n";
    g += dialect.blockShared + U + " tl_qa[" + wg + "];\n";
    g += "// The warp's first n queued tails, computed by its active lanes (act) and stored at their addresses.\n";
    g += qualifier + "void tl_flushTails(" + T + "* scratch, " + U + " n, " + U + " act) {\n" + lanes;
    g += "  const " + U + " rank = " + popc + "(act & lt), cap = " + popc + "(act);\n";
    g += "  " + dialect.syncLanes + "(act);\n";
    g += "  for (" + U + " s = rank; s < n; s += cap) scratch[tl_qa[base + s]] = tl_tail(tl_qu[base + s]);\n";
    g += "  " + dialect.syncLanes + "(act);\n}\n";
    g += "// Word w's draw, for scratch[a]: a central one stored now, a tail one queued (qn: the warp's queued count).\n";
    g += qualifier + "void tl_queueDraw(" + T + "* scratch, " + U + " w, " + U + " a, " + U + " act, " + U + "& qn) {\n" + lanes;
    g += "  " + precise + T + " u = " + uOf("w") + ";\n";
    g += "  const bool t = u < " + literal(low) + " || u > " + literal(high) + ";\n";
    g += "  const " + T + " z = tl_central(u);\n";
    g += "  if (!t) scratch[a] = z;\n";
    g += "  const " + U + " m = " + dialect.ballot + "(act, t), r = " + popc + "(m & lt), n = " + popc + "(m);\n";
    g += "  if (t && qn + r < 32u) { tl_qu[base + qn + r] = u; tl_qa[base + qn + r] = a; }\n";
    g += "  if (qn + n >= 32u) {\n";
    g += "    tl_flushTails(scratch, 32u, act);\n";
    g += "    if (t && qn + r >= 32u) { tl_qu[base + qn + r - 32u] = u; tl_qa[base + qn + r - 32u] = a; }\n";
    g += "    qn = qn + n - 32u;\n";
    g += "  } else {\n    qn += n;\n  }\n}\n";
    return g;
  };
  // quantile=gather: tl_normals (the same two regions) instead of tl_normal, which nothing would call;
  // the queue's helpers instead where every draw is prefilled.
  if (config.quantile == QuantileForm::Gather) s += queuedTails ? queueHelpers() : gatherHelpers();
  else s += normalHelper();
  s += "// The words of draws 4g .. 4g+3 of path (pathHi:pathLo) under key (k0, k1): counter {g, 0, pathLo, pathHi}.\n";
  s += qualifier + U4 + " tl_drawWords(" + U + " g, " + U + " pathLo, " + U + " pathHi, " + U + " k0, " + U + " k1) {\n";
  s += "  return tl_philox(g, 0u, pathLo, pathHi, k0, k1);\n}\n";
  return s;
}

}  // namespace tapelab
