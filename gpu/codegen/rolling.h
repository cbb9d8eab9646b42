// The loops pass (config loops=rolled): whether a forward-only kernel writes the tape's time loop
// (planner/loops.h) once and runs it, and how.
//
// The loop's body is spelled from `unroll` consecutive iterations of the tape, starting at iteration
// `templateStart`: unroll is the fewest iterations whose draws fill whole Philox calls (4 draws), so each
// call and Box-Muller pair is computed once per trip, as a straight-line block computes them. What one trip
// leaves to the next, or to the nodes after the loop, lives in a carried variable per body offset
// (`exported`), set before the loop to its initial value (the node iteration 0 reads) and at each trip's
// end. The first `iterations` iterations run in the loop; the rest, and the nodes after, are written out
// and read the carried variables where they read the loop's last iteration. Every node keeps its op and
// its operands' values, so the kernel returns the bits of the kernel with every step written out.
//
// It rolls only where every iteration from templateStart - 1 on has the same copies per market and the
// same tangent slots (a value's shape, the same each trip); else it says why not, and the kernel is
// written out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/codegen/storage.h"
#include "planner/loops.h"
#include "tape/tape.h"

namespace tapelab {

struct RolledLoop {
  bool rolled = false;
  std::string whyNot;            // when config loops=rolled asked and it is not rolled (configUnused)
  TapeLoop loop;
  int32_t unroll = 1;            // tape iterations per trip
  int32_t templateStart = 1;     // the body is spelled from iterations [templateStart, templateStart + unroll)
  int32_t iterations = 0;        // iterations run in the loop (a multiple of unroll); trips = iterations / unroll
  std::vector<int32_t> exported;  // body offsets with a carried variable, ascending

  int32_t trips() const { return iterations / unroll; }
  bool isExported(int32_t offset) const;
};

RolledLoop planRolling(const Tape& tape, const KernelOptions& options, const StoragePlan& storage);

std::string toText(const RolledLoop& rolled, const Tape& tape);

}  // namespace tapelab
