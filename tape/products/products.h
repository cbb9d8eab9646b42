// Products recorded as tapes. Inputs of the equity products are, in order,
// spot, strike, vol, rate, maturity (EquityMarket's fields).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tape/tape.h"

namespace tapelab {

struct EquityMarket {
  double spot, strike, vol, rate, maturity;
  static EquityMarket atmOneYear() { return {100.0, 100.0, 0.20, 0.03, 1.0}; }
};

namespace products {

// European call on one GBM asset simulated over `steps` steps.
Tape europeanCall(int steps, const EquityMarket& m = EquityMarket::atmOneYear());

// Arithmetic-average Asian call, the article's layout: 5 inputs, 10 set-up
// nodes, 6 per step (draw, *vol*sqrt(dt), +drift, exp, *spot, +sum), 9 payoff
// nodes: 15 + 6*steps + 9 nodes (1,536 at 252 steps).
Tape asianCall(int steps, const EquityMarket& m = EquityMarket::atmOneYear());

// Call on the equally weighted average of `assets` GBM assets at maturity,
// correlated by `correlation` (all pairs; Cholesky by Eigen at record time).
// Inputs: spot1..spotM, strike, vol1..volM, rate, maturity. Per-step state is
// M running spots: the wide-bookmark product.
Tape basketCall(int assets, int steps, double correlation = 0.5,
                const EquityMarket& m = EquityMarket::atmOneYear());

// A product as a recipe: records its tape for a number of steps.
struct Product {
  std::string name;
  std::function<Tape(int steps)> record;
  int defaultSteps = 252;
};
Product europeanCall();
Product asianCall();
Product basketCall(int assets);

// By name: "european", "asian", "basket". Throws std::invalid_argument.
Tape byName(const std::string& product, int steps, int assets = 5);

}  // namespace products
}  // namespace tapelab
