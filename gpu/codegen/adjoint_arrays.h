// Which persistent adjoints of the market loop (config markets=loop) may share one array.
//
// In the market loop every persistent value that depends on an input keeps its adjoint in an
// array indexed by the market. The schedule (planner/schedule.h) has those adjoints live for the
// whole reverse sweep; over a flat plan most of them are bookmarks, whose adjoint is written first
// by the segment after the bookmark and read last by the bookmark's own segment. Two adjoints whose
// spans of segments do not overlap can use the same array, set (0, or 1 for the output) by the first
// segment of the reverse sweep that writes it: the same additions in the same order, the same bits.
// An input's array is never handed on: the Greeks are read after the sweep.
#pragma once
#include <cstdint>
#include <vector>

#include "planner/plan.h"
#include "tape/tape.h"

namespace tapelab {

struct SharedAdjointArrays {
  std::vector<int> arrayOf;  // per node: its shared array, or -1 (not a persistent value with an adjoint)
  int arrays = 0;            // arrays used
  std::vector<std::vector<int32_t>> firstWrittenIn;  // per segment: the adjoints whose arrays it sets
};

// `dependsOnInput` per node: computed from an input (those values have adjoints). `plan` must be flat.
SharedAdjointArrays shareAdjointArrays(const Tape& tape, const Plan& plan, const std::vector<uint8_t>& dependsOnInput);

}  // namespace tapelab
