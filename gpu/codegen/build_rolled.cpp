// The build pass's rolled segments of a register kernel (rolling.h, config loops=rolled): the template
// segment written once in a loop of the forward sweep, each trip first keeping its crossing values as a
// bookmark in a per-lane array, and once in a loop of the reverse sweep, last trip first, each recomputing
// from its bookmark and passing the adjoints of its crossing values to the trip before through carried
// adjoints. At several markets (the market loop inside each trip) the crossing values are rows of one
// per-lane array and their adjoints two rows by the trip's parity (rolledRow, below), or (config
// rolled_adjoints=copy) a fixed row each, the trip's own copied into the later one's at its end. Each trip's
// operations, and their order, are the written-out segment's: the same bits.
#include <stdexcept>

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

// Several markets (the market loop): every trip's crossing values in one per-lane array of trips + 1 rows, a
// row of `width` elements (a value the markets share one, a market's copies one each, at `offset`); the
// forward trip reads its row and writes the next, so nothing is copied from trip to trip. The adjoints of the
// crossing values in an array of two rows, the trip's parity's: a trip adds into its own row (set to 0
// where it first writes it, as the written-out segments set theirs) and reads the next trip's.
E Builder::rolledRow(const E& trip, int64_t tripConst, size_t c, Markets m, bool adjoints) const {
  if (!m.single()) throw std::logic_error("build: a rolled row is one market's element");
  const RolledSegments& r = *a_.segments;
  int64_t width = 0, offset = 0;
  for (size_t k = 0; k < r.carried.size(); ++k) {
    const int64_t n = adjoints || perMarket(r.carried[k]) ? markets_ : 1;
    if (k == c) offset = width;
    width += n;
  }
  const bool each = adjoints || perMarket(r.carried[c]);
  int64_t k = offset + (each && m.kind == Markets::Kind::One ? m.market : 0) + (trip ? 0 : tripConst * width);
  E at = trip ? bin(trip, "*", ulit(width)) : nullptr;
  const bool loop = each && m.kind == Markets::Kind::Loop;
  if (k != 0 || (!at && !loop)) at = at ? bin(at, "+", ulit(k)) : ulit(k);
  if (loop) at = at ? bin(at, "+", castUint(var("tl_m"))) : castUint(var("tl_m"));
  return index(var(adjoints ? "tl_dbm" : "tl_bm"), at);
}

