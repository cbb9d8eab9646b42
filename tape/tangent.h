// Vector forward mode (the `tangent` kernel kind): every node carries its
// derivatives with respect to a set of inputs along the forward sweep; there is
// no reverse sweep and nothing is kept or recomputed.
//
// The tangent rules are ops.def's adjoint rules, not a second table. Every
// adjoint rule is linear in d: what node r = f(a, b) sends to a is d * dr/da.
// Spelled with a's tangent in place of d it is dr/da * ta, so
//   tr = adjointA[d := ta] + adjointB[d := tb] + adjointC[d := tc]
// (a's term first; only the terms of arguments whose tangent may be nonzero,
// and of rules that send something: a comparison's tangent is zero).
// Every engine spells it so; tests/tape checks it against finite differences.
//
// Sparsity: a node's tangent in slot s is structurally zero unless the node
// depends on the slot's input; tangentSlots() says which slots each node
// carries, and every engine computes (and sums) exactly those. So the basket's
// asset i carries spot_i, vol_i, rate and maturity, not all 2M+3 inputs.
#pragma once
#include <cstdint>
#include <vector>

#include "tape/tape.h"

namespace tapelab {

struct TangentSlots {
  std::vector<int> inputs;               // slot s is d/d input inputs[s]
  std::vector<std::vector<int32_t>> of;  // per node: the slots its tangent may be nonzero in, ascending
  std::vector<int32_t> slotOfInput;      // per input ordinal: its slot, or -1
  int64_t total() const;                 // tangent components over all nodes
};

// `inputs`: input ordinals, ascending, no repeats (engine/engine.h's differentiatedInputs).
TangentSlots tangentSlots(const Tape& tape, const std::vector<int>& inputs);

// The terms a tangent kernel computes: over every node, each argument whose adjoint rule sends
// something, times the slots that argument carries (what planner/kind_model.h prices, and what a
// tangent kernel's source grows with: about 35 bytes a term in C++). Counted in bitsets, a bit per
// (node, slot), without tangentSlots' lists.
// Nodes in [skipBegin, skipEnd) propagate their slots but their terms are not counted (a rolled loop's later
// iterations, written once: planner/tangent_chunk.h); with perMarket, a node it marks counts `markets` times (a
// kernel of several markets writes such a node's tangents once a market).
int64_t tangentTermCount(const Tape& tape, const std::vector<int>& inputs, int32_t skipBegin = 0, int32_t skipEnd = 0,
                         const std::vector<uint8_t>* perMarket = nullptr, int markets = 1);

}  // namespace tapelab
