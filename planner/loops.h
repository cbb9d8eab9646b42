// The time loop a tape's recording unrolled: a run of nodes that repeats with a fixed period.
//
// A product steps its model in a loop; its tape is that loop written out, step after step. findLoop
// recovers it from the nodes alone (no product knows of it): iterations k = 0 .. count-1 of `period`
// nodes from `begin`, node begin + k*period + o having the same op (and constant) for every k, a draw's
// index growing by `drawStride` per iteration, and each argument either
//   local      a node of the same iteration (at an earlier offset),
//   carried    the node at some offset of the previous iteration (iteration 0: one fixed node before
//              `begin`, the carried value's initial value),
//   invariant  one fixed node before `begin`, the same in every iteration.
// Nodes after the loop read only its last iteration (the loop shortens until they do). An emitter may
// then write the loop once and run it `count` times (gpu/codegen's loops pass): the same operations in the
// same order, so the same bits.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tape/tape.h"

namespace tapelab {

struct TapeLoop {
  enum class Arg : uint8_t { None, Local, Carried, Invariant };
  struct BodyNode {
    std::array<Arg, 3> kind{Arg::None, Arg::None, Arg::None};
    // Local, Carried: the argument's offset in its iteration; Invariant: the node it reads.
    std::array<int32_t, 3> ref{-1, -1, -1};
  };
  int32_t begin = 0;
  int32_t period = 0;
  int32_t count = 0;       // iterations; a tape without a loop has count 0
  int64_t drawStride = 0;  // a draw's index grows by this per iteration
  std::vector<BodyNode> body;    // per offset
  std::vector<int32_t> initOf;   // per offset: the node iteration 0 reads where later ones read this offset (-1)

  bool found() const { return count >= 2; }
  int32_t end() const { return begin + period * count; }
  int32_t node(int32_t iteration, int32_t offset) const { return begin + iteration * period + offset; }
  bool contains(int32_t j) const { return found() && j >= begin && j < end(); }
};

// The longest loop of at least `minCount` iterations (count 0 when there is none). Linear in the tape
// times a handful of candidate periods (the most frequent distances between nodes of one op).
TapeLoop findLoop(const Tape& tape, int32_t minCount = 4);

// "begin B, period P, count N, draw stride D" and one line per offset (--dump).
std::string toText(const TapeLoop& loop, const Tape& tape);

}  // namespace tapelab
