// The tape an experiment driver runs: a user's .tape file (--tape FILE) or the built-in Asian at
// --steps; and the input a ladder of markets steps (spot where the tape has one, else its first).
#pragma once
#include <string>

#include "cli/options.h"
#include "tape/products/products.h"
#include "tape/textformat.h"

namespace tapelab::experiments {

inline void addTapeFlag(cli::Flags& f) {
  f.value("tape", "FILE.tape", "run this tape (the .tape format) instead of the built-in Asian call at --steps");
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
  return products::asianCall(steps);
}

// The input a ladder of markets steps: "spot" where the tape has one, else its first; -1 without inputs.
inline int ladderInput(const Tape& t) {
  const int spot = t.inputIndex("spot");
  return spot >= 0 ? spot : (t.numInputs() > 0 ? 0 : -1);
}

}  // namespace tapelab::experiments
