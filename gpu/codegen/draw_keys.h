// The draw-load keys pass (config draws=prefill): which value keys each forward segment's loads of its
// prefilled draws, so that no compiler hoists every segment's loads to the kernel's start.
//
// A segment's key is 0 at run time but made of the last value the previous segment computes (a persistent
// register scalar): 252 loads hoisted to the start spilled under ptxas; keyed, they come a segment at a
// time. config prefill_ahead = N keys segment s with segment s-1-N's last value, so the loads may start N
// segments earlier. Without an earlier value (segment 0; opaque off) a key the recomputes do not use
// either, so no compiler takes a recompute's load for a repeat of the forward sweep's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/codegen/storage.h"
#include "tape/tape.h"

namespace tapelab {

struct DrawLoadKeys {
  std::vector<int32_t> keyNode;  // per top-level segment: the node whose bits key its loads, -1: unkeyed
};

// Empty unless the storage plan prefills the draws.
DrawLoadKeys drawLoadKeys(const Tape& tape, const KernelOptions& options, const StoragePlan& storage);

std::string toText(const DrawLoadKeys& keys);

}  // namespace tapelab
