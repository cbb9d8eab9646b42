// The printer: a KernelIR (ir.h) spelled in a dialect (dialect.h), one rule per node.
//
// It reads the IR and the dialect's table and nothing else: no configuration field, no kernel kind, no
// storage decision (tests/codegen/test_codegen_passes.cpp checks its files' text for them). Every choice
// it spells was made by a pass (emit.cpp lists them).
#pragma once
#include <string>

#include "gpu/codegen/dialect.h"
#include "gpu/codegen/ir.h"

namespace tapelab {

std::string printKernel(const ir::KernelIR& kernel, const Dialect& dialect);

// The helpers a kernel defines before its entry point: the opaque identity, the select, then the draw
// helpers (Philox4x32-10, a Box-Muller pair, a draw group's words; tape/philox.h's definition).
std::string printHelpers(const ir::KernelIR& kernel, const Dialect& dialect);

}  // namespace tapelab
