// Forward liveness of a tape: where each value is last read, and what the
// reverse sweep keeps alive (the values its adjoint rules read, the adjoints).
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

// firstReverseRead[j]: the smallest node whose adjoint rule reads the value of
// node j (as its a, its b, or its own result r; see adjointReads in tape/op.h),
// or -1 when the reverse sweep never reads it. The reverse sweep runs in
// descending node order, so j's value is needed until that node is reversed. O(n).
std::vector<int32_t> firstReverseRead(const Tape& tape);

// adjointsLive[i] for i in [0, n]: adjoints held at the reverse sweep's point
// R(i) ("node i has just been reversed"; R(n) is the start, after seeding the
// output's adjoint). The adjoint of node j is live from the first contribution
// to it (the reversal of its last reader, lastUse[j]; the seed for the output)
// until it is read: by j's own adjoint rule (live on (j, lastUse[j]]), or never
// for an input (a Greek: live on [0, lastUse[j]]). Adjoints of const and randn
// nodes are never read and are not counted; neither is the adjoint of a value
// nobody reads. The same for every plan: the reverse order does not change. O(n).
std::vector<int32_t> adjointsLive(const Tape& tape, const std::vector<int32_t>& lastUse);

// The width of a tape's pipe: the fewest values live across a cut in the middle half of the
// tape (liveAcross over c in [n/4, 3n/4]; inputs read later count, as a plan keeps them). The
// 252-step Asian's is 7; a product whose every step carries N state values has at least N. O(n).
int32_t pipeWidth(const Tape& tape);

}  // namespace tapelab
