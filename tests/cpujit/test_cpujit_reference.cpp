// cpu-jit against the reference interpreters: fp64 against 50-digit
// multiprecision, fp32 against double, on products, a random tape and a tape
// that exercises every op's forward and adjoint rules.
#include <gtest/gtest.h>

#include <cmath>

#include "api/montecarlo.h"
#include "api/registry.h"
#include "planner/strategies.h"
#include "tape/philox.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tape/recorder.h"
#include "tests/cpujit/cpujit_test_util.h"

using namespace tapelab;
using namespace cpujit_test;

namespace {

// out = sum over every op of op(x_op * noise [, y_op]); noise = exp(0.2 z) > 0
// so log, sqrt and div see positive arguments, max/min take both branches
// (x ~ 1.3 noise against y = 1.1), abs, neg and select's condition see both
// signs (select picks either side, each an input times the noise).
Tape everyOpTape() {
  Recorder rec;
  const Var noise = exp(rec.randn(0) * 0.2);
  Var sum = rec.constant(0.0);
  for (const OpInfo& o : kOps) {
    if (o.arity == 0) continue;
    const std::string n(o.name);
    Var x = rec.input(n + "_a", 1.3) * noise;
    if (o.op == Op::Abs || o.op == Op::Neg || o.arity == 3) x = x - 1.3;  // both signs (select: both sides)
    Var r = x;
    if (o.arity == 1) r = rec.unary(o.op, x);
    if (o.arity == 2) r = rec.binary(o.op, x, rec.input(n + "_b", 1.1));
    if (o.arity == 3) r = rec.ternary(o.op, x, rec.input(n + "_b", 1.1) * noise, rec.input(n + "_c", 0.7) * noise);
    sum = sum + r;
  }
  rec.output(sum);
  Tape t = rec.finish();
  t.name = "every-op";
  return t;
}

void expectClose(const MarketResult& got, const MarketResult& want, const Tape& t, double rel, const std::string& what) {
  auto tol = [rel](double x) { return rel * std::max(1.0, std::fabs(x)); };
  EXPECT_NEAR(got.value, want.value, tol(want.value)) << what << " " << t.name << ": " << g17(got.value) << " vs "
                                                      << g17(want.value);
  EXPECT_NEAR(got.valueStderr, want.valueStderr, tol(want.valueStderr)) << what << " " << t.name << " stderr";
  ASSERT_EQ(got.greeks.size(), want.greeks.size());
  for (size_t k = 0; k < got.greeks.size(); ++k) {
    EXPECT_NEAR(got.greeks[k], want.greeks[k], tol(want.greeks[k]))
        << what << " " << t.name << " d/d " << t.inputNames[k] << ": " << g17(got.greeks[k]) << " vs "
        << g17(want.greeks[k]);
    EXPECT_NEAR(got.greeksStderr[k], want.greeksStderr[k], tol(want.greeksStderr[k]))
        << what << " " << t.name << " stderr d/d " << t.inputNames[k];
  }
}

}  // namespace

// Tolerance: 1e-12 relative to the quantity's size (at least 1), the bound
// the reference-vs-multiprecision test justifies for the double interpreter.
// cpu-jit differs from that interpreter only where reference/cpujit/README.md
// says: xsimd's exp is within 0.85 ulp and its log within 0.73 ulp (libm:
// 0.5), so a path's relative error stays at most about n ulp (n <= 400 ops
// here, ~1e-13) -- also for the normals' tails, which pass through xsimd's log;
// and the per-lane Kahan sums (in double) are within an ulp or two of the
// exact sums, like the reference's. 1e-12 is ~10x that bound and far below
// any real mistake (a wrong rule, a float leak, a draw off by one path).
TEST(CpuJitReference, Fp64AgreesWithMultiprecision) {
  CPUJIT_REQUIRE();
  RandomTapeOptions ro;
  ro.nodes = 150;
  ro.inputs = 3;
  ro.draws = 10;
  const std::vector<Tape> tapes = {products::asianCall(50), products::europeanCall(16), products::basketCall(3, 10),
                                   randomTape(11, ro), everyOpTape()};
  std::vector<Job> jobs;
  for (const Tape& t : tapes) jobs.push_back({&t, KernelOptions{}});
  KernelOptions reg;
  reg.kind = KernelKind::Register;
  reg.plan = makeStrategyPlan("window", tapes[0], {8, 0});
  jobs.push_back({&tapes[0], reg});
  const auto kernels = compileAll(jobs);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Tape& t = *jobs[i].tape;
    const uint64_t paths = 300, seed = 42;
    const RunResult jit = kernels[i]->run({t.inputDefaults}, paths, seed);
    const RunResult mp = makeEngine("reference-mp")->compile(t, KernelOptions{})->run({t.inputDefaults}, paths, seed);
    expectClose(jit.markets[0], mp.markets[0], t, 1e-12, std::string("cpu-jit ") + toString(jobs[i].options.kind));
    EXPECT_NE(jit.markets[0].value, 0.0) << t.name;
  }
}

