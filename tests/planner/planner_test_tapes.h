// Tapes the planner tests share: every product at a few sizes, and seeded random tapes.
#pragma once
#include <string>
#include <vector>

#include "tape/products/products.h"
#include "tape/random_tape.h"

namespace tapelab::plannertest {

inline std::vector<Tape> productTapes() {
  std::vector<Tape> tapes;
  for (int steps : {1, 7, 50, 252}) {
    tapes.push_back(products::europeanCall(steps));
    tapes.push_back(products::asianCall(steps));
  }
  for (int assets : {1, 3, 5}) tapes.push_back(products::basketCall(assets, 20));
  tapes.push_back(products::basketCall(5, 60));
  return tapes;
}

// Random tapes of several shapes: narrow and wide liveness, reused and
// out-of-order draws, scattered inputs, with and without kinks.
inline std::vector<Tape> randomTapes(int count, int32_t nodes, uint64_t seed0 = 1) {
  std::vector<Tape> tapes;
  for (int k = 0; k < count; ++k) {
    const uint64_t seed = seed0 + static_cast<uint64_t>(k);
    RandomTapeOptions o;
    o.nodes = nodes + static_cast<int32_t>(k * 7 % 13);
    o.inputs = 1 + k % 4;
    o.draws = std::min<int>(o.nodes - o.inputs, 2 + k % 9);
    o.drawIndices = k % 3 == 0 ? 3 : 0;
    o.shuffleDraws = k % 2 == 0;
    o.scatterInputs = k % 4 == 1;
    o.kinks = k % 5 != 0;
    o.reach = 1.5 + k % 6;
    o.farProbability = 0.05 * (k % 4);
    tapes.push_back(randomTape(seed, o));
  }
  return tapes;
}

}  // namespace tapelab::plannertest
