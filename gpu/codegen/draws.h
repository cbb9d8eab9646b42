// The draws pass: where each block computes its Philox calls and Box-Muller pairs.
//
// A scope of carried draws (a one-step trip of a rolled time loop, loop_trip=step) computes them as a
// hand-written loop does: before each statement that reads draw k (+ the trip's drawStep), the call when
// k % 4 == 0 and the pair when k is even, into variables kept from trip to trip, then the draw, x or y of
// the pair by k's parity. The same calls and pairs: the same bits.
//
// Draws 4g .. 4g+3 are the four words of one Philox call (tape/philox.h): each draw scope (a Seq of the
// IR with a drawPrefix: the plain forward sweep, a forward segment, a recompute) computes group g's call
// once, before the first statement that reads a draw of g, and a pair (draws 2p, 2p + 1) once, before
// the first that reads one of the pair; later statements of the scope read the names. The build pass
// reads draws by these names (drawPairName) and marks the statements that do (ir::readsDraw).
#pragma once
#include <cstdint>
#include <string>

#include "gpu/codegen/ir.h"

namespace tapelab {

// A scope's names: the words of group g (prefix + "g<g>") and the pair holding draw k ("...n<0|1>").
std::string drawGroupName(const std::string& prefix, uint32_t group);
std::string drawPairName(const std::string& prefix, uint32_t draw);
// A scope of carried draws (ir::Stmt::drawStep): the draw a statement reads ("...d<k>"), and the words and
// pair carried from trip to trip ("...dw", "...dp"), which the loop declares before it.
std::string drawStepName(const std::string& prefix, uint32_t draw);
std::string drawCarriedWords(const std::string& prefix);
std::string drawCarriedPair(const std::string& prefix);

// Inserts every draw scope's declarations. Throws std::logic_error for a statement reading a draw outside a
// scope (a build pass bug).
void scopeDraws(ir::KernelIR& kernel);

}  // namespace tapelab
