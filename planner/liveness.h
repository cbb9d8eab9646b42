// Forward liveness of a tape: where each value is last read.
#pragma once
#include <cstdint>
#include <vector>

#include "tape/tape.h"

namespace tapelab {

// lastUse[j] = the largest node index that reads node j; the output counts as
// read at position n (one past the last node); a value nobody reads has lastUse[j] = j.
std::vector<int32_t> lastUse(const Tape& tape);

// liveAcross[c] for c in [0, n]: the number of values j < c with lastUse[j] >= c,
// i.e. the values a cut placed before node c would have to keep. O(n).
std::vector<int32_t> liveAcross(const Tape& tape, const std::vector<int32_t>& lastUse);

}  // namespace tapelab
