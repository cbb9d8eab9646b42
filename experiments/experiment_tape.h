// The tape an experiment driver runs: a user's .tape file (--tape FILE) or the built-in Asian at
// --steps; and the input a ladder of markets steps (spot where the tape has one, else its first).
#pragma once
#include <string>

#include "cli/options.h"
#include "tape/products/products.h"
#include "tape/textformat.h"

namespace tapelab::experiments {

// --max-nodes (TAPELAB_MAX_NODES): the size bound of every built-in product a driver records.
inline void addSizeBound(cli::Flags& f) {
  if (!f.registered("max-nodes")) f.knob("max-nodes", "N", std::to_string(RunConfig{}.maxNodes));
}

inline void addTapeFlag(cli::Flags& f) {
  f.value("tape", "FILE.tape", "run this tape (the .tape format) instead of the built-in Asian call at --steps");
  addSizeBound(f);
}

// A built-in product, its size estimated and checked against --max-nodes before it is recorded: a
// refusal is one cli::UsageError (exit 2) naming `flags`, the driver's flags that set `params`.
inline Tape experimentProduct(const cli::Flags& f, const std::string& product, const products::ProductParams& params,
                              const std::string& flags) {
  const double bound = static_cast<double>(cli::maxNodesFrom(f));
  try {
    return products::byName(product, params, bound);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(flags + ": " + e.what());
  }
}

// A bad file is a cli::UsageError "FILE:LINE: reason" (exit 2).
inline Tape experimentTape(const cli::Flags& f, int steps) {
  if (const auto path = f.text("tape")) {
    try {
      Tape t = readTapeFile(*path);
      if (const std::string problem = validate(t); !problem.empty()) throw cli::UsageError(*path + ": " + problem);
      return t;
    } catch (const TapeParseError& e) {
      throw cli::UsageError(e.what());
    }
  }
  return experimentProduct(f, "asian", {{"steps", steps}}, "--steps");
}

// The input a ladder of markets steps: "spot" where the tape has one, else its first; -1 without inputs.
inline int ladderInput(const Tape& t) {
  const int spot = t.inputIndex("spot");
  return spot >= 0 ? spot : (t.numInputs() > 0 ? 0 : -1);
}

}  // namespace tapelab::experiments
