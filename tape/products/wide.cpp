// Wide products (products.h): many inputs, where one reverse sweep gives every Greek. Bucketed
// volatility on the Asian, a local-volatility surface on a strike x time grid, and a multi-asset
// Heston basket shaped like STAC-A2's problem (its correlations recorded, so they have Greeks).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "tape/products/products.h"
#include "tape/recorder.h"

namespace tapelab::products {
namespace {

uint32_t k32(int64_t k) { return static_cast<uint32_t>(k); }

Tape named(Recorder& rec, Var out, std::string name) {
  rec.output(out);
  Tape t = rec.finish();
  t.name = std::move(name);
  return t;
}

std::string str(int64_t n) { return std::to_string(n); }

}  // namespace

// ---------------------------------------------------------------- bucketed volatility
Tape bucketedAsian(int steps, int buckets) {
  if (steps < 1) throw std::invalid_argument("steps must be at least 1");
  if (buckets < 1 || buckets > steps) throw std::invalid_argument("buckets must be from 1 to steps");
  Recorder rec;
  Var spot = rec.input("spot", 100), strike = rec.input("strike", 100);
  std::vector<Var> vol;
  for (int b = 0; b < buckets; ++b) vol.push_back(rec.input("vol" + str(b + 1), 0.2));
  Var rate = rec.input("rate", 0.03), maturity = rec.input("maturity", 1.0);
  // The Asian's arithmetic (asianCall), its vol terms computed at each bucket's first step: with every
  // bucket at one vol, the value has the Asian's bits and the vegas sum to its vega.
  Var invN = rec.constant(1.0 / steps);
  Var dt = maturity * invN;
  Var sqrtDt = sqrt(dt);
  Var sum = rec.constant(0.0), s = spot, drift, volSqrtDt;
  for (int i = 0, current = -1; i < steps; ++i) {
    const int b = static_cast<int>(int64_t{i} * buckets / steps);
    if (b != current) {
      current = b;
      Var vol2 = vol[b] * vol[b];
      Var halfVol2 = rec.constant(0.5) * vol2;
      Var mu = rate - halfVol2;
      drift = mu * dt;
      volSqrtDt = vol[b] * sqrtDt;
    }
    Var z = rec.randn(k32(i));
    s = s * exp(drift + volSqrtDt * z);
    sum = sum + s;
  }
  Var avg = sum / rec.constant(static_cast<double>(steps));
  Var payoff = max(avg - strike, rec.constant(0.0));
  return named(rec, payoff * exp(-(rate * maturity)), "bucketed-" + str(buckets) + "x" + str(steps));
}

// ---------------------------------------------------------------- local volatility
Tape localVolCall(int steps, int strikes, int times) {
  if (steps < 1) throw std::invalid_argument("steps must be at least 1");
  if (strikes < 2 || times < 2) throw std::invalid_argument("strikes and times must be at least 2");
  Recorder rec;
  Var spot = rec.input("spot", 100), strike = rec.input("strike", 100);
  Var rate = rec.input("rate", 0.03), maturity = rec.input("maturity", 1.0);
  // The grid: log-moneyness x_j = log(K_j / 100) evenly on [-1, 1] (record-time constants, the surface's
  // own axis: it does not move with the spot), times at fractions k / (times - 1) of the maturity.
  // Default surface: a skew that flattens with time, 0.2 - 0.06 x / (1 + t).
  const double width = 1.0, h = 2 * width / (strikes - 1), ref = std::log(100.0);
  auto gridX = [&](int j) { return -width + j * h; };
  std::vector<std::vector<Var>> vol(times);
  for (int k = 0; k < times; ++k)
    for (int j = 0; j < strikes; ++j) {
      const double t = static_cast<double>(k) / (times - 1);
      vol[k].push_back(rec.input("vol_t" + str(k) + "_x" + str(j), 0.2 - 0.06 * gridX(j) / (1 + t)));
    }
  Var dt = maturity * (1.0 / steps);
  Var sqrtDt = sqrt(dt);
  Var y = log(spot);  // log S
  for (int i = 0; i < steps; ++i) {
    // Linear in time between the grid's columns at this step's start (weights known when recording).
    const double tau = static_cast<double>(i) / steps * (times - 1);
    const int k = std::min(static_cast<int>(tau), times - 2);
    const double a = tau - k;
    std::vector<Var> node(strikes);
    for (int j = 0; j < strikes; ++j) node[j] = a == 0.0 ? vol[k][j] : (1.0 - a) * vol[k][j] + a * vol[k + 1][j];
    // Linear in x as a sum of ramps: sigma_0 + sum_j (sigma_{j+1} - sigma_j) min(1, max((x - x_j) / h, 0)),
    // flat outside the grid. A flat surface is flat to the bit (every difference is 0), derivatives
    // included; on a grid node the ties (max's to its first argument, min's to the constant 1) give
    // the right derivative.
    Var x = y - ref;
    Var sigma = node[0];
    for (int j = 0; j + 1 < strikes; ++j) {
      Var ramp = min(rec.constant(1.0), max((x - gridX(j)) * (1.0 / h), 0.0));
      sigma = sigma + (node[j + 1] - node[j]) * ramp;
    }
    Var drift = (rate - 0.5 * (sigma * sigma)) * dt;
    y = y + drift + sigma * sqrtDt * rec.randn(k32(i));
  }
  Var payoff = max(exp(y) - strike, 0.0);
  return named(rec, payoff * exp(-(rate * maturity)),
               "localvol-" + str(strikes) + "x" + str(times) + "x" + str(steps));
}

// ---------------------------------------------------------------- multi-asset Heston (STAC-A2's shape)
namespace {

// The lower Cholesky factor of the correlation matrix whose off-diagonal entries are `corr` (i > j,
// row by row), recorded: the correlations' Greeks flow through it. A matrix that is not positive
// definite gives sqrt of a negative number: NaN, as it should.
std::vector<std::vector<Var>> cholesky(Recorder& rec, const std::vector<std::vector<Var>>& corr, int n) {
  std::vector<std::vector<Var>> l(n, std::vector<Var>(n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) {
      Var acc = corr[i][j];
      for (int k = 0; k < j; ++k) acc = acc - l[i][k] * l[j][k];
      l[i][j] = j == 0 ? acc : acc / l[j][j];  // l[0][0] is 1
    }
    if (i == 0) continue;
    Var diag = rec.constant(1.0);
    for (int k = 0; k < i; ++k) diag = diag - l[i][k] * l[i][k];
    l[i][i] = sqrt(diag);
  }
  return l;
}

}  // namespace

// The least variance the Heston basket takes a square root of (see its step below); representable in fp32.
constexpr double kVarianceFloor = 1e-30;

Tape hestonBasket(int assets, int steps) {
  if (assets < 1) throw std::invalid_argument("assets must be at least 1");
  if (steps < 1) throw std::invalid_argument("steps must be at least 1");
  const int m = assets;
  Recorder rec;
  struct Asset {
    Var spot, v0, kappa, theta, xi, rho;
  };
  std::vector<Asset> a(m);
  for (int i = 0; i < m; ++i) {
    const std::string n = str(i + 1);
    a[i] = {rec.input("spot" + n, 100), rec.input("v0_" + n, 0.04 + 0.005 * i), rec.input("kappa" + n, 1.5 + 0.1 * i),
            rec.input("theta" + n, 0.04 + 0.002 * i), rec.input("xi" + n, 0.3 + 0.02 * i),
            rec.input("rho" + n, -0.7 + 0.05 * i)};
  }
  // Correlations of the assets' drivers: 0.2 + 0.2 * 0.5^|i-j| (positive definite: a constant matrix
  // plus a Kac-Murdock-Szego matrix plus a diagonal).
  std::vector<std::vector<Var>> corr(m, std::vector<Var>(m));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < i; ++j)
      corr[i][j] = rec.input("corr" + str(j + 1) + "_" + str(i + 1), 0.2 + 0.2 * std::pow(0.5, i - j));
  Var strike = rec.input("strike", 100), rate = rec.input("rate", 0.03), maturity = rec.input("maturity", 1.0);
  const std::vector<std::vector<Var>> l = cholesky(rec, corr, m);
  Var dt = maturity * (1.0 / steps);
  Var sqrtDt = sqrt(dt);
  std::vector<Var> rhoBar(m), x(m), v(m), zs(m), zv(m);
  for (int i = 0; i < m; ++i) {
    rhoBar[i] = sqrt(1.0 - a[i].rho * a[i].rho);
    x[i] = rec.constant(0.0);  // log(S_i / spot_i)
    v[i] = a[i].v0;
  }
  for (int step = 0; step < steps; ++step) {
    // A step's draws first, together (m asset draws, then m variance draws): one run of draws a step,
    // which revolve takes as its step (planner/nested.h stepStarts).
    const int64_t k0 = int64_t{step} * 2 * m;
    for (int j = 0; j < m; ++j) zs[j] = rec.randn(k32(k0 + j));
    for (int j = 0; j < m; ++j) zv[j] = rec.randn(k32(k0 + m + j));
    std::vector<Var> w(m);  // the assets' correlated drivers: L zs (l[0][0] = 1)
    for (int i = 0; i < m; ++i) {
      w[i] = i == 0 ? zs[0] : l[i][0] * zs[0];
      for (int j = 1; j <= i; ++j) w[i] = w[i] + l[i][j] * zs[j];
    }
    for (int i = 0; i < m; ++i) {
      Var u = a[i].rho * w[i] + rhoBar[i] * zv[i];  // the variance's driver, correlated rho_i with the asset's
      // Full-truncation Euler on log S and v (hestonCall's step), but for the diffusion's square root,
      // taken of max(v, 1e-30): sqrt(0)'s infinite derivative times a truncated v's zero tangent is NaN
      // in a tangent kernel (the adjoint sends it to the constant); 1e-15 for 0 moves nothing.
      Var vp = max(v[i], 0.0);
      Var sd = sqrt(max(v[i], kVarianceFloor)) * sqrtDt;
      Var x1 = x[i] + (rate - 0.5 * vp) * dt;
      x[i] = x1 + sd * w[i];
      Var v1 = v[i] + a[i].kappa * (a[i].theta - vp) * dt;
      v[i] = v1 + a[i].xi * sd * u;
    }
  }
  Var total = a[0].spot * exp(x[0]);
  for (int i = 1; i < m; ++i) total = total + a[i].spot * exp(x[i]);
  Var payoff = max(total * (1.0 / m) - strike, 0.0);
  return named(rec, payoff * exp(-(rate * maturity)), "hestonbasket-" + str(m) + "x" + str(steps));
}

}  // namespace tapelab::products
