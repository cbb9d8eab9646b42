#include "tape/products/products.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>


#include "tape/recorder.h"

namespace tapelab::products {
namespace {

struct Inputs {
  Var spot, strike, vol, rate, maturity;
};

Inputs equityInputs(Recorder& rec, const EquityMarket& m) {
  return {rec.input("spot", m.spot), rec.input("strike", m.strike), rec.input("vol", m.vol),
          rec.input("rate", m.rate), rec.input("maturity", m.maturity)};
}

void checkSteps(int steps) {
  if (steps < 1) throw std::invalid_argument("steps must be at least 1");
}

}  // namespace

Tape europeanCall(int steps, const EquityMarket& m) {
  checkSteps(steps);
  Recorder rec;
  Inputs in = equityInputs(rec, m);
  Var halfVar = 0.5 * (in.vol * in.vol);
  // One recording per statement: the order of operand evaluation is unspecified in C++.
  Var mu = in.rate - halfVar;
  Var dt = in.maturity * (1.0 / steps);
  Var drift = mu * dt;
  Var volSqrtDt = in.vol * sqrt(dt);
  Var s = in.spot;
  for (int i = 0; i < steps; ++i) s = s * exp(drift + volSqrtDt * rec.randn(static_cast<uint32_t>(i)));
  Var payoff = max(s - in.strike, 0.0);
  rec.output(payoff * exp(-(in.rate * in.maturity)));
  Tape t = rec.finish();
  t.name = "european-" + std::to_string(steps);
  return t;
}

Tape asianCall(int steps, const EquityMarket& m) {
  checkSteps(steps);
  Recorder rec;
  Inputs in = equityInputs(rec, m);                  // nodes 0-4
  Var vol2 = in.vol * in.vol;                        // 5
  Var half = rec.constant(0.5);                      // 6
  Var halfVol2 = half * vol2;                        // 7
  Var mu = in.rate - halfVol2;                       // 8
  Var invN = rec.constant(1.0 / steps);              // 9
  Var dt = in.maturity * invN;                       // 10
  Var drift = mu * dt;                               // 11
  Var sqrtDt = sqrt(dt);                             // 12
  Var volSqrtDt = in.vol * sqrtDt;                   // 13
  Var sum = rec.constant(0.0);                       // 14
  Var s = in.spot;
  for (int i = 0; i < steps; ++i) {                  // 6 nodes a step
    Var z = rec.randn(static_cast<uint32_t>(i));
    s = s * exp(drift + volSqrtDt * z);
    sum = sum + s;
  }
  Var avg = sum / rec.constant(static_cast<double>(steps));  // 9 payoff nodes
  Var intrinsic = avg - in.strike;
  Var payoff = max(intrinsic, rec.constant(0.0));
  rec.output(payoff * exp(-(in.rate * in.maturity)));
  Tape t = rec.finish();
  t.name = "asian-" + std::to_string(steps);
  return t;
}

Tape basketCall(int assets, int steps, double correlation, const EquityMarket& m) {
  checkSteps(steps);
  if (assets < 1) throw std::invalid_argument("assets must be at least 1");
  if (!(correlation > -1.0 / std::max(1, assets - 1) && correlation < 1.0) && assets > 1)
    throw std::invalid_argument("correlation must make the matrix positive definite");
  Eigen::MatrixXd corr = Eigen::MatrixXd::Constant(assets, assets, correlation);
  corr.diagonal().setOnes();
  Eigen::LLT<Eigen::MatrixXd> llt(corr);
  if (llt.info() != Eigen::Success) throw std::invalid_argument("correlation matrix is not positive definite");
  const Eigen::MatrixXd chol = llt.matrixL();

  Recorder rec;
  std::vector<Var> spot, vol;
  for (int i = 0; i < assets; ++i) spot.push_back(rec.input("spot" + std::to_string(i + 1), m.spot));
  Var strike = rec.input("strike", m.strike);
  for (int i = 0; i < assets; ++i) vol.push_back(rec.input("vol" + std::to_string(i + 1), m.vol));
  Var rate = rec.input("rate", m.rate);
  Var maturity = rec.input("maturity", m.maturity);

  Var dt = maturity * (1.0 / steps);
  Var sqrtDt = sqrt(dt);
  std::vector<Var> drift, volSqrtDt;
  for (int i = 0; i < assets; ++i) {
    drift.push_back((rate - 0.5 * (vol[i] * vol[i])) * dt);
    volSqrtDt.push_back(vol[i] * sqrtDt);
  }
  std::vector<Var> s = spot, z(assets);
  for (int step = 0; step < steps; ++step) {
    for (int j = 0; j < assets; ++j) z[j] = rec.randn(static_cast<uint32_t>(step * assets + j));
    for (int i = 0; i < assets; ++i) {
      Var w = z[0] * chol(i, 0);
      for (int j = 1; j <= i; ++j) w = w + z[j] * chol(i, j);
      s[i] = s[i] * exp(drift[i] + volSqrtDt[i] * w);
    }
  }
  Var total = s[0];
  for (int i = 1; i < assets; ++i) total = total + s[i];
  Var payoff = max(total * (1.0 / assets) - strike, 0.0);
  rec.output(payoff * exp(-(rate * maturity)));
  Tape t = rec.finish();
  t.name = "basket-" + std::to_string(assets) + "x" + std::to_string(steps);
  return t;
}

Product europeanCall() { return {"european", [](int n) { return europeanCall(n); }, 252}; }
Product asianCall() { return {"asian", [](int n) { return asianCall(n); }, 252}; }
Product basketCall(int assets) {
  return {"basket", [assets](int n) { return basketCall(assets, n); }, 252};
}

Tape byName(const std::string& product, int steps, int assets) {
  if (product == "european") return europeanCall(steps);
  if (product == "asian") return asianCall(steps);
  if (product == "basket") return basketCall(assets, steps);
  return byName(product, ProductParams{{"steps", steps}});
}

const std::vector<ProductInfo>& catalog() {
  auto steps = [](double d) { return ProductParam{"steps", d, 1, 1000000, true, "time steps"}; };
  auto i = [](const ProductParams& p, const char* n) { return static_cast<int>(p.at(n)); };
  static const std::vector<ProductInfo> list = {
      {"european", "European call on GBM", {steps(252)}, [=](const ProductParams& p) { return europeanCall(i(p, "steps")); }},
      {"asian", "arithmetic-average Asian call (the article's tape)", {steps(252)},
       [=](const ProductParams& p) { return asianCall(i(p, "steps")); }},
      {"basket", "call on the average of correlated GBM assets",
       {steps(252), {"assets", 5, 1, 1000, true, "basket assets"}},
       [=](const ProductParams& p) { return basketCall(i(p, "assets"), i(p, "steps")); }},
      {"heston", "Heston call, full-truncation Euler, two correlated draws a step", {steps(100)},
       [=](const ProductParams& p) { return hestonCall(i(p, "steps")); }},
      {"cev", "CEV call on a forward (pow), Euler with a floor",
       {steps(100), {"floor", 1e-6, 1e-300, 1e300, false, "lowest forward (keeps F^(beta-1) finite)"}},
       [=](const ProductParams& p) { return cevCall(i(p, "steps"), p.at("floor")); }},
      {"barrier", "discretely monitored up-and-out call (hard or tanh-smoothed indicator)",
       {steps(50), {"smoothing", 0, 0, 1, false, "0: hard indicator; else the tanh width over the barrier"}},
       [=](const ProductParams& p) { return upAndOutCall(i(p, "steps"), p.at("smoothing")); }},
      {"lookback", "fixed-strike lookback call on the running maximum", {steps(50)},
       [=](const ProductParams& p) { return lookbackCall(i(p, "steps")); }},
      {"lmm", "LIBOR market model cap, one factor, spot measure (wide pipe)",
       {{"forwards", 40, 2, 400, true, "forward rates (one step per accrual period)"},
        {"tau", 0.25, 1e-3, 10, false, "accrual period in years"},
        {"strike", 0.045, -1, 1, false, "the cap's strike rate (also the default of input 'strike')"}},
       [=](const ProductParams& p) { return lmmCap(i(p, "forwards"), p.at("tau"), p.at("strike")); }},
      {"worstof", "worst-of call on correlated GBM assets (wide, min kinks)",
       {steps(12), {"assets", 20, 1, 200, true, "assets"}, {"correlation", 0.3, -1, 1, false, "pairwise correlation"}},
       [=](const ProductParams& p) { return worstOfCall(i(p, "assets"), i(p, "steps"), p.at("correlation")); }},
      {"neural", "neural SDE: a tanh MLP drift whose weights are inputs (hundreds of inputs)",
       {steps(16), {"hidden", 16, 1, 256, true, "MLP width (2 hidden layers)"}},
       [=](const ProductParams& p) { return neuralSde(i(p, "steps"), i(p, "hidden")); }},
      {"heat", "no draws: explicit finite differences for Black-Scholes (a PDE time stepper)",
       {steps(48), {"points", 41, 5, 10001, true, "grid points (odd)"}},
       [=](const ProductParams& p) { return heatCall(i(p, "steps"), i(p, "points")); }},
  };
  return list;
}

Tape byName(const std::string& product, const ProductParams& params) {
  const auto& list = catalog();
  auto it = std::find_if(list.begin(), list.end(), [&](const ProductInfo& p) { return p.name == product; });
  if (it == list.end()) {
    std::string names;
    for (const ProductInfo& p : list) names += (names.empty() ? "" : ", ") + p.name;
    throw std::invalid_argument("unknown product '" + product + "' (" + names + ")");
  }
  ProductParams full;
  std::string known;
  for (const ProductParam& q : it->params) {
    known += (known.empty() ? "" : ", ") + q.name;
    full[q.name] = q.defaultValue;
  }
  for (const auto& entry : params) {  // not a structured binding: clang 14 cannot capture one in a lambda
    const std::string& name = entry.first;
    const double value = entry.second;
    auto q = std::find_if(it->params.begin(), it->params.end(), [&](const ProductParam& x) { return x.name == name; });
    if (q == it->params.end())
      throw std::invalid_argument("product '" + product + "' has no parameter '" + name + "' (its parameters: " + known + ")");
    if (!(value >= q->lo && value <= q->hi) || (q->integer && value != std::floor(value))) {
      char range[96];
      std::snprintf(range, sizeof range, "%s in [%.17g, %.17g]", q->integer ? "an integer" : "a number", q->lo, q->hi);
      throw std::invalid_argument("product '" + product + "': parameter '" + name + "' must be " + range);
    }
    full[name] = value;
  }
  return it->record(full);
}


}  // namespace tapelab::products
