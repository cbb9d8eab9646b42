// The draws (tape/philox.h, version 4: Box-Muller pairs) as every engine computes them, one path at a
// time: a tape x * z0 + y * z1 + v * z2 + w * z3 whose Greeks are the path's four draws (a Philox call's two
// pairs, so both the cosine and the sine side of each), against drawNormal<double>. At the ends of the
// uniform too: u = 1 - 2^-24 (the smallest radius, where a log good only to an absolute error could go
// positive and the radius NaN without philox.h's max) and u = 2^-24 (the largest draw, |z| near 5.77).
#include <gtest/gtest.h>

#include <cmath>

#include "api/registry.h"
#include "tape/philox.h"
#include "tape/recorder.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

constexpr uint64_t kSeed = 42;
// Paths whose draw 0 has (word >> 9) == 2^23 - 1 (u = 1 - 2^-24) and == 0 (u = 2^-24) under kSeed, found by
// a search over paths (the known answers of the test below check it), then two ordinary paths.
constexpr uint64_t kNearOne = 713849, kNearZero = 378394;
const uint64_t kPaths[] = {kNearOne, kNearZero, 0, (uint64_t{1} << 32) + 5};

Tape fourDrawsTape() {
  Recorder rec;
  Var x = rec.input("x", 1.0), y = rec.input("y", 1.0), v = rec.input("v", 1.0), w = rec.input("w", 1.0);
  rec.output(x * rec.randn(0) + y * rec.randn(1) + v * rec.randn(2) + w * rec.randn(3));
  return rec.finish();
}

class Draws : public ::testing::TestWithParam<std::string> {};

TEST(DrawsSearch, ThePathsSitAtTheEndsOfTheUniform) {
  EXPECT_EQ(drawWord(kSeed, kNearOne, 0) >> 9, (1u << 23) - 1u);
  EXPECT_EQ(drawWord(kSeed, kNearZero, 0) >> 9, 0u);
  EXPECT_LT(std::hypot(drawNormal<double>(kSeed, kNearOne, 0), drawNormal<double>(kSeed, kNearOne, 1)), 3.5e-4);
  EXPECT_GT(std::hypot(drawNormal<double>(kSeed, kNearZero, 0), drawNormal<double>(kSeed, kNearZero, 1)), 5.76);
}

TEST_P(Draws, EachEngineDrawsPhiloxsNormalsAtTheEndsOfTheUniform) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable || caps.compileOnly) GTEST_SKIP() << entry.name << " cannot run here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Tape tape = fourDrawsTape();
  const bool fp32 = caps.defaultPrecision == Precision::F32;
  // A draw's error against the formula in double: a few ulp of its precision, and on Vulkan (GLSL.std.450's
  // log: 2^-21 absolute near 1) up to 2 * 2^-21 / rho at the smallest radius (properties/bound.cpp).
  const double eps = fp32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
  const double absolute = entry.name == "vulkan" ? 2 * 4.76837158203125e-07 / 3.4526698300124393e-04 : 0.0;
  for (uint64_t path : kPaths) {
    KernelOptions o;
    o.precision = caps.defaultPrecision;
    o.dispatch.pathOffset = path;
    const MarketResult r = engine->compile(tape, o)->run({tape.inputDefaults}, 1, kSeed).markets.at(0);
    ASSERT_EQ(r.greeks.size(), 4u);
    for (uint32_t k = 0; k < 4; ++k) {
      const double z = drawNormal<double>(kSeed, path, k);
      EXPECT_TRUE(std::isfinite(r.greeks[k])) << entry.name << " path " << path << " draw " << k;
      EXPECT_NEAR(r.greeks[k], z, 64 * eps * std::max(1.0, std::fabs(z)) + absolute)
          << entry.name << " path " << path << " draw " << k;
      // The interpreters draw with philox.h's own function in their precision: the same bits.
      if (entry.name == "reference" || entry.name == "reference-f32") {
        EXPECT_EQ(r.greeks[k], fp32 ? double(drawNormal<float>(kSeed, path, k)) : z)
            << entry.name << " path " << path << " draw " << k;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Draws, ::testing::ValuesIn(engineNames()), testutil::engineParamName);

}  // namespace
