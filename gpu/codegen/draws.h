// The draws pass: where each block computes its Philox calls and Box-Muller pairs.
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

// Inserts every draw scope's declarations. Throws std::logic_error for a statement reading a draw outside a
// scope (a build pass bug).
void scopeDraws(ir::KernelIR& kernel);

}  // namespace tapelab
