// What a plan means for a kernel's reverse sweep, spelled once for every engine.
//
// A checkpointed kernel runs the forward sweep once (one block per top-level
// segment; the plan's persistent values survive it), then reverses the
// top-level segments last first. lowerPlan turns the plan's cut tree into the
// nested blocks of that reverse sweep; the reference interpreter runs them, the
// GPU and cpu-jit emitters print them. A block of segment X = [begin, end):
//   leaf      recomputes the nodes [from, end) from its imports (values computed
//             before `from`, read from an enclosing block's bookmarks or from the
//             persistent values), then runs the adjoint rules of [begin, end)
//             in descending order. from == begin, except for the sub-segments of
//             a chain, which recompute from the chain's start.
//   inner     (X is cut again, not a chain) recomputes [begin, advanceEnd) =
//             up to its last cut, keeping `bookmarks`: the values computed there
//             that a later sub-segment reads and no enclosing block already
//             holds. Then its children run, last sub-segment first, each reading
//             its imports from those bookmarks or from further out.
//   chain     (X is cut again as a chain) holds no bookmarks; its children are
//             leaves that each recompute from X's start.
// Each block declares the adjoints whose whole life (from the last reader's
// reversal to the node's own) falls inside it and not inside one child; the
// persistent values' adjoints (and the Greeks) live for the whole kernel, as far as
// the schedule says: an emitter may give two of them one storage where it can
// show their uses do not overlap (the GPU emitter's market loop does).
// A flat plan lowers to one leaf per segment: the kernels checkpointing has
// always had.
//
// A per-value plan (planner/plan.h) lowers to one leaf per block, each with
// perValue set: it recomputes exactly `recompute` (ascending: the values its
// adjoint rules read that are not kept, and what those need, stopping at kept
// values; some may lie before `begin`, from = the first of them), imports every
// kept value that list or its adjoint rules read (importDepth 0), and runs the
// adjoint rules of [begin, end). A segment plan's leaf would recompute the same
// list (its crossing values are kept); its range form stays for the emitters
// that print ranges.
//
// Every list is in terms of the tape's structure (every node of a range is
// recomputed); an emitter may skip nodes no adjoint rule needs, since the
// imports and bookmarks listed are a superset of what it then reads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "planner/plan.h"

namespace tapelab {

struct ScheduleBlock {
  enum class Kind { Leaf, Inner, Chain };
  Kind kind = Kind::Leaf;
  int depth = 1;        // 1: a top-level segment; its sub-segments 2, and so on
  int32_t from = 0;     // first node this block recomputes (<= begin)
  int32_t begin = 0;    // the segment [begin, end)
  int32_t end = 0;
  int32_t advanceEnd = 0;  // inner: recompute [from, advanceEnd); leaf: end; chain: from (nothing)
  // Values computed before `from` that the block's recompute reads, sorted, and
  // for each the depth of the block that holds it (0: a persistent value).
  std::vector<int32_t> imports;
  std::vector<int> importDepth;
  std::vector<int32_t> bookmarks;        // inner: held for the children, sorted
  std::vector<int32_t> adjoints;         // declared (zero) here, sorted
  std::vector<ScheduleBlock> children;   // inner, chain: in run order (last first)
  // A per-value plan's leaf: recomputes `recompute` only (ascending), every other value it reads
  // being an import (a kept value, at any position).
  bool perValue = false;
  std::vector<int32_t> recompute;

  bool leaf() const { return kind == Kind::Leaf; }
};

struct Schedule {
  std::vector<ScheduleBlock> blocks;     // the top-level segments, in run order (last first)
  std::vector<int32_t> kernelAdjoints;   // kernelAdjointsOf: live for the whole kernel, sorted
  int depth = 0;                         // deepest block (1 for a flat plan)
};

// The values the adjoint rules of nodes [begin, end) read (tape/op.h adjointReads), and what
// recomputing them needs, stopping at the nodes `held` marks: what a per-value block recomputes,
// ascending.
std::vector<int32_t> recomputeClosure(const Tape& tape, int32_t begin, int32_t end, const std::vector<uint8_t>& held);

// The adjoints a checkpointed kernel holds for its whole reverse sweep, sorted: the persistent values'
// and, in a per-value plan, every value read after the end of its own block (a crossing value not kept:
// its adjoint is added to by a later block's rules and read by its own block's). No block declares them.
std::vector<int32_t> kernelAdjointsOf(const Tape& tape, const Plan& plan);
// Throws std::invalid_argument when `plan` is not a checkpointed plan of `tape`
// (also when a block reads a value that neither the persistent set nor an
// enclosing block holds: a plan whose derived fields were edited).
Schedule lowerPlan(const Tape& tape, const Plan& plan);

// The blocks as indented lines: kind, range, what each imports, keeps and declares (--dump).
std::string toText(const Schedule& schedule);

// Calls f(block) for every block of the schedule in run order (a parent before its children).
template <class F>
void forEachBlock(const std::vector<ScheduleBlock>& blocks, F&& f) {
  for (const ScheduleBlock& b : blocks) {
    f(b);
    forEachBlock(b.children, f);
  }
}

}  // namespace tapelab
