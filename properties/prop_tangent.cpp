// The tangent kernel kind (vector forward mode) on random tapes, every engine
// that has it: its values and their standard errors are the plain kernel's bits
// (the same forward sweep), in every market; its Greeks agree with reference-mp's
// adjoints within the tolerance table (bound.h), on well-conditioned tapes
// without kinks (as Accuracy.AgreesWithReferenceMp); the inputs a --wrt subset
// leaves out come back NaN.
#include <cmath>

#include "properties/bound.h"
#include "properties/gen.h"
#include "properties/harness.h"

namespace tapelab::props {
namespace {

namespace gen = rc::gen;

class Tangent : public testing::TestWithParam<std::string> {};
TAPELAB_ENGINE_SUITE(Tangent);

void assertClose(double got, double ref, double tol, const std::string& what) {
  ++counters().compared;
  if (std::isnan(ref)) {
    if (!std::isnan(got)) RC_FAIL(what + ": " + describe(got) + ", reference-mp NaN");
    return;
  }
  if (std::isinf(ref)) {
    if (got != ref) RC_FAIL(what + ": " + describe(got) + ", reference-mp " + describe(ref));
    return;
  }
  if (!std::isfinite(got)) RC_FAIL(what + ": " + describe(got) + " is not finite");
  if (!std::isfinite(tol)) {
    ++counters().unchecked;
    return;
  }
  if (!(std::fabs(got - ref) <= tol))
    RC_FAIL(what + ": " + describe(got) + " vs reference-mp " + describe(ref) + " beyond tolerance " + describe(tol));
}

TEST_P(Tangent, ValueBitsOfPlainGreeksOfReferenceMp) {
  EngineUnderTest e;
  if (!runnable(GetParam(), e)) GTEST_SKIP() << GetParam() << " is not runnable here";
  if (std::find(e.caps.kinds.begin(), e.caps.kinds.end(), KernelKind::Tangent) == e.caps.kinds.end()) {
    GTEST_SKIP() << e.name << ": no tangent kernel";
  }
  const Budget b = budget(e.name, 40);
  checkProperty(e.name, b.cases, [&] {
    const TapeMode mode = *gen::element(TapeMode::Conditioned, TapeMode::Smooth);
    const TapeSpec spec = *genTapeSpec(mode, std::min(b.maxNodes, 500));
    const Tape tape = buildTape(spec);
    noteTape(tape);
    const Precision prec = *gen::elementOf(e.precisions);
    const int marketCount = *gen::inRange(1, std::min(e.caps.maxMarkets, 2) + 1);
    const auto markets = *genMarkets(spec, marketCount, tape.numInputs());
    const uint64_t paths = *gen::inRange<uint64_t>(1, std::min<uint64_t>(b.maxPaths, 48) + 1);
    const uint64_t seed = *gen::arbitrary<uint64_t>();
    KernelOptions plain;
    plain.precision = prec;
    plain.markets = marketCount;
    KernelOptions tangent = plain;
    tangent.kind = KernelKind::Tangent;
    for (int k = 0; k < tape.numInputs(); ++k)  // a random --wrt subset (none chosen: all)
      if (*gen::arbitrary<bool>()) tangent.wrt.push_back(k);
    noteRun(paths, seed, markets, describeOptions(tangent) + ", " + std::to_string(tangent.wrt.size()) + " wrt");
    const RunResult p = runKernel(*compileOn(e.name, tape, plain), markets, paths, seed);
    const RunResult t = runKernel(*compileOn(e.name, tape, tangent), markets, paths, seed);
    RC_ASSERT(p.markets.size() == t.markets.size());
    for (size_t m = 0; m < p.markets.size(); ++m) {
      if (!bitsMatch(p.markets[m].value, t.markets[m].value))
        RC_FAIL("market " + std::to_string(m) + " value: plain " + describe(p.markets[m].value) + ", tangent " +
                describe(t.markets[m].value));
      if (!bitsMatch(p.markets[m].valueStderr, t.markets[m].valueStderr))
        RC_FAIL("market " + std::to_string(m) + " value stderr: plain " + describe(p.markets[m].valueStderr) +
                ", tangent " + describe(t.markets[m].valueStderr));
    }
    const std::vector<int> wrt = differentiatedInputs(tangent, tape.numInputs());
    std::vector<uint8_t> differentiated(static_cast<size_t>(tape.numInputs()), 0);
    for (int k : wrt) differentiated[k] = 1;
    for (size_t k = 0; k < differentiated.size(); ++k)
      if (!differentiated[k]) RC_ASSERT(std::isnan(t.markets[0].greeks[k]));

    const ErrorModel& model = errorModel(e.name, prec);
    const TapeBounds bounds = analyse(tape, model);
    if (bounds.hasKinks) return;  // derivatives of max/min/abs may jump where rounding differs
    KernelOptions mp;
    mp.precision = Precision::F64;
    mp.markets = 1;
    const MarketResult ref = runKernel(*compileOn("reference-mp", tape, mp), {markets[0]}, paths, seed).markets.at(0);
    for (int k : wrt)
      assertClose(t.markets[0].greeks[k], ref.greeks[k], tolerance(bounds.adjoint[k], model),
                  "tangent d/d " + tape.inputNames[k]);
  });
}

}  // namespace
}  // namespace tapelab::props
