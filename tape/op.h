// The op enum and its static facts, all generated from tape/ops.def.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace tapelab {

enum class Op : uint8_t {
#define TAPELAB_LEAF(Name, text) Name,
#define TAPELAB_OP(Name, text, arity, group, fwd, adjA, adjB, adjC) Name,
#include "tape/ops.def"
};

// What passes care about: leaves have no arguments; kinks have a
// discontinuous derivative, steps a discontinuous value (comparisons, select):
// finite-difference checks avoid both.
enum class OpGroup : uint8_t { Leaf, Unary, Binary, Transcendental, Kink, Step };

// The most arguments an op takes (a, b, c: select).
inline constexpr int kMaxArity = 3;

inline constexpr int kOpCount = 0
#define TAPELAB_LEAF(Name, text) +1
#define TAPELAB_OP(Name, text, arity, group, fwd, adjA, adjB, adjC) +1
#include "tape/ops.def"
    ;

struct OpInfo {
  Op op;
  std::string_view name;  // spelling in .tape files
  int arity;
  OpGroup group;
  std::string_view forward;   // stringized expressions from ops.def ("" for leaves)
  std::string_view adjointA;
  std::string_view adjointB;
  std::string_view adjointC;
  // The rule that sends the node's adjoint to argument k (0: a, 1: b, 2: c).
  constexpr std::string_view adjoint(int k) const { return k == 0 ? adjointA : k == 1 ? adjointB : adjointC; }
};

inline constexpr OpInfo kOps[kOpCount] = {
#define TAPELAB_LEAF(Name, text) {Op::Name, text, 0, OpGroup::Leaf, "", "", "", ""},
#define TAPELAB_OP(Name, text, arity, group, fwd, adjA, adjB, adjC) \
  {Op::Name, text, arity, OpGroup::group, #fwd, #adjA, #adjB, #adjC},
#include "tape/ops.def"
};

constexpr const OpInfo& info(Op op) { return kOps[static_cast<int>(op)]; }
constexpr int arity(Op op) { return info(op).arity; }
constexpr std::string_view name(Op op) { return info(op).name; }

// Parses an op's spelling; nullopt for an unknown word.
std::optional<Op> opFromName(std::string_view word);

// True when `expr` mentions the variable `var` as a whole identifier.
constexpr bool mentions(std::string_view expr, std::string_view var) {
  auto isIdent = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  for (size_t i = 0; i < expr.size();) {
    if (isIdent(expr[i])) {
      size_t j = i;
      while (j < expr.size() && isIdent(expr[j])) ++j;
      if (expr.substr(i, j - i) == var) return true;
      i = j;
    } else {
      ++i;
    }
  }
  return false;
}

// True when an adjoint rule sends something: every rule but the literal `zero`
// (a comparison's, select's to its condition). Engines write no addition for the others.
constexpr bool contributes(std::string_view rule) { return rule != "zero"; }

// Which forward values the reverse sweep reads for this op: a, b, c or its own result r.
struct AdjointReads {
  bool a, b, c, r;
  constexpr bool arg(int k) const { return k == 0 ? a : k == 1 ? b : c; }
};
constexpr AdjointReads adjointReads(Op op) {
  const OpInfo& o = info(op);
  auto any = [&](std::string_view v) {
    for (int k = 0; k < o.arity; ++k)
      if (contributes(o.adjoint(k)) && mentions(o.adjoint(k), v)) return true;
    return false;
  };
  return {any("a"), o.arity >= 2 && any("b"), o.arity >= 3 && any("c"), any("r")};
}

}  // namespace tapelab