// Float against double: the same uniforms (exact in float), inputs rounded to
// float, every op rounded to 2^-24 and xsimd's float exp within 1.5 ulp; over
// the 50-step Asian's chain of ~50 products and 50-term sum that is a
// per-path relative error of ~50 * 1.5 * 6e-8 = 5e-6. The tolerance of the
// reference-f32 test (1e-4 relative to the quantity's size, at least 1) has
// ~20x margin and still catches an fp32 kernel that computes something else.
TEST(CpuJitReference, Fp32AgreesWithDoubleWithinFloatRounding) {
  CPUJIT_REQUIRE();
  const std::vector<Tape> tapes = {products::asianCall(50), products::europeanCall(16), products::basketCall(3, 10)};
  std::vector<Job> jobs;
  KernelOptions f32;
  f32.precision = Precision::F32;
  for (const Tape& t : tapes) jobs.push_back({&t, f32});
  for (const Tape& t : tapes) jobs.push_back({&t, KernelOptions{}});
  const auto kernels = compileAll(jobs);
  for (size_t i = 0; i < tapes.size(); ++i) {
    const Tape& t = tapes[i];
    const RunResult f = kernels[i]->run({t.inputDefaults}, 2000, 5);
    const RunResult d64 = kernels[tapes.size() + i]->run({t.inputDefaults}, 2000, 5);
    const RunResult ref = makeEngine("reference")->compile(t, KernelOptions{})->run({t.inputDefaults}, 2000, 5);
    const MarketResult &a = ref.markets[0], &b = f.markets[0];
    auto tol = [](double x) { return 1e-4 * std::max(1.0, std::fabs(x)); };
    EXPECT_NEAR(b.value, a.value, tol(a.value)) << t.name;
    EXPECT_NE(b.value, d64.markets[0].value) << t.name << ": fp32 gave the fp64 kernel's bits; is it computing in float?";
    for (size_t k = 0; k < a.greeks.size(); ++k)
      EXPECT_NEAR(b.greeks[k], a.greeks[k], tol(a.greeks[k]))
          << t.name << " d/d " << t.inputNames[k] << ": " << g17(b.greeks[k]) << " vs " << g17(a.greeks[k]);
  }
}

// Draw indices far apart (up to 2^32 - 1) use the draw cache's list form: the
// same draws as the interpreter's, and no cache of 2^32 slots. Draws
// 4000000000 and 4000000002 share a Philox call (group 10^9), which the list
// computes once.
TEST(CpuJitReference, SparseDrawIndices) {
  CPUJIT_REQUIRE();
  Recorder rec;
  const Var x = rec.input("x", 1.5), y = rec.input("y", 0.5);
  const Var a = rec.randn(3), b = rec.randn(4000000000u), c = rec.randn(4294967295u);
  const Var d = rec.randn(4000000002u);
  rec.output(x * a + y * b * c + max(a, c) + d * x);
  Tape t = rec.finish();
  t.name = "sparse-draws";
  const RunResult got = jit()->compile(t, KernelOptions{})->run({t.inputDefaults}, 3000, 17);
  const RunResult ref = makeEngine("reference")->compile(t, KernelOptions{})->run({t.inputDefaults}, 3000, 17);
  expectClose(got.markets[0], ref.markets[0], t, 1e-12, "cpu-jit vs reference");
}

