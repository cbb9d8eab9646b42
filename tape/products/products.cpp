#include "tape/products/products.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
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

}  // namespace tapelab::products
