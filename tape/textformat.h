// The .tape text format, version 1.
//
//   tapelab-tape 1
//   # comment; blank lines ignored; '#' starts a comment anywhere
//   input spot 100        # node 0: a named input and its default value
//   const 0.5             # node 1
//   randn 0               # node 2: standard normal draw k = 0
//   mul 0 2               # node 3 = node0 * node2; arguments are earlier node indices
//   output 3              # exactly one, the last line
//
// Numbers are written with 17 significant digits, so write-then-read is exact.
#pragma once
#include <stdexcept>
#include <string>

#include "tape/tape.h"

namespace tapelab {

// Thrown by the reader: what() is "FILE:LINE: reason".
struct TapeParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses `text`; `fileName` is only used in error messages.
Tape parseTape(const std::string& text, const std::string& fileName);
Tape readTapeFile(const std::string& path);

std::string writeTape(const Tape& tape);
void writeTapeFile(const Tape& tape, const std::string& path);

}  // namespace tapelab
