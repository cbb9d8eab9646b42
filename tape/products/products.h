// Products recorded as tapes. Inputs of the equity products are, in order,
// spot, strike, vol, rate, maturity (EquityMarket's fields).
#pragma once
#include <functional>
#include <map>
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

// ---- The zoo: products that stress a cut strategy in different ways (tape/products/zoo.cpp).
// Sizes at the defaults (tapelab tape --product NAME --summary; the pipe is planner/liveness.h's
// pipeWidth) are listed in papers/findings.md ("The zoo") and checked by tests/tape/test_tape_zoo.cpp.

// Heston call: full-truncation Euler on log S, two correlated draws a step, max(v, 0).
// Inputs spot strike v0 kappa theta xi rho rate maturity.
Tape hestonCall(int steps);
// CEV call on a forward: Euler on dF = alpha F^beta dW (pow), kept above `floor`.
// Inputs forward strike alpha beta rate maturity.
Tape cevCall(int steps, double floor = 1e-6);
// Discretely monitored up-and-out call (GBM, monitored at each of `steps` dates): the hard
// indicator (select) when smoothing = 0, else 1/2 - tanh((S - H) / (smoothing H)) / 2.
// Inputs spot strike barrier vol rate maturity.
Tape upAndOutCall(int steps, double smoothing = 0.0);
// Fixed-strike lookback call on the running maximum (spot included), monitored at `steps` dates.
Tape lookbackCall(int steps);
// LIBOR market model, one factor, spot measure: a cap on `forwards` forwards of accrual `tau`
// (one step per period; forward k fixes at k tau). Inputs f0..f{N-1}, vol0..vol{N-1}, strike.
Tape lmmCap(int forwards, double tau = 0.25, double strike = 0.045);
// Worst-of call on `assets` correlated GBM assets: max(min_i S_i(T)/S_i(0) - K, 0).
// Inputs spot1..M, vol1..M, strike (a fraction), rate, maturity.
Tape worstOfCall(int assets, int steps, double correlation = 0.3);
// Neural SDE: dX = f(X, t) dt + sigma dW, f a tanh MLP 2 -> hidden -> hidden -> 1 whose weights
// are inputs (hidden^2 + 5 hidden + 1 of them); payoff max(X_T - K, 0).
Tape neuralSde(int steps, int hidden);
// No draws: explicit finite differences for Black-Scholes in log-space, `points` grid points
// (odd), `steps` time steps; the value at the centre (the spot). Inputs spot strike vol rate maturity.
Tape heatCall(int steps, int points);

// A product's structural parameter: what its recording depends on besides its inputs' values.
struct ProductParam {
  std::string name;
  double defaultValue;
  double lo, hi;  // accepted range, inclusive
  bool integer;
  std::string help;
};
using ProductParams = std::map<std::string, double>;

// Every product tapelab records: name, one line, its parameters, the recording.
struct ProductInfo {
  std::string name;
  std::string summary;
  std::vector<ProductParam> params;
  std::function<Tape(const ProductParams&)> record;  // every param present and in range
};
const std::vector<ProductInfo>& catalog();

// By name with parameters (missing ones take their defaults). Throws std::invalid_argument
// naming the product or the parameter (unknown, out of range, not an integer).
Tape byName(const std::string& product, const ProductParams& params);

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
