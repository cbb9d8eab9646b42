// The product zoo (products.h): tapes that stress a cut strategy in different ways, each recorded
// through the Recorder from its structural parameters. Market values are inputs (--set).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tape/products/products.h"
#include "tape/recorder.h"

namespace tapelab::products {
namespace {

uint32_t k32(int64_t k) { return static_cast<uint32_t>(k); }

// exp(-rate * maturity): the discount every equity product ends with.
Var discount(Var rate, Var maturity) { return exp(-(rate * maturity)); }

Tape named(Recorder& rec, Var out, std::string name) {
  rec.output(out);
  Tape t = rec.finish();
  t.name = std::move(name);
  return t;
}

// An indicator of x < y: the hard one (select of 1 or 0), or smoothed over a relative `width`
// of y: 1/2 - tanh((x - y) / (width y)) / 2.
Var below(Recorder& rec, Var x, Var y, double width) {
  if (width <= 0) return select(x < y, rec.constant(1.0), rec.constant(0.0));
  return 0.5 - 0.5 * tanh((x - y) / (y * width));
}

}  // namespace

// ---------------------------------------------------------------- Heston
Tape hestonCall(int steps) {
  Recorder rec;
  Var spot = rec.input("spot", 100), strike = rec.input("strike", 100), v0 = rec.input("v0", 0.04);
  Var kappa = rec.input("kappa", 1.5), theta = rec.input("theta", 0.04), xi = rec.input("xi", 0.3);
  Var rho = rec.input("rho", -0.7), rate = rec.input("rate", 0.03), maturity = rec.input("maturity", 1.0);
  Var dt = maturity * (1.0 / steps);
  Var sqrtDt = sqrt(dt);
  Var rhoBar = sqrt(1.0 - rho * rho);
  Var x = rec.constant(0.0), v = v0;  // x = log(S / spot)
  for (int i = 0; i < steps; ++i) {
    Var z1 = rec.randn(k32(2 * int64_t{i})), z2 = rec.randn(k32(2 * int64_t{i} + 1));
    Var vp = max(v, 0.0);  // full truncation: the drift and diffusion see max(v, 0)
    Var sd = sqrt(vp) * sqrtDt;
    Var x1 = x + (rate - 0.5 * vp) * dt;
    x = x1 + sd * z1;
    Var w = rho * z1 + rhoBar * z2;
    Var v1 = v + kappa * (theta - vp) * dt;
    v = v1 + xi * sd * w;
  }
  Var payoff = max(spot * exp(x) - strike, 0.0);
  return named(rec, payoff * discount(rate, maturity), "heston-" + std::to_string(steps));
}

// ---------------------------------------------------------------- CEV
Tape cevCall(int steps, double floor) {
  Recorder rec;
  Var fwd = rec.input("forward", 100), strike = rec.input("strike", 100), alpha = rec.input("alpha", 2.0);
  Var beta = rec.input("beta", 0.5), rate = rec.input("rate", 0.03), maturity = rec.input("maturity", 1.0);
  Var dt = maturity * (1.0 / steps);
  Var sqrtDt = sqrt(dt);
  Var f = fwd;
  for (int i = 0; i < steps; ++i) {
    Var dw = sqrtDt * rec.randn(k32(i));
    // Euler on dF = alpha F^beta dW, kept above `floor` (absorbing at 0 would make F^(beta-1) infinite).
    f = max(f + alpha * pow(f, beta) * dw, floor);
  }
  return named(rec, max(f - strike, 0.0) * discount(rate, maturity), "cev-" + std::to_string(steps));
}

// ---------------------------------------------------------------- barrier
Tape upAndOutCall(int steps, double smoothing) {
  Recorder rec;
  Var spot = rec.input("spot", 100), strike = rec.input("strike", 100), barrier = rec.input("barrier", 130);
  Var vol = rec.input("vol", 0.2), rate = rec.input("rate", 0.03), maturity = rec.input("maturity", 1.0);
  Var dt = maturity * (1.0 / steps);
  Var drift = (rate - 0.5 * (vol * vol)) * dt;
  Var volSqrtDt = vol * sqrt(dt);
  Var s = spot, alive = rec.constant(1.0);
  for (int i = 0; i < steps; ++i) {
    s = s * exp(drift + volSqrtDt * rec.randn(k32(i)));
    alive = alive * below(rec, s, barrier, smoothing);  // monitored at every step's end
  }
  Var payoff = alive * max(s - strike, 0.0);
  return named(rec, payoff * discount(rate, maturity),
               std::string(smoothing > 0 ? "barrier-smooth-" : "barrier-") + std::to_string(steps));
}

// ---------------------------------------------------------------- lookback
Tape lookbackCall(int steps) {
  Recorder rec;
  Var spot = rec.input("spot", 100), strike = rec.input("strike", 100), vol = rec.input("vol", 0.2);
  Var rate = rec.input("rate", 0.03), maturity = rec.input("maturity", 1.0);
  Var dt = maturity * (1.0 / steps);
  Var drift = (rate - 0.5 * (vol * vol)) * dt;
  Var volSqrtDt = vol * sqrt(dt);
  Var s = spot, top = spot;
  for (int i = 0; i < steps; ++i) {
    s = s * exp(drift + volSqrtDt * rec.randn(k32(i)));
    top = max(top, s);
  }
  return named(rec, max(top - strike, 0.0) * discount(rate, maturity), "lookback-" + std::to_string(steps));
}

// ---------------------------------------------------------------- LIBOR market model
Tape lmmCap(int forwards, double tau, double strikeRate) {
  if (forwards < 2) throw std::invalid_argument("forwards must be at least 2");
  if (!(tau > 0)) throw std::invalid_argument("tau must be positive");
  Recorder rec;
  std::vector<Var> f, vol;
  for (int k = 0; k < forwards; ++k) f.push_back(rec.input("f" + std::to_string(k), 0.04 + 0.0005 * k));
  for (int k = 0; k < forwards; ++k) vol.push_back(rec.input("vol" + std::to_string(k), 0.2 - 0.001 * k));
  Var strike = rec.input("strike", strikeRate);
  const double sqrtTau = std::sqrt(tau);
  // Spot measure, one factor: from T_i to T_{i+1} the forwards k > i move by log-Euler with drift
  // vol_k * sum_{j=i+1..k} tau f_j vol_j / (1 + tau f_j); forward i fixes at T_i and pays
  // tau (f_i - K)^+ at T_{i+1}, deflated by the rolling account B(T_{i+1}) = prod_{j<=i} (1 + tau f_j(T_j)).
  Var account = 1.0 + tau * f[0];
  Var cap = tau * max(f[0] - strike, 0.0) / account;  // caplet 0 fixes today
  for (int i = 0; i + 1 < forwards; ++i) {
    Var z = rec.randn(k32(i));
    Var sum = rec.constant(0.0);
    for (int k = i + 1; k < forwards; ++k) {
      Var tf = tau * f[k];
      sum = sum + tf * vol[k] / (1.0 + tf);
      Var drift = vol[k] * sum * tau - 0.5 * (vol[k] * vol[k]) * tau;
      f[k] = f[k] * exp(drift + vol[k] * (sqrtTau * z));
    }
    account = account * (1.0 + tau * f[i + 1]);
    cap = cap + tau * max(f[i + 1] - strike, 0.0) / account;
  }
  return named(rec, cap, "lmm-" + std::to_string(forwards));
}

// ---------------------------------------------------------------- worst-of
Tape worstOfCall(int assets, int steps, double correlation) {
  if (assets < 1) throw std::invalid_argument("assets must be at least 1");
  if (assets > 1 && !(correlation > -1.0 / (assets - 1) && correlation < 1.0))
    throw std::invalid_argument("correlation must make the matrix positive definite");
  Eigen::MatrixXd corr = Eigen::MatrixXd::Constant(assets, assets, correlation);
  corr.diagonal().setOnes();
  const Eigen::MatrixXd chol = Eigen::LLT<Eigen::MatrixXd>(corr).matrixL();
  Recorder rec;
  std::vector<Var> s, vol;
  for (int i = 0; i < assets; ++i) s.push_back(rec.input("spot" + std::to_string(i + 1), 100));
  for (int i = 0; i < assets; ++i) vol.push_back(rec.input("vol" + std::to_string(i + 1), 0.2 + 0.005 * i));
  Var strike = rec.input("strike", 0.8), rate = rec.input("rate", 0.03), maturity = rec.input("maturity", 1.0);
  const std::vector<Var> s0 = s;
  Var dt = maturity * (1.0 / steps);
  Var sqrtDt = sqrt(dt);
  std::vector<Var> drift, volSqrtDt, z(assets);
  for (int i = 0; i < assets; ++i) {
    drift.push_back((rate - 0.5 * (vol[i] * vol[i])) * dt);
    volSqrtDt.push_back(vol[i] * sqrtDt);
  }
  for (int step = 0; step < steps; ++step) {
    for (int j = 0; j < assets; ++j) z[j] = rec.randn(k32(int64_t{step} * assets + j));
    for (int i = 0; i < assets; ++i) {
      Var w = z[0] * chol(i, 0);
      for (int j = 1; j <= i; ++j) w = w + z[j] * chol(i, j);
      s[i] = s[i] * exp(drift[i] + volSqrtDt[i] * w);
    }
  }
  Var worst = s[0] / s0[0];
  for (int i = 1; i < assets; ++i) worst = min(worst, s[i] / s0[i]);
  return named(rec, max(worst - strike, 0.0) * discount(rate, maturity),
               "worstof-" + std::to_string(assets) + "x" + std::to_string(steps));
}

// ---------------------------------------------------------------- neural SDE
Tape neuralSde(int steps, int hidden) {
  if (hidden < 1) throw std::invalid_argument("hidden must be at least 1");
  Recorder rec;
  Var x0 = rec.input("x0", 1.0), sigma = rec.input("sigma", 0.3), strike = rec.input("strike", 1.0);
  Var maturity = rec.input("maturity", 1.0);
  // Drift f(x, t) = W3 tanh(W2 tanh(W1 (x, t) + b1) + b2) + b3: its weights are inputs, with defaults
  // from a fixed small pattern (deterministic, no random generator) so the drift is mild.
  auto weight = [&](const std::string& n, int i, int j, double scale) {
    const double v = scale * std::sin(1.0 + 0.7 * i + 1.3 * j + 0.1 * static_cast<double>(n.size()));
    return rec.input(n + "_" + std::to_string(i) + "_" + std::to_string(j), v);
  };
  const double s1 = 1.0 / std::sqrt(2.0), s2 = 1.0 / std::sqrt(static_cast<double>(hidden));
  std::vector<std::vector<Var>> w1(hidden), w2(hidden);
  std::vector<Var> b1, b2, w3;
  for (int i = 0; i < hidden; ++i) {
    for (int j = 0; j < 2; ++j) w1[i].push_back(weight("w1", i, j, s1));
    b1.push_back(weight("b1", i, 0, 0.1));
  }
  for (int i = 0; i < hidden; ++i) {
    for (int j = 0; j < hidden; ++j) w2[i].push_back(weight("w2", i, j, s2));
    b2.push_back(weight("b2", i, 0, 0.1));
  }
  for (int j = 0; j < hidden; ++j) w3.push_back(weight("w3", 0, j, 0.2 * s2));
  Var b3 = weight("b3", 0, 0, 0.01);
  Var dt = maturity * (1.0 / steps);
  Var volSqrtDt = sigma * sqrt(dt);
  Var x = x0;
  for (int step = 0; step < steps; ++step) {
    Var t = dt * static_cast<double>(step);
    std::vector<Var> h1(hidden), h2(hidden);
    for (int i = 0; i < hidden; ++i) h1[i] = tanh(w1[i][0] * x + w1[i][1] * t + b1[i]);
    for (int i = 0; i < hidden; ++i) {
      Var acc = b2[i];
      for (int j = 0; j < hidden; ++j) acc = acc + w2[i][j] * h1[j];
      h2[i] = tanh(acc);
    }
    Var drift = b3;
    for (int j = 0; j < hidden; ++j) drift = drift + w3[j] * h2[j];
    x = x + drift * dt + volSqrtDt * rec.randn(k32(step));
  }
  return named(rec, max(x - strike, 0.0), "neural-" + std::to_string(hidden) + "x" + std::to_string(steps));
}

// ---------------------------------------------------------------- PDE (no draws)
Tape heatCall(int steps, int points) {
  if (points < 5 || points % 2 == 0) throw std::invalid_argument("points must be odd and at least 5");
  Recorder rec;
  Var spot = rec.input("spot", 100), strike = rec.input("strike", 100), vol = rec.input("vol", 0.2);
  Var rate = rec.input("rate", 0.03), maturity = rec.input("maturity", 1.0);
  // Black-Scholes in x = log(S / spot) on [-L, L], L = 5 vol sqrt(T) at the defaults (fixed at record
  // time: 1.0), explicit Euler backwards in time, linear extrapolation at the edges. The centre
  // point is the spot: its value is the price. Stable for dt <= dx^2 / vol^2 (steps >= points^2/25 at 0.2).
  const int m = points, mid = points / 2;
  const double width = 1.0, dx = 2 * width / (m - 1);
  Var dt = maturity * (1.0 / steps);
  Var var = vol * vol;
  Var mu = rate - 0.5 * var;
  // One step: u_j += dt (var/2 (u_{j+1} - 2u_j + u_{j-1})/dx^2 + mu (u_{j+1} - u_{j-1})/(2dx) - r u_j).
  Var up = dt * (0.5 * var * (1.0 / (dx * dx)) + mu * (1.0 / (2 * dx)));
  Var down = dt * (0.5 * var * (1.0 / (dx * dx)) - mu * (1.0 / (2 * dx)));
  Var centre = 1.0 - dt * (var * (1.0 / (dx * dx)) + rate);
  std::vector<Var> u(m);
  for (int j = 0; j < m; ++j) u[j] = max(spot * std::exp(-width + j * dx) - strike, 0.0);
  for (int n = 0; n < steps; ++n) {
    std::vector<Var> next(m);
    for (int j = 1; j + 1 < m; ++j) next[j] = centre * u[j] + up * u[j + 1] + down * u[j - 1];
    next[0] = 2.0 * next[1] - next[2];
    next[m - 1] = 2.0 * next[m - 2] - next[m - 3];
    u = std::move(next);
  }
  return named(rec, u[mid], "heat-" + std::to_string(points) + "x" + std::to_string(steps));
}

}  // namespace tapelab::products
