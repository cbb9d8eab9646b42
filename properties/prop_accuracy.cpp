// Accuracy properties on well-conditioned tapes: every runnable engine agrees
// with reference-mp within the tolerance its row of the table (bound.h)
// gives for this tape, and adjoints agree with central finite differences of
// reference-mp's value.
//
// NaN/Inf rules: conditioned tapes have finite intervals, so reference-mp's
// numbers are finite; an engine must then give a finite number within the
// tolerance. Where reference-mp gives NaN, the engine must give NaN; where it
// gives +-Inf, the same infinity. A tolerance the analysis cannot bound
// (an interval reaching a pole) is counted as "unchecked" on the COUNT line,
// and then only the NaN/Inf class is compared.
#include <cmath>

#include "properties/bound.h"
#include "properties/gen.h"
#include "properties/harness.h"

namespace tapelab::props {
namespace {

namespace gen = rc::gen;

class Accuracy : public testing::TestWithParam<std::string> {};
TAPELAB_ENGINE_SUITE(Accuracy);

constexpr double kEpsD = 2.220446049250313e-16;

void assertClose(double got, double ref, double tol, const std::string& what) {
  ++counters().compared;
  auto fail = [&](const std::string& why) {
    RC_FAIL(what + ": " + describe(got) + " vs reference-mp " + describe(ref) + " (" + why + ")");
  };
  if (std::isnan(ref)) {
    if (!std::isnan(got)) fail("reference-mp gives NaN");
    return;
  }
  if (std::isinf(ref)) {
    if (got != ref) fail("reference-mp gives an infinity");
    return;
  }
  if (!std::isfinite(got)) fail("not finite");
  if (!std::isfinite(tol)) {
    ++counters().unchecked;
    return;
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "|difference| %.3g > tolerance %.3g", std::fabs(got - ref), tol);
  if (!(std::fabs(got - ref) <= tol)) fail(buf);
}

RunResult referenceMp(const Tape& tape, const std::vector<std::vector<double>>& markets, uint64_t paths,
                      uint64_t seed, bool greeks) {
  KernelOptions o;
  o.precision = Precision::F64;
  o.greeks = greeks;
  o.markets = static_cast<int>(markets.size());
  auto k = compileOn("reference-mp", tape, o);
  return runKernel(*k, markets, paths, seed);
}

TEST_P(Accuracy, AgreesWithReferenceMp) {
  EngineUnderTest e;
  if (!runnable(GetParam(), e)) GTEST_SKIP() << GetParam() << " is not runnable here";
  if (e.name == "reference-mp") {
    GTEST_SKIP() << "reference-mp: it is the reference the others are compared with";
  }
  const Budget b = budget(e.name, 60);
  checkProperty(e.name, b.cases, [&] {
    const TapeMode mode = *gen::element(TapeMode::Conditioned, TapeMode::Smooth);
    const TapeSpec spec = *genTapeSpec(mode, std::min(b.maxNodes, 500));
    const Tape tape = buildTape(spec);
    noteTape(tape);
    const Precision prec = *gen::elementOf(e.precisions);
    const auto markets = *genMarkets(spec, 1, tape.numInputs());
    const uint64_t paths = *gen::inRange<uint64_t>(1, std::min<uint64_t>(b.maxPaths, 48) + 1);
    const uint64_t seed = *gen::arbitrary<uint64_t>();
    const KernelOptions o = anyKernel(tape, e, prec);
    noteRun(paths, seed, markets, describeOptions(o));
    auto k = compileOn(e.name, tape, o);
    const MarketResult got = runKernel(*k, markets, paths, seed).markets.at(0);
    const MarketResult ref = referenceMp(tape, markets, paths, seed, true).markets.at(0);

    const ErrorModel& model = errorModel(e.name, prec);
    const TapeBounds bounds = analyse(tape, model);
    // The analysis' own interval must hold reference-mp's mean.
    const Bound& v = bounds.value;
    RC_ASSERT(!(ref.value < v.lo - 1e-12 * v.mag()) && !(ref.value > v.hi + 1e-12 * v.mag()));
    assertClose(got.value, ref.value, tolerance(v, model), "value");
    RC_ASSERT(got.greeks.size() == ref.greeks.size());
    if (bounds.hasKinks) return;  // adjoints of max/min/abs may jump where the engines' rounding differs
    for (size_t i = 0; i < got.greeks.size(); ++i)
      assertClose(got.greeks[i], ref.greeks[i], tolerance(bounds.adjoint[i], model),
                  "adjoint of " + tape.inputNames[i]);
  });
}

TEST_P(Accuracy, AdjointsMatchFiniteDifferences) {
  EngineUnderTest e;
  if (!runnable(GetParam(), e)) GTEST_SKIP() << GetParam() << " is not runnable here";
  const Budget b = budget(e.name, 40);
  checkProperty(e.name, b.cases, [&] {
    TapeSpec spec = *genTapeSpec(TapeMode::Smooth, std::min(b.maxNodes, 400));
    if (spec.inputs.empty()) spec.inputs.push_back(1.0);  // something to differentiate by
    const Tape tape = buildTape(spec);
    noteTape(tape);
    const int n = tape.numInputs();
    const Precision prec = *gen::elementOf(e.precisions);
    const std::vector<double> x = (*genMarkets(spec, 1, n)).at(0);
    const uint64_t paths = *gen::inRange<uint64_t>(1, 9);
    const uint64_t seed = *gen::arbitrary<uint64_t>();
    const KernelOptions o = anyKernel(tape, e, prec);
    noteRun(paths, seed, {x}, describeOptions(o));
    auto k = compileOn(e.name, tape, o);
    const MarketResult got = runKernel(*k, {x}, paths, seed).markets.at(0);
    RC_ASSERT(got.greeks.size() == static_cast<size_t>(n));

    // reference-mp's value at x +- h e_i and x +- 2h e_i, all in one dispatch.
    const double h = 1e-5;
    std::vector<std::vector<double>> points;
    for (int i = 0; i < n; ++i)
      for (double s : {h, -h, 2 * h, -2 * h}) {
        std::vector<double> y = x;
        y[i] += s;
        points.push_back(y);
      }
    const RunResult values = referenceMp(tape, points, paths, seed, false);
    const ErrorModel& model = errorModel(e.name, prec);
    const TapeBounds bounds = analyse(tape, model);
    for (int i = 0; i < n; ++i) {
      auto at = [&](int j) { return values.markets.at(4 * i + j).value; };
      auto step = [&](int j) { return points[4 * i + j][i] - points[4 * i + j + 1][i]; };  // exact in double
      const double d1 = (at(0) - at(1)) / step(0), d2 = (at(2) - at(3)) / step(2);
      // Truncation: d2 - d1 ~ 3 c h^2 estimates d1's error c h^2 (Richardson);
      // rounding: reference-mp's means are rounded to double, divided by the step.
      const double truncation = 2 * std::fabs(d2 - d1);
      const double rounding = 8 * kEpsD * bounds.value.mag() / step(0);
      const double tol = truncation + rounding + tolerance(bounds.adjoint[i], model) + 1e-9 * std::fabs(d1);
      logCase(tape.inputNames[i], ": finite differences ", describe(d1), " (2h: ", describe(d2), "), adjoint ",
              describe(got.greeks[i]));
      ++counters().compared;
      if (!std::isfinite(tol)) {
        ++counters().unchecked;
        RC_ASSERT(std::isfinite(got.greeks[i]));
        continue;
      }
      if (!(std::fabs(got.greeks[i] - d1) <= tol)) {
        char buf[160];
        std::snprintf(buf, sizeof buf, " (|difference| %.3g > tolerance %.3g: truncation %.3g, rounding %.3g)",
                      std::fabs(got.greeks[i] - d1), tol, truncation, rounding);
        RC_FAIL("adjoint of " + tape.inputNames[i] + " " + describe(got.greeks[i]) + " vs finite differences " +
                describe(d1) + buf);
      }
    }
  });
}

}  // namespace
}  // namespace tapelab::props
