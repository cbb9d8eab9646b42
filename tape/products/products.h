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

// ---- Wide products: many inputs, one reverse sweep for every Greek (tape/products/wide.cpp).

// The Asian call (asianCall's arithmetic) with one vol input per time bucket: step i is in bucket
// i * buckets / steps. Inputs spot strike vol1..volB rate maturity. With every bucket at one vol the
// value has the Asian's bits and the bucket vegas sum to its vega.
Tape bucketedAsian(int steps, int buckets);
// European call under local volatility: log-Euler on S with sigma(S, t) on a strikes x times grid
// (log-moneyness log(K/100) evenly on [-1, 1], times at fractions of the maturity), linear in time
// between columns (weights fixed when recording) and in log-moneyness as a sum of ramps
// min(1, max((x - x_j) / h, 0)) (sub, mul, max, min; flat outside the grid). Inputs spot strike rate
// maturity, then vol_tK_xJ (time K, strike J). A flat surface is Black-Scholes.
Tape localVolCall(int steps, int strikes, int times);
// A basket of `assets` Heston assets shaped like STAC-A2's problem: per asset spotI v0_I kappaI thetaI
// xiI rhoI (spot-variance correlation), the assets' correlations corrI_J (I < J; their Cholesky factor
// is recorded, so each has a Greek), strike rate maturity. Full-truncation Euler on log S and v,
// draws 2 * assets a step (the assets', then the variances'). A European call on the average of the
// assets' values at maturity: no early exercise (STAC-A2's own option is American).
Tape hestonBasket(int assets, int steps);

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
  // The tape's nodes, from the parameters alone, before recording: at least the recorded count and
  // at most 10% (+64) above it (tests/tape/test_tape_sizes.cpp checks both).
  std::function<double(const ProductParams&)> nodes;
};
const std::vector<ProductInfo>& catalog();

// The most nodes a product records unless raised (--max-nodes, TAPELAB_MAX_NODES): its tape, the
// planner's tables and a kernel's source grow with it (about 21 bytes a node in the tape, a few
// hundred in a kernel's source), and it keeps the 10-asset 1,260-step Heston basket (440,323) in.
inline constexpr double kDefaultMaxNodes = 2'000'000;

// The product's parameters with their defaults filled in, checked (as byName) and its node estimate.
struct ProductSize {
  ProductParams params;
  double nodes = 0;
};
ProductSize sizeOf(const std::string& product, const ProductParams& params);

// By name with parameters (missing ones take their defaults). Throws std::invalid_argument
// naming the product or the parameter (unknown, out of range, not an integer), or, when the
// estimate is over `maxNodes`, naming the size parameters before anything is recorded.
Tape byName(const std::string& product, const ProductParams& params, double maxNodes = kDefaultMaxNodes);

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
