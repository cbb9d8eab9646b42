// How a literal and an op's expression are written in a dialect: the spelling
// both the GPU emitter and the golden tests rely on (gpu/codegen/emit.h).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gpu/codegen/emit.h"
#include "tape/spell.h"

namespace tapelab {

std::string spellLiteral(double value, Precision precision, const Dialect& dialect) {
  char buf[64];
  if (precision == Precision::F32) {
    const float f = static_cast<float>(value);
    // A finite double beyond float's range is an infinity in fp32: no language
    // has a literal for it, so spell it by its bits.
    if (std::isinf(f)) {
      const std::string inf = dialect.fp32.bitsToFloat + "(0x7f800000u)";
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
  s += dialect.spelling(precision).literalSuffix;
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
// Kinks and steps fence the operands of their comparison only (spellFenced).
bool fencedArgs(Op op) {
  const OpGroup g = info(op).group;
  return g == OpGroup::Transcendental || g == OpGroup::Kink || g == OpGroup::Step || op == Op::Div;
}
bool fencedResult(Op op) { return info(op).group == OpGroup::Transcendental || op == Op::Div; }

std::string spellFenced(std::string_view expr, Op op,
                        const std::function<std::string(std::string_view, bool)>& rename) {
  if (!fencedArgs(op)) return spell(expr, [&](std::string_view id) { return rename(id, false); });
  // A kink fences the operands of its comparison only. Were the selected values
  // the fenced ones too, `sel(x >= y, x, y)` would be a max again, and NVIDIA's
  // Vulkan compiler turned it into fmax (which drops a NaN) in one kernel and
  // not in another (tests/data/regressions/vulkan-max-nan.tape).
  // Steps likewise: select's chosen values and a comparison's 1 and 0 pass unfenced.
  const OpGroup g = info(op).group;
  if ((g == OpGroup::Kink || g == OpGroup::Step) && expr.substr(0, 4) == "sel(") {
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

}  // namespace tapelab
