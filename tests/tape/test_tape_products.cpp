// Products: the Asian's exact layout (the article's 1,536 nodes), the
// European's price and five Greeks against Black–Scholes, the basket's shape.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "tape/products/products.h"
#include "tape/tape.h"
#include "tests/common/reference_engines.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

using testutil::g17;
using testutil::PlainRun;
using testutil::runPlainOnReference;

void expectNode(const Tape& t, int32_t i, Op op, int32_t a = -1, int32_t b = -1) {
  ASSERT_LT(i, t.size());
  EXPECT_EQ(t.op[i], op) << "node " << i << " is '" << name(t.op[i]) << "', expected '" << name(op) << "'";
  EXPECT_EQ(t.a[i], a) << "node " << i << " first argument";
  EXPECT_EQ(t.b[i], b) << "node " << i << " second argument";
}

}  // namespace

TEST(Products, Asian252HasTheArticlesLayout) {
  const Tape t = products::asianCall(252);
  ASSERT_EQ(validate(t), "");
  EXPECT_EQ(t.size(), 1536);
  EXPECT_EQ(t.output, 1535);
  EXPECT_EQ(t.inputNames, (std::vector<std::string>{"spot", "strike", "vol", "rate", "maturity"}));
  EXPECT_EQ(t.inputDefaults, (std::vector<double>{100.0, 100.0, 0.20, 0.03, 1.0}));
  for (int32_t i = 0; i < 5; ++i) {
    expectNode(t, i, Op::Input);
    EXPECT_EQ(t.inputNodes[i], i);
  }
  // The 10 set-up nodes.
  expectNode(t, 5, Op::Mul, 2, 2);  // vol^2
  expectNode(t, 6, Op::Const);
  EXPECT_EQ(t.imm[6], 0.5);
  expectNode(t, 7, Op::Mul, 6, 5);  // vol^2 / 2
  expectNode(t, 8, Op::Sub, 3, 7);  // r - vol^2 / 2
  expectNode(t, 9, Op::Const);
  EXPECT_EQ(t.imm[9], 1.0 / 252);
  expectNode(t, 10, Op::Mul, 4, 9);   // dt
  expectNode(t, 11, Op::Mul, 8, 10);  // drift
  expectNode(t, 12, Op::Sqrt, 10);    // sqrt(dt)
  expectNode(t, 13, Op::Mul, 2, 12);  // vol * sqrt(dt)
  expectNode(t, 14, Op::Const);       // running sum starts at 0
  EXPECT_EQ(t.imm[14], 0.0);
  // Six nodes a step: draw, *vol sqrt(dt), +drift, exp, *spot, +sum.
  int32_t spot = 0, sum = 14;
  for (int step = 0; step < 252; ++step) {
    const int32_t b = 15 + 6 * step;
    expectNode(t, b, Op::Randn);
    EXPECT_EQ(t.imm[b], static_cast<double>(step)) << "draw index at node " << b;
    expectNode(t, b + 1, Op::Mul, 13, b);
    expectNode(t, b + 2, Op::Add, 11, b + 1);
    expectNode(t, b + 3, Op::Exp, b + 2);
    expectNode(t, b + 4, Op::Mul, spot, b + 3);
    expectNode(t, b + 5, Op::Add, sum, b + 4);
    spot = b + 4;
    sum = b + 5;
    if (HasFailure()) return;  // one broken step is enough to read
  }
  expectNode(t, 15, Op::Randn);
  EXPECT_EQ(t.imm[15], 0.0);
  expectNode(t, 1443, Op::Randn);
  EXPECT_EQ(t.imm[1443], 238.0);
  // Nine payoff nodes: avg = sum / N, avg - K, max(., 0), * exp(-(r T)).
  expectNode(t, 1527, Op::Const);
  EXPECT_EQ(t.imm[1527], 252.0);
  expectNode(t, 1528, Op::Div, 1526, 1527);
  expectNode(t, 1529, Op::Sub, 1528, 1);
  expectNode(t, 1530, Op::Const);
  expectNode(t, 1531, Op::Max, 1529, 1530);
  expectNode(t, 1532, Op::Mul, 3, 4);
  expectNode(t, 1533, Op::Neg, 1532);
  expectNode(t, 1534, Op::Exp, 1533);
  expectNode(t, 1535, Op::Mul, 1531, 1534);
  EXPECT_EQ(t.drawCount(), 252u);
}

TEST(Products, NodeCountsFollowTheirFormulas) {
  for (int n : {1, 3, 50, 120, 252}) {
    EXPECT_EQ(products::asianCall(n).size(), 15 + 6 * n + 9) << n << " steps";
    EXPECT_EQ(validate(products::europeanCall(n)), "");
    EXPECT_EQ(products::europeanCall(n).drawCount(), static_cast<uint32_t>(n));
  }
  EXPECT_THROW(products::asianCall(0), std::invalid_argument);
  EXPECT_THROW(products::europeanCall(-1), std::invalid_argument);
  EXPECT_THROW(products::byName("no-such-product", 4), std::invalid_argument);  // lookback is one since the zoo
  EXPECT_EQ(products::byName("asian", 7).size(), products::asianCall(7).size());
}

