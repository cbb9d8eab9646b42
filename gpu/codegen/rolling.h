// The loops pass (config loops=rolled): whether a forward-only kernel writes the tape's time loop
// (planner/loops.h) once and runs it, and how.
//
// The loop's body is spelled from `unroll` consecutive iterations of the tape, starting at iteration
// `templateStart`: unroll is the fewest iterations whose draws fill whole Philox calls (4 draws), so each
// call and Box-Muller pair is computed once per trip, as a straight-line block computes them. What one trip
// leaves to the next, or to the nodes after the loop, lives in a carried variable per body offset
// (`exported`), set before the loop to its initial value (the node iteration 0 reads) and at each trip's
// end. The first `iterations` iterations run in the loop; the rest, and the nodes after, are written out
// and read the carried variables where they read the loop's last iteration. Every node keeps its op and
// its operands' values, so the kernel returns the bits of the kernel with every step written out.
//
// With config loop_trip=step the body is one iteration, its draws computed as a hand-written loop does
// (`stepwise`): only where each iteration's draws are read in order, consecutive, and the loop's first
// draw starts a Philox call; else trips of whole calls, saying why.
//
// It rolls only where every iteration from templateStart - 1 on has the same copies per market and the
// same tangent slots (a value's shape, the same each trip); else it says why not, and the kernel is
// written out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/codegen/storage.h"
#include "planner/loops.h"
#include "planner/schedule.h"
#include "tape/tape.h"

namespace tapelab {

struct RolledLoop {
  bool rolled = false;
  std::string whyNot;            // when config loops=rolled asked and it is not rolled (configUnused)
  TapeLoop loop;
  int32_t unroll = 1;            // tape iterations per trip
  int32_t templateStart = 1;     // the body is spelled from iterations [templateStart, templateStart + unroll)
  int32_t iterations = 0;        // iterations run in the loop (a multiple of unroll); trips = iterations / unroll
  std::vector<int32_t> exported;  // body offsets with a carried variable, ascending
  // config loop_trip=step: one iteration a trip (unroll 1) though its draws do not fill whole Philox calls;
  // the call and the Box-Muller pair are computed in the trips whose draw starts them and carried (draws.h).
  bool stepwise = false;
  std::string stepWhyNot;         // loop_trip=step asked and not in effect: why (configUnused)

  int32_t trips() const { return iterations / unroll; }
  bool isExported(int32_t offset) const;
};

RolledLoop planRolling(const Tape& tape, const KernelOptions& options, const StoragePlan& storage);

// The same for a register kernel (config loops=rolled): the plan's segments that repeat, each the one before
// it shifted by `length` nodes (the periodic strategy's middle segments), written once and run `trips` times,
// forward and in reverse. What crosses into the first of them (`carried`, its crossing values: each trip's
// value of them is a bookmark, kept in a per-lane array for the reverse loop) crosses into each, shifted;
// what its draws read, likewise (`drawShift` draws a trip; with draws=stored, as many scratch slots). The
// segments before and after stay written out. At several markets (config markets=loop: the market loop
// inside each trip) every trip's crossing values are a row of one per-lane array and their adjoints two rows
// by the trip's parity (build_rolled.cpp); without the market loop the segments stay written out. The same
// operations in the same order as the kernel with every segment written out: the same bits.
struct RolledSegments {
  bool rolled = false;
  std::string whyNot;
  int first = 0;                  // the first rolled segment: the template
  int trips = 0;                  // segments first .. first + trips - 1
  int32_t length = 0;             // nodes a segment: the shift from one trip to the next
  int64_t drawShift = 0;          // draws a trip (a multiple of 4: whole Philox calls)
  std::vector<int32_t> carried;   // the template's crossing values from before it, ascending (trip m: + m * length)
};

RolledSegments planRolledSegments(const Tape& tape, const KernelOptions& options, const StoragePlan& storage,
                                  const Schedule* schedule);

std::string toText(const RolledSegments& rolled);

std::string toText(const RolledLoop& rolled, const Tape& tape);

}  // namespace tapelab
