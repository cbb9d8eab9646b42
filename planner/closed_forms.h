// Tangents a tangent kernel need not carry (the GPU compiler's activity pass, config closed_forms; the
// kernel-kind model counts them too).
//
// A value homogeneous of degree one in an input x (v = x * g, g a value x does not reach: the spot's path
// in a Black-Scholes model, its running sum, its average) has the tangent dv/dx = g = v / x. Such a value
// carries no tangent in x along the sweep; where a value that is not homogeneous reads it (the payoff's
// strike subtraction), or it is the output, the tangent is spelled v * (1 / x), 1 / x computed once per
// path and market. Homogeneous, by the ops: x itself; a constant 0; v * w and v / w with w not reached
// by x; v + w, v - w, -v and select(c, v, w) (c not reached by x) of homogeneous v and w. No product is
// named: the rules are the ops'. The tangent values change in rounding only (x = 0 makes them not
// finite), never the values: the tangent kind promises the plain kernel's value bits, and keeps them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tape/tangent.h"
#include "tape/tape.h"

namespace tapelab {

struct ClosedForms {
  std::vector<int> inputOfSlot;                // per tangent slot: its input ordinal
  std::vector<std::vector<int32_t>> closed;    // per node: the slots whose tangent is v / x, ascending
  bool any() const;
  bool isClosed(int32_t node, int32_t slot) const;
};

// Empty (no closed slot) unless `on`; input nodes keep their tangent (1, exactly).
ClosedForms closedForms(const Tape& tape, const TangentSlots& slots, bool on);

std::string toText(const ClosedForms& forms, const Tape& tape);

}  // namespace tapelab
