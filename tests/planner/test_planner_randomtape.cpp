// The seeded random tape generator: deterministic, valid, options honoured,
// well-conditioned values moderate on real draws.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "tape/philox.h"
#include "tape/random_tape.h"
#include "tape/textformat.h"

using namespace tapelab;

namespace {

// Forward values of one path, from the op table (the interpreter's own rule).
std::vector<double> forward(const Tape& t, uint64_t seed, uint64_t path) {
  std::vector<double> v(t.size());
  using std::exp;
  using std::log;
  using std::pow;
  using std::sqrt;
  using std::tanh;
  auto sel = [](bool c, double x, double y) { return c ? x : y; };
  const double zero = 0.0, one = 1.0;
  (void)one;
  for (int32_t i = 0; i < t.size(); ++i) {
    switch (t.op[i]) {
      case Op::Const: v[i] = t.imm[i]; break;
      case Op::Input: v[i] = t.inputDefaults[static_cast<size_t>(t.imm[i])]; break;
      case Op::Randn: v[i] = drawNormal<double>(seed, path, static_cast<uint32_t>(t.imm[i])); break;
#define TAPELAB_OP(Name, text, arity, group, fwd, adjA, adjB, adjC) \
  case Op::Name: {                                                  \
    [[maybe_unused]] const double a = v[t.a[i]];                    \
    [[maybe_unused]] const double b = arity >= 2 ? v[t.b[i]] : zero; \
    [[maybe_unused]] const double c = arity >= 3 ? v[t.c[i]] : zero; \
    v[i] = fwd;                                                     \
  } break;
#include "tape/ops.def"
    }
  }
  (void)sel;
  return v;
}

TEST(RandomTape, SameSeedSameTape) {
  RandomTapeOptions o;
  o.nodes = 500;
  for (uint64_t seed : {0ull, 1ull, 0xDEADBEEFull}) {
    const Tape a = randomTape(seed, o), b = randomTape(seed, o);
    EXPECT_EQ(writeTape(a), writeTape(b));
    EXPECT_NE(writeTape(a), writeTape(randomTape(seed + 1, o)));
  }
}

TEST(RandomTape, ValidAndShapedAsAsked) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    RandomTapeOptions o;
    o.nodes = 1 + static_cast<int32_t>(seed * 37 % 400);
    o.inputs = std::min<int>(o.nodes, static_cast<int>(seed % 5));
    o.draws = std::min<int>(o.nodes - o.inputs, static_cast<int>(seed % 23));
    o.drawIndices = seed % 3 == 0 ? 4 : 0;
    o.shuffleDraws = seed % 2 == 0;
    o.scatterInputs = seed % 4 == 1;
    o.kinks = seed % 5 != 0;
    o.wellConditioned = seed % 7 != 0;
    const Tape t = randomTape(seed, o);
    SCOPED_TRACE(t.name);
    EXPECT_EQ(validate(t), "");
    EXPECT_EQ(t.size(), o.nodes);
    EXPECT_EQ(t.numInputs(), o.inputs);
    EXPECT_EQ(t.output, o.nodes - 1);
    std::vector<uint32_t> ks;
    for (int32_t i = 0; i < t.size(); ++i) {
      if (t.op[i] == Op::Randn) ks.push_back(static_cast<uint32_t>(t.imm[i]));
      if (!o.kinks) {
        EXPECT_NE(info(t.op[i]).group, OpGroup::Kink);
        EXPECT_NE(info(t.op[i]).group, OpGroup::Step);
      }
      if (!o.scatterInputs && i < o.inputs) {
        EXPECT_EQ(t.op[i], Op::Input);
      }
    }
    ASSERT_EQ(static_cast<int>(ks.size()), o.draws);
    if (o.drawIndices == 0) {
      EXPECT_EQ(std::set<uint32_t>(ks.begin(), ks.end()).size(), ks.size());  // each k once
      for (uint32_t k : ks) EXPECT_LT(k, static_cast<uint32_t>(o.draws));
    } else {
      for (uint32_t k : ks) EXPECT_LT(k, static_cast<uint32_t>(o.drawIndices));
    }
    if (!o.shuffleDraws) {
      EXPECT_TRUE(std::is_sorted(ks.begin(), ks.end()));
    }
  }
  // Out of order and reused draw indices happen.
  RandomTapeOptions o;
  o.nodes = 200;
  o.draws = 30;
  o.drawIndices = 10;
  const Tape t = randomTape(5, o);
  std::vector<uint32_t> ks;
  for (int32_t i = 0; i < t.size(); ++i)
    if (t.op[i] == Op::Randn) ks.push_back(static_cast<uint32_t>(t.imm[i]));
  EXPECT_FALSE(std::is_sorted(ks.begin(), ks.end()));
  EXPECT_LT(std::set<uint32_t>(ks.begin(), ks.end()).size(), ks.size());
}

// The op list comes from tape/ops.def: every op of the table appears (kinks
// only when allowed), so a new op is generated without touching the generator.
TEST(RandomTape, DrawsEveryOpOfTheTable) {
  for (const bool wellConditioned : {false, true}) {
    for (const bool kinks : {true, false}) {
      RandomTapeOptions o;
      o.nodes = 3000;
      o.wellConditioned = wellConditioned;
      o.kinks = kinks;
      const Tape t = randomTape(7, o);
      const std::set<Op> seen(t.op.begin(), t.op.end());
      for (const OpInfo& op : kOps)
        EXPECT_EQ(seen.count(op.op), kinks || (op.group != OpGroup::Kink && op.group != OpGroup::Step) ? 1u : 0u)
            << op.name << (wellConditioned ? ", well-conditioned" : ", wild") << (kinks ? "" : ", no kinks");
    }
  }
}

TEST(RandomTape, WellConditionedValuesStayModerate) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    RandomTapeOptions o;
    o.nodes = 400;
    o.draws = 40;
    const Tape t = randomTape(seed, o);
    for (uint64_t path = 0; path < 50; ++path)
      for (double x : forward(t, 42, path)) ASSERT_TRUE(std::isfinite(x) && std::fabs(x) <= 100.0) << t.name << " " << x;
  }
}

TEST(RandomTape, ImpossibleOptionsAreRejected) {
  auto bad = [](auto change) {
    RandomTapeOptions o;
    change(o);
    EXPECT_THROW(randomTape(1, o), std::invalid_argument);
  };
  bad([](RandomTapeOptions& o) { o.nodes = 0; });
  bad([](RandomTapeOptions& o) { o.inputs = -1; });
  bad([](RandomTapeOptions& o) { o.nodes = 5, o.inputs = 3, o.draws = 3; });
  bad([](RandomTapeOptions& o) { o.drawIndices = -2; });
  bad([](RandomTapeOptions& o) { o.reach = 0.5; });
  bad([](RandomTapeOptions& o) { o.farProbability = 1.5; });
}

}  // namespace