// The draw cache draw by draw: a tape sum_k x_k * randn(k) prices one path at a time, so its Greeks are
// that path's draws, against tape/philox.h's drawNormal (within 4 eps: the radius's log is xsimd's). Draws
// 0..12 fill the dense cache (a step's pairs four at a time, then the rest one pair at a time, the last
// pair's second draw past the tape's); {10, 11, 13, 20, 4e9, 4e9 + 1} the list form, whose pairs (10, 11)
// and (4e9, 4e9 + 1) are computed once for both draws and 13, 20 alone.
TEST(CpuJitReference, DrawCacheDrawByDraw) {
  CPUJIT_REQUIRE();
  const std::vector<std::vector<uint32_t>> indexSets{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
                                                     {10, 11, 13, 20, 4000000000u, 4000000001u}};
  for (const std::vector<uint32_t>& ks : indexSets)
    for (Precision p : {Precision::F64, Precision::F32}) {
      Recorder rec;
      Var sum = rec.constant(0.0);
      for (uint32_t k : ks) sum = sum + rec.input("x" + std::to_string(k), 1.0) * rec.randn(k);
      rec.output(sum);
      const Tape t = rec.finish();
      const double eps = p == Precision::F64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
      for (uint64_t path : {uint64_t{0}, uint64_t{1}, uint64_t{77}, (uint64_t{1} << 32) + 5}) {
        KernelOptions o;
        o.precision = p;
        o.dispatch.pathOffset = path;
        const MarketResult r = jit()->compile(t, o)->run({t.inputDefaults}, 1, 42).markets.at(0);
        ASSERT_EQ(r.greeks.size(), ks.size());
        for (size_t i = 0; i < ks.size(); ++i) {
          const double z = p == Precision::F64 ? drawNormal<double>(42, path, ks[i]) : drawNormal<float>(42, path, ks[i]);
          EXPECT_NEAR(r.greeks[i], z, 4 * eps * std::max(1.0, std::fabs(z)))
              << toString(p) << " path " << path << " draw " << ks[i] << " of " << ks.size();
        }
      }
    }
}

// Tapes at the edges: the output is an input; no inputs at all; nodes after
// the output (their adjoints still flow, as in the interpreter); one node.
TEST(CpuJitReference, EdgeTapes) {
  CPUJIT_REQUIRE();
  std::vector<Tape> tapes;
  {
    Recorder rec;
    const Var x = rec.input("x", 2.5);
    rec.input("unused", 1.0);
    rec.output(x);
    tapes.push_back(rec.finish());
  }
  {
    Recorder rec;
    rec.output(exp(rec.randn(0) * 0.1));
    tapes.push_back(rec.finish());
  }
  {
    Recorder rec;
    const Var x = rec.input("x", 1.2);
    const Var out = x * rec.randn(1);
    rec.output(out);
    (void)(out * x + rec.randn(2));  // after the output
    tapes.push_back(rec.finish());
  }
  {
    Recorder rec;
    rec.output(rec.constant(3.25));
    tapes.push_back(rec.finish());
  }
  for (size_t i = 0; i < tapes.size(); ++i) {
    Tape& t = tapes[i];
    t.name = "edge-" + std::to_string(i);
    const RunResult got = jit()->compile(t, KernelOptions{})->run({t.inputDefaults}, 1500, 4);
    const RunResult ref = makeEngine("reference")->compile(t, KernelOptions{})->run({t.inputDefaults}, 1500, 4);
    expectClose(got.markets[0], ref.markets[0], t, 1e-13, "cpu-jit vs reference");
  }
}

// The front door: MonteCarlo on cpu-jit prices the Asian like the reference.
TEST(CpuJitReference, ThroughTheMonteCarloBuilder) {
  CPUJIT_REQUIRE();
  RunConfig off = RunConfig::fromEnvironment();  // the tests' cpu-jit cache
  off.checkpoint = Checkpoint::off();
  const Result jit = MonteCarlo::of(products::asianCall()).steps(50).config(off).on("cpu-jit").build().run(4000, 3);
  off.engine = "reference";
  const Result ref = MonteCarlo::of(products::asianCall()).steps(50).config(off).on("reference").build().run(4000, 3);
  EXPECT_EQ(jit.kernel.precision, Precision::F64);
  EXPECT_NEAR(jit.price(), ref.price(), 1e-12 * ref.price());
  EXPECT_NEAR(jit.greek("spot"), ref.greek("spot"), 1e-12);
  EXPECT_NEAR(jit.greek("vol"), ref.greek("vol"), 1e-11 * std::fabs(ref.greek("vol")));
  EXPECT_GT(jit.pathsPerSecond(), 0.0);
}
