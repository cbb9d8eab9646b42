#include "gpu/codegen/recompute.h"


namespace tapelab {

namespace {

// Marks the arguments of every needed node of [from, to), descending.
void markArguments(const Tape& tape, std::vector<uint8_t>& needed, int32_t from, int32_t to) {
  for (int32_t i = to - 1; i >= from; --i) {
    if (!needed[i]) continue;
    forEachArg(tape, i, [&](int32_t j) { needed[j] = 1; });
  }
}

// The values a leaf's adjoint rules read, and what recomputing them reads (within [from, end) or imported).
std::vector<uint8_t> neededInLeaf(const Tape& tape, const ScheduleBlock& b, const StoragePlan& storage) {
  auto hasAdjoint = [&](int32_t j) { return storage.nodes[j].adjoint != AdjointPlace::None; };
  std::vector<uint8_t> needed(tape.size(), 0);
  for (int32_t i = b.begin; i < b.end; ++i) {
    if (!hasAdjoint(i) || arity(tape.op[i]) == 0) continue;
    const OpInfo& op = info(tape.op[i]);
    for (int k = 0; k < op.arity; ++k) {
      const std::string_view rule = op.adjoint(k);
      if (!contributes(rule) || !hasAdjoint(tape.arg(i, k))) continue;
      if (mentions(rule, "a")) needed[tape.a[i]] = 1;
      if (mentions(rule, "b")) needed[tape.b[i]] = 1;
      if (mentions(rule, "c")) needed[tape.c[i]] = 1;
      if (mentions(rule, "r")) needed[i] = 1;
    }
  }
  markArguments(tape, needed, b.from, b.end);
  return needed;
}

void add(RecomputeLists& lists, const Tape& tape, const ScheduleBlock& b, const StoragePlan& storage) {
  BlockRecompute r;
  r.from = b.from;
  switch (b.kind) {
    case ScheduleBlock::Kind::Leaf:
      r.to = b.end;
      if (b.perValue) {  // exactly the schedule's list, and the kept values it or the adjoint rules read
        r.needed.assign(tape.size(), 0);
        for (int32_t j : b.recompute) r.needed[j] = 1;
        for (int32_t j : b.imports) r.needed[j] = 1;
        break;
      }
      r.needed = neededInLeaf(tape, b, storage);
      break;
    case ScheduleBlock::Kind::Inner:
      r.to = b.advanceEnd;
      r.needed.assign(tape.size(), 0);
      for (int32_t j : b.bookmarks) r.needed[j] = 1;
      markArguments(tape, r.needed, b.from, b.advanceEnd);
      break;
    case ScheduleBlock::Kind::Chain: r.to = b.from; break;
  }
  lists.blocks.push_back(std::move(r));
}

}  // namespace

RecomputeLists recomputeLists(const Tape& tape, const Schedule& schedule, const StoragePlan& storage) {
  RecomputeLists lists;
  forEachBlock(schedule.blocks, [&](const ScheduleBlock& b) { add(lists, tape, b, storage); });
  return lists;
}

std::string toText(const RecomputeLists& lists) {
  std::string s;
  for (size_t k = 0; k < lists.blocks.size(); ++k) {
    const BlockRecompute& b = lists.blocks[k];
    s += "block " + std::to_string(k) + ": [" + std::to_string(b.from) + ", " + std::to_string(b.to) + ") recomputes";
    int count = 0;
    for (int32_t i = b.from; i < b.to && !b.needed.empty(); ++i)
      if (b.needed[i]) {
        s += " " + std::to_string(i);
        ++count;
      }
    s += count == 0 ? " nothing\n" : "\n";
  }
  return s;
}

}  // namespace tapelab