void Builder::rolledSegmentsForward(Stmts& out) {
  const RolledSegments& r = *a_.segments;
  const size_t C = r.carried.size();
  if (markets_ > 1) {
    rolledSegmentsForwardMarkets(out);
    return;
  }
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

void Builder::rolledSegmentsForwardMarkets(Stmts& out) {
  const RolledSegments& r = *a_.segments;
  const size_t C = r.carried.size();
  out.push_back(comment("segments " + std::to_string(r.first) + ".." + std::to_string(r.first + r.trips - 1) +
                        " alike: one written, run in a loop; trip t reads its crossing values from row t of the "
                        "bookmarks and writes row t + 1"));
  int64_t width = 0;
  for (int32_t j : r.carried) width += perMarket(j) ? markets_ : 1;
  out.push_back(declareArray("tl_bm", static_cast<int>((r.trips + 1) * width), false));
  for (size_t c = 0; c < C; ++c)
    for (Markets m : copiesIn(r.carried[c], Markets::all()))
      out.push_back(assign(rolledRow(nullptr, 0, c, m, false), value("v", r.carried[c], m)));
  const E sg = var("tl_sg"), next = paren(bin(var("tl_sg"), "+", ulit(1)));
  for (size_t c = 0; c < C; ++c) {
    readValueAt(r.carried[c], [this, sg, c](Markets m) { return rolledRow(sg, 0, c, m, false); });
    readValueAt(r.carried[c] + r.length, [this, next, c](Markets m) { return rolledRow(next, 0, c, m, false); });
  }
  drawBase_ = r.drawShift ? bin(var("tl_sg"), "*", ulit(r.drawShift / 4)) : nullptr;
  slotBase_ = bin(var("tl_sg"), "*", ulit(r.drawShift));
  Stmts trip;
  trip.push_back(forwardSegment(r.first));
  drawBase_ = slotBase_ = nullptr;
  out.push_back(loop(Type::Uint, "tl_sg", ulit(0), bin(var("tl_sg"), "<", ulit(r.trips)), prefix("++", var("tl_sg")), true,
                     "segments " + std::to_string(r.first) + "..: " + std::to_string(r.trips) + " trips", std::move(trip)));
  clearRenames();
  for (size_t c = 0; c < C; ++c)  // the segments after: the last row
    readValueAt(r.carried[c] + r.trips * r.length,
                [this, c, t = r.trips](Markets m) { return rolledRow(nullptr, t, c, m, false); });
}

void Builder::rolledCrossingsAfter() {
  const RolledSegments& r = *a_.segments;
  for (size_t c = 0; c < r.carried.size(); ++c) {
    const int32_t j = r.carried[c] + r.trips * r.length;
    if (markets_ > 1) {
      readValueAt(j, [this, c, t = r.trips](Markets m) { return rolledRow(nullptr, t, c, m, false); });
      // the first reverse trip's later row: by parity, or row 1 (rolled_adjoints=copy)
      const int64_t p = config_.rolledAdjointsCopy ? 1 : r.trips & 1;
      readAdjointAt(j, [this, c, p](Markets m) { return rolledRow(nullptr, p, c, m, true); });
    } else {
      readValueAt(j, var(carriedValue(c)));
      readAdjointAt(j, var(carriedAdjoint(c)));
    }
  }
}

void Builder::rolledCrossingsBefore() {
  const RolledSegments& r = *a_.segments;
  for (size_t c = 0; c < r.carried.size(); ++c)
    if (markets_ > 1) readAdjointAt(r.carried[c], [this, c](Markets m) { return rolledRow(nullptr, 0, c, m, true); });
    else readAdjointAt(r.carried[c], var(carriedAdjoint(c)));
}

void Builder::rolledSegmentsReverse(Stmts& out) {
  const RolledSegments& r = *a_.segments;
  const size_t C = r.carried.size();
  if (markets_ > 1) {
    rolledSegmentsReverseMarkets(out);
    return;
  }
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

void Builder::rolledSegmentsReverseMarkets(Stmts& out) {
  const RolledSegments& r = *a_.segments;
  const size_t C = r.carried.size();
  Stmts trip;
  trip.push_back(declare(Type::Uint, "tl_sg", bin(ulit(r.trips - 1), "-", var("tl_sr")), true));
  clearRenames();
  // The adjoints' rows: by the trip's parity, or (config rolled_adjoints=copy) row 0 the trip's own and row 1
  // the later trip's, the own row copied into row 1 at the trip's end for the trip before.
  const bool copy = config_.rolledAdjointsCopy;
  const E sg = var("tl_sg"), own = copy ? nullptr : paren(bin(var("tl_sg"), "&", ulit(1))),
          later = copy ? nullptr : paren(bin(paren(bin(var("tl_sg"), "+", ulit(1))), "&", ulit(1)));
  for (size_t c = 0; c < C; ++c) {
    readValueAt(r.carried[c], [this, sg, c](Markets m) { return rolledRow(sg, 0, c, m, false); });
    readAdjointAt(r.carried[c], [this, own, c](Markets m) { return rolledRow(own, 0, c, m, true); });
    // the later trip's row: by its parity (row 1 read only where `later` is null: rolled_adjoints=copy)
    readAdjointAt(r.carried[c] + r.length, [this, later, c](Markets m) { return rolledRow(later, 1, c, m, true); });
  }
  drawBase_ = r.drawShift ? bin(var("tl_sg"), "*", ulit(r.drawShift / 4)) : nullptr;
  slotBase_ = bin(var("tl_sg"), "*", ulit(r.drawShift));
  const int S = options_.plan.segments();
  nextBlock_ = static_cast<size_t>(S - 1 - r.first);
  const ScheduleBlock& b = a_.schedule->blocks[static_cast<size_t>(S - 1 - r.first)];
  // The template's first-written adjoint arrays are its crossing values' (rolling.cpp checks): set in its row.
  reverseBlock(b, "segment " + std::to_string(r.first) + " + tl_sg", trip);
  drawBase_ = slotBase_ = nullptr;
  if (copy) {
    Stmts copies;
    for (size_t c = 0; c < C; ++c)
      copies.push_back(assign(rolledRow(nullptr, 1, c, Markets::loop(), true), rolledRow(nullptr, 0, c, Markets::loop(), true)));
    trip.push_back(comment("the trip's own adjoint row, the trip before's later row"));
    trip.push_back(marketLoop(std::move(copies)));
  }
  out.push_back(loop(Type::Uint, "tl_sr", ulit(0), bin(var("tl_sr"), "<", ulit(r.trips)), prefix("++", var("tl_sr")), true,
                     "segments " + std::to_string(r.first + r.trips - 1) + ".." + std::to_string(r.first) + ", last first",
                     std::move(trip)));
}

}  // namespace tapelab::build
