// The generated code's exp and log: xsimd's bit for bit, and within the
// accuracy reference/cpujit/README.md states (against 50 digits).
#include <gtest/gtest.h>

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "reference/cpujit/probe.h"
#include "tests/cpujit/cpujit_test_util.h"

using namespace tapelab;
using namespace cpujit_test;
using Mp = boost::multiprecision::cpp_bin_float_50;

namespace {

std::vector<double> specialAndRandomArgs(uint64_t seed, double lo, double hi, int count) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> a = {0.0,   -0.0,   1e-310, -1e-310, 1e-300, 0.5,    1.0,  -1.0,  700.0, 709.0,
                           709.8, 710.0,  -700.0, -708.0,  -708.4, -708.5, -745, -746,  800.0, -800.0,
                           1e300, -1e300, inf,    -inf,    std::numeric_limits<double>::quiet_NaN()};
  for (int k = -40; k <= 40; ++k) a.push_back(k * 0.34657359027997264);  // multiples of ln2 / 2: reduction edges
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) a.push_back(lo + (hi - lo) * std::generate_canonical<double, 53>(rng));
  return a;
}

template <class T>
double ulpError(double got, const Mp& exact) {
  const T rounded = static_cast<T>(exact);
  const T ulp = std::nextafter(std::fabs(rounded), std::numeric_limits<T>::infinity()) - std::fabs(rounded);
  return static_cast<double>(abs(Mp(got) - exact) / Mp(ulp));
}

}  // namespace

TEST(CpuJitMath, ExpAndLogAreXsimdsBitForBit) {
  CPUJIT_REQUIRE();
  for (Precision p : {Precision::F64, Precision::F32}) {
    std::vector<double> args = specialAndRandomArgs(1, -50, 50, 4000);
    for (double x : specialAndRandomArgs(2, -750, 750, 2000)) args.push_back(x);
    const JitMath m = cpuJitMath(engineSettingsFromEnvironment(), p, args);
    for (size_t i = 0; i < m.args.size(); ++i) {
      EXPECT_PRED2(sameBits, m.exp[i], m.xsimdExp[i]) << toString(p) << " exp(" << g17(m.args[i]) << ")";
      EXPECT_PRED2(sameBits, m.log[i], m.xsimdLog[i]) << toString(p) << " log(" << g17(m.args[i]) << ")";
    }
  }
}

// The README's table: xsimd's exp within 0.85 ulp (fp64) and 1.5 ulp (fp32)
// on [-20, 20], its log within 0.75 ulp on [1e-12, 1e6] (libm: 0.5 and 0.5).
TEST(CpuJitMath, AccuracyAsDocumented) {
  CPUJIT_REQUIRE();
  std::vector<double> expArgs = specialAndRandomArgs(3, -20, 20, 3000);
  expArgs.erase(expArgs.begin(), expArgs.begin() + 25);  // the specials (inf, NaN, overflow) are not about accuracy
  std::vector<double> logArgs;
  std::mt19937_64 rng(4);
  for (int i = 0; i < 3000; ++i)
    logArgs.push_back(std::exp(std::log(1e-12) + (std::log(1e6) - std::log(1e-12)) * std::generate_canonical<double, 53>(rng)));
  for (Precision p : {Precision::F64, Precision::F32}) {
    const bool f64 = p == Precision::F64;
    double worstExp = 0, worstLog = 0;
    const JitMath e = cpuJitMath(engineSettingsFromEnvironment(), p, expArgs);
    for (size_t i = 0; i < e.args.size(); ++i) {
      const Mp exact = exp(Mp(e.args[i]));
      worstExp = std::max(worstExp, f64 ? ulpError<double>(e.exp[i], exact) : ulpError<float>(e.exp[i], exact));
    }
    const JitMath l = cpuJitMath(engineSettingsFromEnvironment(), p, logArgs);
    for (size_t i = 0; i < l.args.size(); ++i) {
      const Mp exact = log(Mp(l.args[i]));
      worstLog = std::max(worstLog, f64 ? ulpError<double>(l.log[i], exact) : ulpError<float>(l.log[i], exact));
    }
    EXPECT_LE(worstExp, f64 ? 0.85 : 1.5) << toString(p);
    EXPECT_LE(worstLog, 0.75) << toString(p);
    std::printf("%s: exp within %.3f ulp, log within %.3f ulp\n", toString(p), worstExp, worstLog);
  }
}
