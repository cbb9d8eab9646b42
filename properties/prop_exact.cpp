// Exactness properties, on every runnable engine: where the design promises
// the same bits (checkpointed vs plain, markets together vs alone, the same
// call twice, any split of the paths over threads or dispatches), results are
// compared bit for bit (a NaN matches any NaN: harness.h). Tapes are wild two
// times in three (Inf, NaN, signed zeros, subnormals), conditioned otherwise.
#include <algorithm>
#include <optional>
#include <string>

#include "properties/gen.h"
#include "properties/harness.h"

namespace tapelab::props {
namespace {

namespace gen = rc::gen;

class Exact : public testing::TestWithParam<std::string> {};
TAPELAB_ENGINE_SUITE(Exact);

TapeMode exactMode() {
  return *gen::weightedElement<TapeMode>({{2, TapeMode::Wild}, {1, TapeMode::Conditioned}});
}

// A tape for this case, noted for the failure report.
struct CaseTape {
  TapeSpec spec;
  Tape tape;
};
CaseTape caseTape(TapeMode mode, int maxNodes) {
  CaseTape c{*genTapeSpec(mode, maxNodes), {}};
  c.tape = buildTape(c.spec);
  noteTape(c.tape);
  return c;
}

uint64_t casePaths(const Budget& b) {
  return *gen::weightedOneOf<uint64_t>({{1, gen::just<uint64_t>(1)},
                                        {6, gen::inRange<uint64_t>(1, 65)},
                                        {3, gen::inRange<uint64_t>(1, b.maxPaths + 1)}});
}

// One case: a tape (wild or conditioned), a precision the engine has, `markets`
// input sets (from minMarkets to maxMarkets), paths and a seed.
struct Case {
  TapeSpec spec;
  Tape tape;
  Precision prec;
  std::vector<std::vector<double>> markets;
  uint64_t paths, seed;
};
Case drawCase(const EngineUnderTest& e, const Budget& b, int minMarkets = 1, int maxMarkets = 1) {
  auto [spec, tape] = caseTape(exactMode(), b.maxNodes);
  const Precision prec = *gen::elementOf(e.precisions);
  const int count = maxMarkets > minMarkets ? *gen::inRange(minMarkets, maxMarkets + 1) : minMarkets;
  auto markets = *genMarkets(spec, count, tape.numInputs());
  const uint64_t paths = casePaths(b);
  const uint64_t seed = *gen::arbitrary<uint64_t>();
  return {std::move(spec), std::move(tape), prec, std::move(markets), paths, seed};
}

// Checkpointed == plain for every kernel kind, strategy, segment count, layout and configuration: the
// plain kernel takes a random configuration (engine/config.h), each checkpointed kernel the same with
// every field that keeps the bits drawn again.
TEST_P(Exact, CheckpointedEqualsPlain) {
  EngineUnderTest e;
  if (!runnable(GetParam(), e)) GTEST_SKIP() << GetParam() << " is not runnable here";
  if (checkpointedKinds(e.caps.kinds).empty()) {
    GTEST_SKIP() << e.name << ": caps() lists no checkpointed kernel kind";
  }
  const Budget b = budget(e.name, 100);
  // Several checkpointed kernels per plain one: compile time dominates on GPUs.
  const int perCase = engineClass(e.name) == EngineClass::Compiled ? 2 : 3;
  checkProperty(e.name, b.cases, [&] {
    const auto [spec, tape, prec, markets, paths, seed] = drawCase(e, b);
    noteRun(paths, seed, markets);
    KernelOptions plain;
    plain.precision = prec;
    plain.config = *genConfig(e.name, prec);
    logCase("plain config: ", configText(plain.config, e.name));
    auto kp = compileOn(e.name, tape, plain);
    const RunResult rp = runKernel(*kp, markets, paths, seed);
    for (int j = 0; j < perCase; ++j) {
      KernelOptions o = checkpointedOptions(tape, prec, *genCkptSpec(e.caps.kinds), e.caps.perValuePlans);
      o.config = *genSameBitsConfig(plain.config, e.name);
      logCase("kernel ", j, ": ", describeOptions(o));
      auto kc = compileOn(e.name, tape, o);
      assertSameBits(rp, runKernel(*kc, markets, paths, seed), "plain kernel then " + describeOptions(o));
    }
  });
}

// Several markets in one dispatch == each market alone.
TEST_P(Exact, MarketsTogetherEqualAlone) {
  EngineUnderTest e;
  if (!runnable(GetParam(), e)) GTEST_SKIP() << GetParam() << " is not runnable here";
  const int maxMarkets = std::min(8, e.caps.maxMarkets);
  if (maxMarkets < 2) {
    GTEST_SKIP() << e.name << ": caps() allows one market per dispatch";
  }
  const Budget b = budget(e.name, 40);
  checkProperty(e.name, b.cases, [&] {
    const auto [spec, tape, prec, markets, paths, seed] = drawCase(e, b, 2, maxMarkets);
    const int count = static_cast<int>(markets.size());
    KernelOptions o = anyKernel(tape, e, prec);
    o.greeks = *gen::weightedElement<bool>({{4, true}, {1, false}});
    KernelOptions together = o;
    together.markets = count;
    together.sharedInputs = sharedInputsOf(markets, size_t(count));  // what a ladder's markets share, once
    // The markets as a loop or copies, the loop's constants shared or not, ...: every field that keeps the bits.
    together.config = *genSameBitsConfig(o.config, e.name);
    noteRun(paths, seed, markets, describeOptions(together));
    auto kt = compileOn(e.name, tape, together);
    const RunResult rt = runKernel(*kt, markets, paths, seed);
    RC_ASSERT(rt.markets.size() == markets.size());
    auto ka = compileOn(e.name, tape, o);
    for (int m = 0; m < count; ++m) {
      const RunResult ra = runKernel(*ka, {markets[m]}, paths, seed);
      assertSameBits(rt.markets[m], ra.markets.at(0),
                     "market " + std::to_string(m) + ": " + std::to_string(count) + " markets together" +
                         " (config " + configText(together.config, e.name) + ") then alone");
    }
  });
}

// The same call twice, on the same kernel and on a second compilation of it,
// gives the same bits; and a value-only kernel gives the value of the greeks kernel.
TEST_P(Exact, SameSeedSameBits) {
  EngineUnderTest e;
  if (!runnable(GetParam(), e)) GTEST_SKIP() << GetParam() << " is not runnable here";
  const Budget b = budget(e.name, 40);
  checkProperty(e.name, b.cases, [&] {
    const auto [spec, tape, prec, markets, paths, seed] = drawCase(e, b);
    const KernelOptions o = anyKernel(tape, e, prec);
    noteRun(paths, seed, markets, describeOptions(o));
    auto k1 = compileOn(e.name, tape, o);
    const RunResult r1 = runKernel(*k1, markets, paths, seed);
    assertSameBits(r1, runKernel(*k1, markets, paths, seed), "first run then a second run of the same kernel");
    auto k2 = compileOn(e.name, tape, o, /*fresh=*/true);
    assertSameBits(r1, runKernel(*k2, markets, paths, seed), "first kernel then a second compilation");

    KernelOptions v = o;
    v.greeks = false;
    auto kv = compileOn(e.name, tape, v);
    const RunResult rv = runKernel(*kv, markets, paths, seed);
    if (!bitsMatch(rv.markets.at(0).value, r1.markets.at(0).value) ||
        !bitsMatch(rv.markets.at(0).valueStderr, r1.markets.at(0).valueStderr))
      RC_FAIL("value-only kernel gives " + describe(rv.markets[0].value) + " (stderr " +
              describe(rv.markets[0].valueStderr) + "), the greeks kernel " + describe(r1.markets[0].value) +
              " (stderr " + describe(r1.markets[0].valueStderr) + ")");
  });
}

// The result does not depend on how the paths are split: on CPU engines the
// thread count (EngineSettings::threads = 1, 2, 3, 8; a fresh compilation each),
// on GPU engines the groups per dispatch (DispatchOptions::maxGroups unset, 1 and
// 2..7: the same source, several dispatches whose partials the host adds in
// block order). Up to 3,500 paths on CPUs (several reduction blocks), 20,000 on GPUs.
TEST_P(Exact, ChunkingIndependent) {
  EngineUnderTest e;
  if (!runnable(GetParam(), e)) GTEST_SKIP() << GetParam() << " is not runnable here";
  const bool cpu = isCpuEngine(e.name);
  const Budget b = budget(e.name, 30);
  // GPU engines: enough paths for more dispatches than Vulkan records per submit.
  const uint64_t maxPaths = engineClass(e.name) == EngineClass::Multiprecision ? 1100 : cpu ? 3500 : 20000;
  checkProperty(e.name, b.cases, [&] {
    const auto [spec, tape] = caseTape(exactMode(), std::max(10, b.maxNodes / 10));
    const Precision prec = *gen::elementOf(e.precisions);
    const int count = cpu ? 1 : *gen::inRange(1, std::clamp(e.caps.maxMarkets, 1, 4) + 1);
    const auto markets = *genMarkets(spec, count, tape.numInputs());
    const uint64_t paths = *gen::inRange<uint64_t>(1, maxPaths + 1);
    const uint64_t seed = *gen::arbitrary<uint64_t>();
    KernelOptions o = anyKernel(tape, e, prec);
    o.markets = count;
    noteRun(paths, seed, markets, describeOptions(o));
    if (cpu) {
      std::optional<RunResult> first;
      EngineSettings settings = engineSettingsFromEnvironment();
      for (unsigned threads : {1u, 2u, 3u, 8u}) {
        settings.threads = threads;
        auto k = compileOn(e.name, tape, o, /*fresh=*/true, settings);
        const RunResult r = runKernel(*k, markets, paths, seed);
        if (!first) first = r;
        else assertSameBits(*first, r, "1 thread then " + std::to_string(threads));
      }
      return;
    }
    // The same source each time: the engine's caches make the recompiles cheap.
    o.dispatch.maxGroups = 0;
    const RunResult whole = runKernel(*compileOn(e.name, tape, o), markets, paths, seed);
    for (const uint32_t groups : {1u, static_cast<uint32_t>(*gen::inRange(2, 8))}) {
      o.dispatch.maxGroups = groups;
      assertSameBits(whole, runKernel(*compileOn(e.name, tape, o), markets, paths, seed),
                     "one dispatch then at most " + std::to_string(groups) + " groups per dispatch");
    }
  });
}

// Engines that can only compile here (cuda without a driver): every random
// tape and plan compiles. Runnable engines compile in every property above.
class Compile : public testing::TestWithParam<std::string> {};
TAPELAB_ENGINE_SUITE(Compile);

TEST_P(Compile, RandomTapesCompile) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (caps.usable && !caps.compileOnly) {
    GTEST_SKIP() << GetParam() << ": runnable here; the Exact properties compile it";
  }
  if (!caps.compileOnly) {
    GTEST_SKIP() << GetParam() << ": " << (caps.reason.empty() ? "not usable here" : caps.reason);
  }
  EngineUnderTest e{GetParam(), caps, {}};
  if (caps.fp64) e.precisions.push_back(Precision::F64);
  if (caps.fp32) e.precisions.push_back(Precision::F32);
  const Budget b = budget(e.name, 40);
  checkProperty(e.name, b.cases, [&] {
    const Tape tape = caseTape(TapeMode::Wild, b.maxNodes).tape;
    const Precision prec = *gen::elementOf(e.precisions);
    KernelOptions o = anyKernel(tape, e, prec);
    o.markets = *gen::inRange(1, std::min(8, caps.maxMarkets) + 1);
    o.greeks = *gen::weightedElement<bool>({{4, true}, {1, false}});
    logCase(describeOptions(o));
    auto k = compileOn(e.name, tape, o);
    RC_ASSERT(k != nullptr);
    (void)k->stats();
  });
}

}  // namespace
}  // namespace tapelab::props
