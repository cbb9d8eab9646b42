// The liveness pass: which nodes each block of a checkpointed kernel's reverse sweep recomputes.
//
// The schedule (planner/schedule.h) lists every node of a block's range; a kernel recomputes only the
// values the block's adjoint rules read and what computing them reads (a leaf), or what its bookmarks
// need (an inner block). A per-value leaf recomputes the schedule's list as it is (it already stops at the
// kept values, which it imports wherever they lie). One entry per block, in forEachBlock's order (a parent
// before its children).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/codegen/storage.h"
#include "planner/schedule.h"
#include "tape/tape.h"

namespace tapelab {

struct BlockRecompute {
  int32_t from = 0, to = 0;      // the nodes [from, to) considered
  std::vector<uint8_t> needed;   // per tape node: recomputed here (empty for a chain, which recomputes nothing)
};

struct RecomputeLists {
  std::vector<BlockRecompute> blocks;  // forEachBlock order
};

RecomputeLists recomputeLists(const Tape& tape, const Schedule& schedule, const StoragePlan& storage);

// One line per block: its range and the nodes it recomputes (--dump).
std::string toText(const RecomputeLists& lists);

}  // namespace tapelab
