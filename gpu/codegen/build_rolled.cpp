// The build pass's rolled segments of a register kernel (rolling.h, config loops=rolled): the template
// segment written once in a loop of the forward sweep, each trip first keeping its crossing values as a
// bookmark in a per-lane array, and once in a loop of the reverse sweep, last trip first, each recomputing
// from its bookmark and passing the adjoints of its crossing values to the trip before through carried
// adjoints. Each trip's operations, and their order, are the written-out segment's: the same bits.
#include "gpu/codegen/build.h"
#include "planner/plan.h"

namespace tapelab::build {

using namespace ir;

int Builder::rolledCrossing(int32_t j) const {
  const RolledSegments& r = *a_.segments;
  for (int32_t c : r.carried) {
    const int32_t shift = j - c;
    if (shift >= 0 && shift % r.length == 0 && shift / r.length <= r.trips) return shift == 0 ? -1 : shift / r.length;
  }
  return 0;
}

E Builder::drawSlot(int slot) const { return slotBase_ ? paren(bin(ulit(slot), "+", slotBase_)) : ulit(slot); }

namespace {
// The bookmark of trip `trip` (a U expression), carried value c of `count`.
E bookmark(const E& trip, size_t c, size_t count) {
  return index(var("tl_bm"), bin(bin(trip, "*", ulit(static_cast<int64_t>(count))), "+", ulit(static_cast<int64_t>(c))));
}
}  // namespace

void Builder::rolledSegmentsForward(Stmts& out) {
  const RolledSegments& r = *a_.segments;
  const size_t C = r.carried.size();
  out.push_back(comment("segments " + std::to_string(r.first) + ".." + std::to_string(r.first + r.trips - 1) +
                        " alike: one written, run in a loop; each trip's crossing values kept as its bookmark"));
  out.push_back(declareArray("tl_bm", static_cast<int>(r.trips * C), false));
  for (size_t c = 0; c < C; ++c) out.push_back(declareT(carriedValue(c), value("v", r.carried[c], Markets::one(0))));
  Stmts trip;
  for (size_t c = 0; c < C; ++c) {
    trip.push_back(assign(bookmark(var("tl_sg"), c, C), var(carriedValue(c))));
    trip.push_back(declareT("vn" + std::to_string(c)));
    readValueAt(r.carried[c], var(carriedValue(c)));
    readValueAt(r.carried[c] + r.length, var("vn" + std::to_string(c)));
  }
  drawBase_ = r.drawShift ? bin(var("tl_sg"), "*", ulit(r.drawShift / 4)) : nullptr;
  slotBase_ = bin(var("tl_sg"), "*", ulit(r.drawShift));
  trip.push_back(forwardSegment(r.first));
  drawBase_ = slotBase_ = nullptr;
  for (size_t c = 0; c < C; ++c) trip.push_back(assign(var(carriedValue(c)), var("vn" + std::to_string(c))));
  out.push_back(loop(Type::Uint, "tl_sg", ulit(0), bin(var("tl_sg"), "<", ulit(r.trips)), prefix("++", var("tl_sg")), true,
                     "segments " + std::to_string(r.first) + "..: " + std::to_string(r.trips) + " trips", std::move(trip)));
  // The segments after: what crosses into them is what the last trip left.
  clearRenames();
  for (size_t c = 0; c < C; ++c) readValueAt(r.carried[c] + r.trips * r.length, var(carriedValue(c)));
}

void Builder::rolledSegmentsReverse(Stmts& out) {
  const RolledSegments& r = *a_.segments;
  const size_t C = r.carried.size();
  const int S = options_.plan.segments();
  Stmts trip;
  // Trip tl_sg = trips - 1 - tl_sr: the segments last to first.
  trip.push_back(declare(Type::Uint, "tl_sg", bin(ulit(r.trips - 1), "-", var("tl_sr")), true));
  clearRenames();
  for (size_t c = 0; c < C; ++c) {
    trip.push_back(declareT("dci" + std::to_string(c), literal(0.0)));
    readValueAt(r.carried[c], bookmark(var("tl_sg"), c, C));              // recomputed from the bookmark
    readAdjointAt(r.carried[c], var("dci" + std::to_string(c)));           // what crosses in: its adjoint, from 0
    readAdjointAt(r.carried[c] + r.length, var(carriedAdjoint(c)));        // what crosses out: the later trip's
  }
  drawBase_ = r.drawShift ? bin(var("tl_sg"), "*", ulit(r.drawShift / 4)) : nullptr;
  slotBase_ = bin(var("tl_sg"), "*", ulit(r.drawShift));
  nextBlock_ = static_cast<size_t>(S - 1 - r.first);  // the template's entry of the recompute lists
  const ScheduleBlock& b = a_.schedule->blocks[static_cast<size_t>(S - 1 - r.first)];
  reverseBlock(b, "segment " + std::to_string(r.first) + " + tl_sg", trip);
  drawBase_ = slotBase_ = nullptr;
  for (size_t c = 0; c < C; ++c) trip.push_back(assign(var(carriedAdjoint(c)), var("dci" + std::to_string(c))));
  out.push_back(loop(Type::Uint, "tl_sr", ulit(0), bin(var("tl_sr"), "<", ulit(r.trips)), prefix("++", var("tl_sr")), true,
                     "segments " + std::to_string(r.first + r.trips - 1) + ".." + std::to_string(r.first) + ", last first",
                     std::move(trip)));
}

}  // namespace tapelab::build