TEST(Products, BasketIsValidWithTwoMPlusThreeInputs) {
  for (int m : {1, 2, 5, 9}) {
    const Tape t = products::basketCall(m, 6);
    ASSERT_EQ(validate(t), "") << m << " assets";
    EXPECT_EQ(t.numInputs(), 2 * m + 3);
    std::vector<std::string> names;
    for (int i = 1; i <= m; ++i) names.push_back("spot" + std::to_string(i));
    names.push_back("strike");
    for (int i = 1; i <= m; ++i) names.push_back("vol" + std::to_string(i));
    names.push_back("rate");
    names.push_back("maturity");
    EXPECT_EQ(t.inputNames, names);
    EXPECT_EQ(t.drawCount(), static_cast<uint32_t>(6 * m));
  }
  EXPECT_THROW(products::basketCall(0, 4), std::invalid_argument);
  EXPECT_THROW(products::basketCall(3, 4, 1.0), std::invalid_argument);
  EXPECT_THROW(products::basketCall(3, 4, -0.6), std::invalid_argument);
}

// A one-asset basket uses the same draws and the same arithmetic as the
// European (its extra nodes multiply by exactly 1): equal value, and Greeks
// equal up to the order in which shared adjoints are summed.
TEST(Products, OneAssetBasketIsTheEuropean) {
  const PlainRun eu = runPlainOnReference(products::europeanCall(8), 3000, 11);
  const PlainRun bk = runPlainOnReference(products::basketCall(1, 8), 3000, 11);
  EXPECT_EQ(bk.price(), eu.price());
  for (const auto& [b, e] : {std::pair<const char*, const char*>{"spot1", "spot"}, {"strike", "strike"},
                            {"vol1", "vol"}, {"rate", "rate"}, {"maturity", "maturity"}})
    EXPECT_NEAR(bk.greek(b), eu.greek(e), 1e-12 * std::fabs(eu.greek(e))) << b;
}

namespace {

double normCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double normPdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }

struct BlackScholes {
  double value, delta, dStrike, vega, rho, dMaturity;
};

BlackScholes blackScholesCall(const EquityMarket& m) {
  const double s = m.spot, k = m.strike, v = m.vol, r = m.rate, t = m.maturity;
  const double sq = std::sqrt(t);
  const double d1 = (std::log(s / k) + (r + 0.5 * v * v) * t) / (v * sq), d2 = d1 - v * sq;
  const double df = std::exp(-r * t);
  BlackScholes b;
  b.value = s * normCdf(d1) - k * df * normCdf(d2);
  b.delta = normCdf(d1);
  b.dStrike = -df * normCdf(d2);
  b.vega = s * normPdf(d1) * sq;
  b.rho = k * t * df * normCdf(d2);
  b.dMaturity = s * normPdf(d1) * v / (2 * sq) + r * k * df * normCdf(d2);
  return b;
}

// GBM stepped in log space is exact in distribution at any step count, so a
// few steps suffice; only Monte-Carlo noise (and the draws' 1e-11 from the exact
// Box-Muller transform) separates the estimate from the closed form.
void expectBlackScholes(const EquityMarket& m, uint64_t paths, uint64_t seed) {
  const PlainRun r = runPlainOnReference(products::europeanCall(4, m), paths, seed);
  const BlackScholes bs = blackScholesCall(m);
  const struct {
    const char* what;
    double mc, err, exact;
  } rows[] = {
      {"value", r.price(), r.priceStderr(), bs.value},
      {"d/d spot", r.greek("spot"), r.greekStderr("spot"), bs.delta},
      {"d/d strike", r.greek("strike"), r.greekStderr("strike"), bs.dStrike},
      {"d/d vol", r.greek("vol"), r.greekStderr("vol"), bs.vega},
      {"d/d rate", r.greek("rate"), r.greekStderr("rate"), bs.rho},
      {"d/d maturity", r.greek("maturity"), r.greekStderr("maturity"), bs.dMaturity},
  };
  for (const auto& row : rows) {
    // Meaningful: the error bar is at most 1% of the quantity.
    EXPECT_GT(row.err, 0.0) << row.what;
    EXPECT_LT(row.err, 0.01 * std::fabs(row.exact)) << row.what << " stderr " << g17(row.err);
    EXPECT_LE(std::fabs(row.mc - row.exact), 4 * row.err)
        << row.what << " at S=" << m.spot << " K=" << m.strike << " vol=" << m.vol << " r=" << m.rate
        << " T=" << m.maturity << ": Monte-Carlo " << g17(row.mc) << " +- " << g17(row.err) << ", Black-Scholes "
        << g17(row.exact) << " (" << (row.mc - row.exact) / row.err << " stderr)";
  }
}

}  // namespace

TEST(Products, EuropeanMatchesBlackScholesAtTheMoneyOneYear) {
  expectBlackScholes(EquityMarket::atmOneYear(), 1000000, 42);
}

TEST(Products, EuropeanMatchesBlackScholesInTheMoneyShort) {
  expectBlackScholes({110.0, 95.0, 0.30, 0.05, 0.5}, 1000000, 7);
}

TEST(Products, EuropeanMatchesBlackScholesOutOfTheMoneyLong) {
  expectBlackScholes({90.0, 100.0, 0.25, 0.01, 2.0}, 1000000, 2024);
}
