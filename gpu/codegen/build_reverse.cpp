// The build pass's reverse sweep of a checkpointed kernel: the schedule's blocks (planner/schedule.h),
// each recomputing what the liveness pass (recompute.h) says from its imports, then running its nodes'
// adjoint rules in descending order.
#include <algorithm>

#include "gpu/codegen/build.h"
#include "planner/plan.h"

namespace tapelab::build {

using namespace ir;

void Builder::reverseSweep(Stmts& out) {
  const Plan& plan = options_.plan;
  const RolledSegments* rolled = a_.segments && a_.segments->rolled ? a_.segments : nullptr;
  out.push_back(comment(plan.perValue ? "reverse sweep: blocks last to first, each recomputing its list from the kept values"
                                      : "reverse sweep: segments last to first, each recomputed from its bookmarks"));
  for (int k = 0; k < s_.sharedAdjointArrays; ++k)
    out.push_back(withNote(declareArray("ds" + std::to_string(k), markets_, false), "set where first written"));
  for (int32_t j : a_.schedule->kernelAdjoints) {  // the persistent values' (and a per-value plan's crossing ones)
    if (rolled && rolledCrossing(j) != 0) continue;  // a rolled crossing value's adjoint: the carried adjoint
    const AdjointPlace place = s_.nodes[j].adjoint;
    if (place == AdjointPlace::None || place == AdjointPlace::SharedArray) continue;
    const bool array = place == AdjointPlace::LaneArray;
    if (array) out.push_back(declareArray("d" + std::to_string(j), markets_, false));
    for (int m = 0; m < markets_; ++m) {
      const E d = adjoint(j, Markets::one(m));
      out.push_back(array ? assign(d, adjointSeed(j)) : declareAdjoint(d, adjointSeed(j)));
    }
  }
  if (rolled) {  // the blocks after the rolled ones read what crosses into them as the loops left it
    if (markets_ > 1)  // rows of the trips' parities (build_rolled.cpp), each set where first written
      out.push_back(declareArray("tl_dbm", static_cast<int>(2 * rolled->carried.size()) * markets_, false));
    else
      for (size_t c = 0; c < rolled->carried.size(); ++c)
        out.push_back(declareT(carriedAdjoint(c), adjointSeed(rolled->carried[c] + rolled->trips * rolled->length)));
    rolledCrossingsAfter();
  }
  int segment = plan.segments();
  for (const ScheduleBlock& b : a_.schedule->blocks) {
    --segment;
    if (rolled && segment >= rolled->first && segment < rolled->first + rolled->trips) {
      if (segment != rolled->first + rolled->trips - 1) continue;
      rolledSegmentsReverse(out);  // every rolled segment, last first
      clearRenames();  // the blocks before read the first trip's crossing adjoints as the loop left them
      rolledCrossingsBefore();
      nextBlock_ = static_cast<size_t>(plan.segments() - rolled->first);
      continue;
    }
    reverseBlock(b, "segment " + std::to_string(segment), out);
  }
  clearRenames();
}

// The reverse sweep's blocks (planner/schedule.h). A top-level leaf is the flat kernels' segment block;
// deeper blocks name their values by depth ("w2_17", bookmarks "k2_17") and key their opaque identity and
// draws with their own zero multiple, so that no compiler merges the recompute of two blocks (siblings
// recompute the same nodes from the same imports).
void Builder::reverseBlock(const ScheduleBlock& b, const std::string& label, Stmts& out) {
  const BlockRecompute& lists = a_.recompute->blocks.at(nextBlock_++);
  const std::string prefix = b.depth == 1 ? "w" : "w" + std::to_string(b.depth) + "_";
  std::string heading = label;
  if (b.depth > 1 || !b.leaf()) heading += ": nodes [" + std::to_string(b.begin) + ", " + std::to_string(b.end) + ")";
  if (b.from < b.begin) heading += ", recomputed from " + std::to_string(b.from);
  if (b.kind == ScheduleBlock::Kind::Inner) heading += ", cut again with bookmarks";
  if (b.kind == ScheduleBlock::Kind::Chain) heading += ", a chain: each part recomputed from the start";
  Stmts body;
  E key = zeroKey();
  if (b.depth > 1 || !b.leaf()) {
    const std::string name = "tl_z" + std::to_string(++blockKeys_);
    body.push_back(declare(Type::Uint, name,
                           config_.opaque ? bin(paren(bin(var("tl_j"), "&", param("zero"))), "*", ulit(blockKeys_ + 1)) : ulit(0),
                           true));
    key = var(name);
  }
  switch (b.kind) {
    case ScheduleBlock::Kind::Leaf: {
      if (sequential_) {  // what no market owns (the draws) once, then each market's recompute and reverse
        recompute(b, lists.needed, b.end, prefix, key, Markets::sharedOnly(), body);
        const bool loop = s_.marketLoop && b.depth == 1;  // the markets as one rolled loop (top-level leaves)
        for (int m = 0; m < (loop ? 1 : markets_); ++m) {
          const Markets market = loop ? Markets::loop() : Markets::one(m);
          Stmts inner;
          if (loop)
            for (int32_t j : adjointsFirstWrittenIn(b)) {  // an adjoint's element: its first term may take its place
              Stmt set = assign(adjoint(j, market), adjointSeed(j));
              set.adjoint = true;
              inner.push_back(std::move(set));
            }
          recompute(b, lists.needed, b.end, prefix, key, market, inner);
          declareAdjoints(b, market, inner);
          for (int32_t i = b.end - 1; i >= b.begin; --i) reverseRule(i, prefix, market, inner);
          body.push_back(loop ? marketLoop(std::move(inner)) : block("market " + std::to_string(m), std::move(inner)));
        }
        break;
      }
      recompute(b, lists.needed, b.end, prefix, key, Markets::all(), body);
      declareAdjoints(b, Markets::all(), body);
      for (int32_t i = b.end - 1; i >= b.begin; --i) reverseRule(i, prefix, Markets::all(), body);
      break;
    }
    case ScheduleBlock::Kind::Inner: {
      const std::string bookmark = "k" + std::to_string(b.depth) + "_";
      for (int32_t j : b.bookmarks)
        for (Markets m : copiesIn(j, Markets::all())) body.push_back(declareT(valueName(bookmark, j, m)));
      Stmts keep;
      recompute(b, lists.needed, b.advanceEnd, prefix, key, Markets::all(), keep);
      for (int32_t j : b.bookmarks)
        for (Markets m : copiesIn(j, Markets::all())) keep.push_back(assign(value(bookmark, j, m), value(prefix, j, m)));
      body.push_back(block("recompute [" + std::to_string(b.from) + ", " + std::to_string(b.advanceEnd) +
                               "), keeping the bookmarks",
                           std::move(keep)));
      declareAdjoints(b, Markets::all(), body);
      for (const ScheduleBlock& c : b.children) reverseBlock(c, "part", body);
      break;
    }
    case ScheduleBlock::Kind::Chain:
      declareAdjoints(b, Markets::all(), body);
      for (const ScheduleBlock& c : b.children) reverseBlock(c, "part", body);
      break;
  }
  out.push_back(block(heading, std::move(body)));
}

// Recomputes the needed nodes of [b.from, to) from the block's imports: the persistent values (those with
// a scratch slot: from the buffer) or an enclosing block's bookmarks; a per-value leaf's imports are kept
// values anywhere in the tape, read through the opaque identity and never recomputed. `which`: every copy, only the values
// no market owns (one copy: draws, constants), or one market's copies of the values with a copy per market.
void Builder::recompute(const ScheduleBlock& b, const std::vector<uint8_t>& needed, int32_t to, const std::string& prefix,
                        const E& key, Markets which, Stmts& out) const {
  auto wanted = [&](int32_t j) {
    return needed[j] && (which.kind == Markets::Kind::All || (which.kind == Markets::Kind::SharedOnly) == !perMarket(j));
  };
  bool draws = false;
  for (int32_t i = b.from; i < to; ++i) draws = draws || (wanted(i) && tape_.op[i] == Op::Randn && s_.nodes[i].drawSlot < 0);
  if (draws)
    out.push_back(line({declare(Type::Uint, "tl_rk0", bin(param("seedLo"), "^", key)),
                        declare(Type::Uint, "tl_rk1", bin(param("seedHi"), "^", key))}));
  for (size_t k = 0; k < b.imports.size(); ++k) {
    const int32_t j = b.imports[k];
    if (!wanted(j)) continue;
    const int holder = b.importDepth[k];
    for (Markets m : copiesIn(j, which)) {
      if (holder == 0 && s_.nodes[j].slot >= 0)
        out.push_back(declareT(valueName(prefix, j, m), scratchAt(scratchLoad(j, m))));
      else
        out.push_back(declareT(valueName(prefix, j, m), opq(value(holder == 0 ? "v" : "k" + std::to_string(holder) + "_", j, m), key)));
    }
  }
  Stmts nodes;
  for (int32_t i = b.from; i < to; ++i) {
    if (!wanted(i) || (b.perValue && options_.plan.isPersistent[i])) continue;  // a kept value: imported above
    if (const int slot = s_.nodes[i].drawSlot; slot >= 0) {  // the forward sweep's draw, read back (an opaque address)
      nodes.push_back(declareT(valueName(prefix, i, Markets::one(0)), scratchAt(slotLoad(drawSlot(slot), zeroKey()))));
      continue;
    }
    for (Markets m : copiesIn(i, which)) {
      Stmt s = declareT(valueName(prefix, i, m), forwardExpr(i, m, prefix));
      nodes.push_back(tape_.op[i] == Op::Randn ? readsDraw(std::move(s), static_cast<int64_t>(tape_.imm[i])) : std::move(s));
    }
  }
  Stmt scope = drawScope(prefix, "tl_rk", std::move(nodes));
  scope.drawBase = drawBase_;
  out.push_back(std::move(scope));
}

// The shared adjoint arrays top-level segment b sets before its first addition (adjoint_arrays.h).
std::vector<int32_t> Builder::adjointsFirstWrittenIn(const ScheduleBlock& b) const {
  if (s_.adjointArraysSetIn.empty()) return {};
  const auto& bounds = options_.plan.bounds;
  return s_.adjointArraysSetIn[std::lower_bound(bounds.begin(), bounds.end(), b.begin) - bounds.begin()];
}

void Builder::declareAdjoints(const ScheduleBlock& b, Markets only, Stmts& out) const {
  for (int32_t i : b.adjoints)
    if (hasAdjoint(i))
      for (Markets m : adjointCopiesIn(only)) out.push_back(declareAdjoint(adjoint(i, m), literal(0.0)));
}

}  // namespace tapelab::build
