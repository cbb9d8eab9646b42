// The .tape text format, version 1.
//
//   tapelab-tape 1
//   # comment; blank lines ignored; '#' starts a comment anywhere
//   input spot 100        # node 0: a named input and its default value
//   const 0.5             # node 1
//   randn 0               # node 2: standard normal draw k = 0
//   mul 0 2               # node 3 = node0 * node2; arguments are earlier node indices
//   lt 2 1                # node 4 = 1 if node2 < node1 else 0
//   select 4 3 1          # node 5 = node3 if node4 > 0 else node1 (three arguments)
//   output 5              # exactly one, the last line
//
// The ops and their arities are tape/ops.def's. New ops did not make a version 2: a file of
// version 1 written before them means what it meant (no word of it changed meaning).
// Numbers are written with 17 significant digits, so write-then-read is exact. A leading UTF-8
// byte-order mark is skipped (as the plan-file reader does); "\r\n" line ends are read as "\n".
//
// Resources: the reader streams (readTapeFile reads 64 KiB at a time and keeps one line, never
// the file), at most kMaxTapeBytes in all and kMaxTapeLineBytes per line, so `tapelab run
// /dev/zero` or a runaway pipe ends in one line, not in the kernel's OOM killer. Time is linear
// in the bytes (input names are checked against a hash set); memory is the Tape: 21 bytes per
// node in its columns (op, a, b, c, imm; up to twice that while a vector grows), plus each input's
// name and default. bench/bench_readers.cpp measures both up to a million nodes and inputs.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tape/tape.h"

namespace tapelab {

// Thrown by the reader: what() is "FILE:LINE: reason".
struct TapeParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr uint64_t kMaxTapeBytes = uint64_t{1} << 30;  // 1 GiB: ~60 million nodes
inline constexpr size_t kMaxTapeLineBytes = 64 * 1024;        // a node's line is tens of bytes

// Parses `text`; `fileName` is only used in error messages.
Tape parseTape(const std::string& text, const std::string& fileName);
// Reads and parses FILE (a regular file, a pipe, /dev/stdin). A file that cannot be read is a
// TapeParseError "FILE:0: why" (no such file, a dangling link and where it points, a loop of
// links, a directory, larger than the limit), as is one whose memory runs out ("out of memory").
Tape readTapeFile(const std::string& path);

std::string writeTape(const Tape& tape);
// Writes the tape to the file a user named (util/files.h writeOutputFile: through links, never
// replacing a special file, never one of `inputs`, the run's own input files); throws
// std::runtime_error naming the file and why on failure, OutputRefused for what it refuses.
void writeTapeFile(const Tape& tape, const std::string& path, const std::vector<std::string>& inputs = {});

}  // namespace tapelab
