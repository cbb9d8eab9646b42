// The catalog (products.h): every product by name, its structural parameters with their ranges, its
// recording, and its size estimated from the parameters before anything is recorded, so that a
// product of sizes each in range but too large together is refused in microseconds, not after
// gigabytes (issue 49: a 10001-point, 10^6-step heat tape is 5e10 nodes).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "tape/products/products.h"

namespace tapelab::products {
namespace {

ProductParam stepsParam(double d) { return {"steps", d, 1, 1000000, true, "time steps"}; }

int i(const ProductParams& p, const char* n) { return static_cast<int>(p.at(n)); }
double d(const ProductParams& p, const char* n) { return p.at(n); }

// The node counts below are the recordings' own (counted node by node, checked by
// tests/tape/test_tape_sizes.cpp), in doubles: no overflow whatever the parameters.
std::vector<ProductInfo> equityProducts() {
  return {
      {"european", "European call on GBM", {stepsParam(252)},
       [](const ProductParams& p) { return europeanCall(i(p, "steps")); },
       [](const ProductParams& p) { return 21 + 5 * d(p, "steps"); }},
      {"asian", "arithmetic-average Asian call (the article's tape)", {stepsParam(252)},
       [](const ProductParams& p) { return asianCall(i(p, "steps")); },
       [](const ProductParams& p) { return 24 + 6 * d(p, "steps"); }},
      {"basket", "call on the average of correlated GBM assets",
       {stepsParam(252), {"assets", 5, 1, 1000, true, "basket assets"}},
       [](const ProductParams& p) { return basketCall(i(p, "assets"), i(p, "steps")); },
       [](const ProductParams& p) {
         const double m = d(p, "assets");
         return 14 + 9 * m + d(p, "steps") * (7 * m + 1.5 * m * (m - 1));
       }},
      {"heston", "Heston call, full-truncation Euler, two correlated draws a step", {stepsParam(100)},
       [](const ProductParams& p) { return hestonCall(i(p, "steps")); },
       [](const ProductParams& p) { return 26 + 23 * d(p, "steps"); }},
      {"cev", "CEV call on a forward (pow), Euler with a floor",
       {stepsParam(100), {"floor", 1e-6, 1e-300, 1e300, false, "lowest forward (keeps F^(beta-1) finite)"}},
       [](const ProductParams& p) { return cevCall(i(p, "steps"), p.at("floor")); },
       [](const ProductParams& p) { return 16 + 8 * d(p, "steps"); }},
      {"barrier", "discretely monitored up-and-out call (hard or tanh-smoothed indicator)",
       {stepsParam(50), {"smoothing", 0, 0, 1, false, "0: hard indicator; else the tanh width over the barrier"}},
       [](const ProductParams& p) { return upAndOutCall(i(p, "steps"), p.at("smoothing")); },
       [](const ProductParams& p) { return 24 + (d(p, "smoothing") > 0 ? 15 : 10) * d(p, "steps"); }},
      {"lookback", "fixed-strike lookback call on the running maximum", {stepsParam(50)},
       [](const ProductParams& p) { return lookbackCall(i(p, "steps")); },
       [](const ProductParams& p) { return 21 + 6 * d(p, "steps"); }},
  };
}

std::vector<ProductInfo> widerProducts() {
  return {
      {"lmm", "LIBOR market model cap, one factor, spot measure (wide pipe)",
       {{"forwards", 40, 2, 400, true, "forward rates (one step per accrual period)"},
        {"tau", 0.25, 1e-3, 10, false, "accrual period in years"},
        {"strike", 0.045, -1, 1, false, "the cap's strike rate (also the default of input 'strike')"}},
       [](const ProductParams& p) { return lmmCap(i(p, "forwards"), p.at("tau"), p.at("strike")); },
       [](const ProductParams& p) {
         const double n = d(p, "forwards");
         return 11 * n * (n - 1) + 16 * n - 3;
       }},
      {"worstof", "worst-of call on correlated GBM assets (wide, min kinks)",
       {stepsParam(12), {"assets", 20, 1, 200, true, "assets"}, {"correlation", 0.3, -1, 1, false, "pairwise correlation"}},
       [](const ProductParams& p) { return worstOfCall(i(p, "assets"), i(p, "steps"), p.at("correlation")); },
       [](const ProductParams& p) {
         const double m = d(p, "assets");
         return 12 + 10 * m + d(p, "steps") * (7 * m + 1.5 * m * (m - 1));
       }},
      {"neural", "neural SDE: a tanh MLP drift whose weights are inputs (hundreds of inputs)",
       {stepsParam(16), {"hidden", 16, 1, 256, true, "MLP width (2 hidden layers)"}},
       [](const ProductParams& p) { return neuralSde(i(p, "steps"), i(p, "hidden")); },
       [](const ProductParams& p) {
         const double h = d(p, "hidden");
         return h * h + 5 * h + 12 + d(p, "steps") * (2 * h * h + 8 * h + 7);
       }},
      {"heat", "no draws: explicit finite differences for Black-Scholes (a PDE time stepper)",
       {stepsParam(48), {"points", 41, 5, 10001, true, "grid points (odd)"}},
       [](const ProductParams& p) { return heatCall(i(p, "steps"), i(p, "points")); },
       [](const ProductParams& p) { return 33 + 5 * d(p, "points") + d(p, "steps") * (5 * d(p, "points") - 4); }},
      {"bucketed", "Asian call with one vol input per time bucket (bucketed vegas; 252 at the defaults)",
       {stepsParam(252), {"buckets", 252, 1, 1000000, true, "vol buckets (at most steps)"}},
       [](const ProductParams& p) { return bucketedAsian(i(p, "steps"), i(p, "buckets")); },
       [](const ProductParams& p) { return 17 + 6 * d(p, "steps") + 7 * d(p, "buckets"); }},
      {"localvol", "European call under a local-volatility surface on a strike x time grid (vega per node)",
       {stepsParam(100), {"strikes", 20, 2, 1000, true, "grid strikes (log-moneyness on [-1, 1])"},
        {"times", 12, 2, 1000, true, "grid times (fractions of the maturity)"}},
       [](const ProductParams& p) { return localVolCall(i(p, "steps"), i(p, "strikes"), i(p, "times")); },
       [](const ProductParams& p) {
         // A step that starts on a grid time (gcd(steps, times - 1) of them) reads its column as it is;
         // the others interpolate 5 nodes a strike.
         const double s = d(p, "strikes"), n = d(p, "steps");
         const double onGrid = static_cast<double>(std::gcd(i(p, "steps"), i(p, "times") - 1));
         return s * d(p, "times") + 16 + n * (11 * s + 1) + 5 * s * (n - onGrid);
       }},
      {"hestonbasket", "basket of correlated Heston assets, STAC-A2's shape (European: no early exercise)",
       {stepsParam(252), {"assets", 5, 1, 100, true, "assets (STAC-A2: 5 at 252 steps, 10 at 1,260)"}},
       [](const ProductParams& p) { return hestonBasket(i(p, "assets"), i(p, "steps")); },
       [](const ProductParams& p) {
         const double m = d(p, "assets");
         return (2 * m * m * m + 6 * m * m + 82 * m + 78) / 6 + d(p, "steps") * (m * m + 25 * m - 1);
       }},
  };
}

const ProductInfo& find(const std::string& product) {
  const auto& list = catalog();
  auto it = std::find_if(list.begin(), list.end(), [&](const ProductInfo& p) { return p.name == product; });
  if (it == list.end()) {
    std::string names;
    for (const ProductInfo& p : list) names += (names.empty() ? "" : ", ") + p.name;
    throw std::invalid_argument("unknown product '" + product + "' (" + names + ")");
  }
  return *it;
}

std::string g(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace

const std::vector<ProductInfo>& catalog() {
  static const std::vector<ProductInfo> list = [] {
    std::vector<ProductInfo> all = equityProducts();
    for (ProductInfo& p : widerProducts()) all.push_back(std::move(p));
    return all;
  }();
  return list;
}

ProductSize sizeOf(const std::string& product, const ProductParams& params) {
  const ProductInfo& info = find(product);
  ProductSize size;
  std::string known;
  for (const ProductParam& q : info.params) {
    known += (known.empty() ? "" : ", ") + q.name;
    size.params[q.name] = q.defaultValue;
  }
  for (const auto& entry : params) {  // not a structured binding: clang 14 cannot capture one in a lambda
    const std::string& name = entry.first;
    const double value = entry.second;
    auto q = std::find_if(info.params.begin(), info.params.end(), [&](const ProductParam& x) { return x.name == name; });
    if (q == info.params.end())
      throw std::invalid_argument("product '" + product + "' has no parameter '" + name + "' (its parameters: " + known + ")");
    if (!(value >= q->lo && value <= q->hi) || (q->integer && value != std::floor(value)))
      throw std::invalid_argument("product '" + product + "': parameter '" + name + "' must be " +
                                  (q->integer ? "an integer" : "a number") + " in [" + g(q->lo) + ", " + g(q->hi) + "]");
    size.params[name] = value;
  }
  size.nodes = info.nodes(size.params);
  return size;
}

Tape byName(const std::string& product, const ProductParams& params, double maxNodes) {
  const ProductSize size = sizeOf(product, params);
  if (size.nodes > maxNodes) {
    std::string sizes;  // the structural (integer) parameters: what the size is a product of
    for (const ProductParam& q : find(product).params)
      if (q.integer) sizes += (sizes.empty() ? "" : ", ") + q.name + "=" + g(size.params.at(q.name));
    char what[160];
    std::snprintf(what, sizeof what, "about %.3g nodes, over the bound of %.17g", size.nodes, maxNodes);
    throw std::invalid_argument("product '" + product + "': " + sizes + " make " + what +
                                " (raise it with --max-nodes N or TAPELAB_MAX_NODES)");
  }
  return find(product).record(size.params);
}

}  // namespace tapelab::products
