// Deterministic random tapes for experiments and property tests: the same
// (seed, options) gives the same tape everywhere (std::mt19937_64, whose output
// the standard fixes, read through our own integer mapping; no
// std::*_distribution, whose output it leaves to the library).
#pragma once
#include <cstdint>

#include "tape/tape.h"

namespace tapelab {

struct RandomTapeOptions {
  int32_t nodes = 256;   // total node count, inputs included
  int inputs = 3;        // input nodes (named x0, x1, ...)
  int draws = 16;        // randn nodes
  // Draw indices k lie in [0, drawIndices). 0: each k in [0, draws) exactly
  // once; smaller than draws forces reuse (the same draw read by several nodes).
  int drawIndices = 0;
  bool shuffleDraws = true;   // k in random order along the tape, else ascending
  bool scatterInputs = false; // inputs at random positions, else nodes 0..inputs-1
  bool kinks = true;          // ops of the Kink and Step groups (max, min, abs; lt, le, select) allowed
  // Well-conditioned: every value provably in [-100, 100] for inputs within
  // 50% of their defaults (interval arithmetic at generation time): no log or
  // sqrt near or below 0, no division by values near 0, no exp of more than 4.
  // Off ("wild"): any op on any operands; values may overflow, be NaN or Inf.
  bool wellConditioned = true;
  double reach = 6.0;          // mean distance back to an argument taken nearby
  double farProbability = 0.1; // chance an argument is any earlier node (a long-lived value)
  double constFraction = 0.08; // share of const nodes among the rest
};

// Throws std::invalid_argument for impossible options (nodes < 1, inputs or
// draws negative or more than the nodes allow, reach < 1, probabilities outside [0, 1]).
// The output is the last node; the tape passes validate().
Tape randomTape(uint64_t seed, const RandomTapeOptions& options = {});

}  // namespace tapelab
