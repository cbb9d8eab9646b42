// Spelling the op table's expressions in another language.
//
// ops.def writes each forward and adjoint rule once, as an expression over
// the identifiers a, b, r, d, zero, exp, log, sqrt, sel. A code generator
// turns it into its target's text by renaming identifiers; everything else
// (operators, parentheses, commas) is copied verbatim. So every emitter
// computes the same expression tree the interpreter does.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace tapelab {

// Replaces every identifier of `expr` by rename(identifier); rename returns
// the identifier itself to keep it.
std::string spell(std::string_view expr, const std::function<std::string(std::string_view)>& rename);

}  // namespace tapelab
