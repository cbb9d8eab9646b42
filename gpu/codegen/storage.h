// Where a GPU kernel keeps each value and adjoint, decided before anything is printed.
//
// planStorage reads the tape, the kernel's options (kind, plan, markets, config), the dialect and
// the workgroup size, and returns a table: per node the place of its value and of its adjoint, the
// scratch buffer's slots, where the Kahan sums live, and the config fields that had no effect.
// emit.cpp prints from this table and decides nothing about storage. Every place keeps the same
// operations in the same order: the table changes where bits are kept, never what they are.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "tape/tangent.h"
#include "tape/tape.h"

namespace tapelab {

struct Dialect;

// Where the forward sweep keeps a value (a recomputed copy in the reverse sweep is always a
// block-local scalar per market).
enum class ValuePlace : uint8_t {
  Scalar,         // one register scalar: v17 (no input the markets differ in reaches it, or one market)
  MarketScalars,  // one scalar per market: v17_3 (in the market loop's body, this market's: v17)
  LaneArray,      // config markets=loop: a persistent per-market value, an array per lane: v17[tl_m]
  SharedArray,    // the same array once per workgroup (__shared__; config shared_constants): no draw reaches it
  ScratchSlot,    // the scratch kind: a bookmark stored at its cut, loaded in the reverse sweep (one slot per copy)
  StoredDraw,     // config draws=stored: a draw stored in the forward sweep, loaded where it is recomputed
};
// Where a kernel keeps a value's adjoint.
enum class AdjointPlace : uint8_t {
  None,           // no adjoint: no input reaches the value, or the kernel has no reverse sweep
  Scalar,         // d17 (one market)
  MarketScalars,  // d17_3 (in the market loop's body: d17)
  LaneArray,      // the market loop's persistent adjoints (nested plans): d17[tl_m]
  SharedArray,    // the market loop over a flat plan: array ds<k>[tl_m], shared where lives do not overlap
};

struct NodeStorage {
  ValuePlace value = ValuePlace::Scalar;
  int copies = 1;        // 1, or one per market where an input the markets do not share reaches the value
  int slot = -1;         // ScratchSlot: the first of its copies' slots, else -1
  int drawSlot = -1;     // a stored draw's slot, else -1 (a draw the scratch kind also stores at a cut has both)
  AdjointPlace adjoint = AdjointPlace::None;
  int adjointArray = -1;  // AdjointPlace::SharedArray: k of ds<k>
};

struct StoragePlan {
  std::vector<NodeStorage> nodes;  // per tape node
  int markets = 1;
  // config shared_inputs in effect: KernelOptions::sharedInputs, read once; the values only they (and
  // draws, constants) reach have one copy, their adjoints one per market. Empty: not in effect.
  std::vector<int> sharedInputs;
  bool marketLoop = false;       // config markets=loop in effect (register kind, sequential markets)
  bool sharedConstants = false;  // config shared_constants in effect: some values are ValuePlace::SharedArray
  int scratchSlots = 0;          // the scratch kind's slots per lane (stored bookmarks; value only too)
  int drawSlots = 0;             // config draws=stored|prefill: one slot per draw index, after scratchSlots
  std::vector<std::pair<uint32_t, int>> drawSlotOf;  // (draw index, its slot), ascending, where drawSlots > 0
  bool prefill = false;          // config draws=prefill in effect: a loop fills the draw slots before the forward sweep
  int sharedAdjointArrays = 0;   // ds0, ds1, ...
  // Per top-level segment: the adjoints whose shared array it sets (to 0, 1 for the output) before
  // its first addition (gpu/codegen/adjoint_arrays.h); empty without shared adjoint arrays.
  std::vector<std::vector<int32_t>> adjointArraysSetIn;
  int kahanSums = 0;             // per lane: markets * 2 * (1 + inputs with Greeks, else 1)
  bool kahanInLocal = false;     // config sums=local, where the workgroup's 2 * kahanSums cells fit 48 KiB
  int reductionSums = 1;         // sums the workgroup's tree adds at once (all of them when kahanInLocal)
  int localRows = 1;             // the local array tl_red's rows of workgroupSize elements
  TangentSlots tangents;         // the tangent kind with Greeks: the tangent slots each node carries
  std::vector<std::string> unused;  // the config fields that had no effect, each with why

  int laneSlots() const { return scratchSlots + drawSlots; }  // the scratch buffer's elements per lane
};

// Decides where every value and adjoint of the kernel emitKernel prints lives. Throws
// std::invalid_argument as emitKernel documents (a tape that fails validate(), a missing or
// mismatched plan, markets outside 1..8, fp64 in a dialect without it, a bad workgroup size,
// lanes or --wrt).
StoragePlan planStorage(const Tape& tape, const KernelOptions& options, const Dialect& dialect, int workgroupSize);

// The table as text (--dump): the kernel-wide choices, then one line per node whose value or adjoint is
// not a plain scalar of one copy.
std::string toText(const StoragePlan& storage, const Tape& tape);

}  // namespace tapelab
