// Philox4x32-10 against every known-answer line of tests/data/philox_kat.txt,
// and the draw mapping (docs/tape-format.md "Random numbers", version 4) against its own known answers.
#include <gtest/gtest.h>

#include <bit>
#include <algorithm>
#include <cmath>
#include <limits>
#include <fstream>
#include <sstream>

#include "tape/philox.h"

using namespace tapelab;

TEST(Philox, KnownAnswers) {
  std::ifstream f(TAPELAB_SOURCE_DIR "/tests/data/philox_kat.txt");
  ASSERT_TRUE(f) << "missing tests/data/philox_kat.txt";
  int checked = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name;
    int rounds = 0;
    ss >> name >> std::dec >> rounds;
    uint32_t w[10];
    for (auto& x : w) ss >> std::hex >> x;
    ASSERT_TRUE(ss) << line;
    const auto out = philox4x32({w[0], w[1], w[2], w[3]}, {w[4], w[5]}, rounds);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], w[6 + i]) << line << " word " << i;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(Philox, UniformsStrictlyInsideUnitInterval) {
  EXPECT_GT(uniformFromWord<float>(0u), 0.0f);
  EXPECT_LT(uniformFromWord<float>(0xFFFFFFFFu), 1.0f);
  EXPECT_GT(uniformFromWord<double>(0u), 0.0);
  EXPECT_LT(uniformFromWord<double>(0xFFFFFFFFu), 1.0);
  // Same uniform in float and double: the dice are identical across precisions.
  for (uint32_t w : {0u, 1u, 255u, 256u, 0x80000000u, 0xFFFFFFFFu, 0x12345678u})
    EXPECT_EQ(static_cast<double>(uniformFromWord<float>(w)), uniformFromWord<double>(w));
}

// Version 2's mapping: draw k of path p under seed s is word k % 4 of
// Philox4x32-10({k / 4, 0, p mod 2^32, p div 2^32}, {s mod 2^32, s div 2^32}).
// The words below were computed outside tapelab (a separate Philox in Python,
// checked against Random123's KATs), so a change of the mapping shows here.
struct DrawKat {
  uint64_t seed, path;
  uint32_t words[8];  // draws 0 .. 7
};
constexpr DrawKat kDrawKats[] = {
    {42, 0, {0x9ceaf053, 0x77f5493b, 0x12bf50ad, 0x5742b3d7, 0xfcdb2127, 0x53ba6cfd, 0x838f5a6e, 0x744e06fb}},
    {42, (uint64_t{1} << 32) + 5,
     {0xd5eff37b, 0x9931d6c3, 0x820c292a, 0xf062d0f5, 0xd1f26420, 0xd61ad8b1, 0xd27e95a6, 0x0efd00c1}},
    {0xfedcba9876543210ull, 0,
     {0xba4b834c, 0x0559bf7f, 0xf35d3e34, 0x349c2ad4, 0x29fcc21d, 0x061121ec, 0x300a371d, 0xcf798377}},
    {0xfedcba9876543210ull, (uint64_t{1} << 32) + 5,
     {0xb12916dd, 0x49418bb2, 0x9cd802ac, 0x33c57821, 0x8a4133be, 0xb7d8212a, 0x1deea386, 0xd1dd93f1}},
};

TEST(Philox, DrawWordKnownAnswers) {
  for (const DrawKat& kat : kDrawKats)
    for (uint32_t k = 0; k < 8; ++k)
      EXPECT_EQ(drawWord(kat.seed, kat.path, k), kat.words[k]) << "seed " << kat.seed << " path " << kat.path << " k " << k;
}

// The same mapping spelled from raw Philox calls, over indices where k / 4
// and the path's halves carry (k near 2^32, path near 2^32 and 2^64).
TEST(Philox, DrawWordIsWordKMod4OfCallKDiv4) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{42}, uint64_t{0xfedcba9876543210ull}})
    for (uint64_t path : {uint64_t{0}, uint64_t{1}, (uint64_t{1} << 32) - 1, (uint64_t{1} << 32) + 5, ~uint64_t{0}})
      for (uint32_t k : {0u, 1u, 2u, 3u, 4u, 7u, 251u, 0xfffffffcu, 0xffffffffu}) {
        const Philox4x32Ctr call = philox4x32({k >> 2, 0u, uint32_t(path), uint32_t(path >> 32)},
                                              {uint32_t(seed), uint32_t(seed >> 32)});
        EXPECT_EQ(drawWord(seed, path, k), call[k & 3u]) << "seed " << seed << " path " << path << " k " << k;
        EXPECT_EQ(drawGroupWords(seed, path, k / kDrawsPerCall), call);
      }
}

// Version 4's Box-Muller pairs (tape/philox.h). The answers below were computed outside tapelab, with
// exact rationals rounded correctly to binary64 and binary32 after every operation, and log and sqrt
// rounded correctly from 60 digits (tests/data/normal_kat.py prints them): no libm and no FMA unit
// stand behind them. The angle's cos and sin use no libm at all; the draws hold where libm's log and
// sqrt round correctly for these words (glibc's do). The words: draws 0..7 of path 0 under seed 42,
// then the edges (u at 2^-24 and 1 - 2^-24, angles at the quadrant boundaries).
struct PairKat {
  uint32_t a, b;            // the pair's words
  uint64_t even64, odd64;   // bits of the doubles
  uint32_t even32, odd32;   // bits of the floats
};
constexpr PairKat kPairKats[] = {
    {0x9ceaf053, 0x77f5493b, 0xbfe1900f936c5cdc, 0x3fea57d13dca0c9b, 0xbf0c807d, 0x3f52be8a},  // -0.54883555215465263 0.82321989124502026
    {0x12bf50ad, 0x5742b3d7, 0x3fdf26331f78e5d7, 0x4001df8351fdeea7, 0x3ef93199, 0x400efc1b},  // 0.48670652459585767 2.2341371923083275
    {0xfcdb2127, 0x53ba6cfd, 0x3fa7e0edb26a555d, 0x3fc33788b79eac31, 0x3d3f076e, 0x3e19bc46},  // 0.046637943295688024 0.1501322647648933
    {0x838f5a6e, 0x744e06fb, 0xbfe1a6237b74402f, 0x3ff0376b43deddb6, 0xbf0d311c, 0x3f81bb5a},  // -0.55153059112672576 1.0135300303644335
    {0x00000000, 0xffffffff, 0x4010508deef69b1d, 0xc010508ebbfb7b41, 0x4082846f, 0xc0828475},  // 4.0786664331451705 -4.0786694881670096
    {0xffffffff, 0x00000000, 0x3f3000006887f5dd, 0xbf2fffff3eeec9fe, 0x39800003, 0xb97ffffa},  // 0.00024414072007047737 -0.00024414053720318846
    {0x7fffff00, 0x40000000, 0x3feaa449106b2273, 0x3feaa44a5f3695b6, 0x3f552249, 0x3f552252},  // 0.83255437094437779 0.83255499454815296
    {0x08000000, 0xbfffffff, 0xbffdc95058d25e2c, 0xbffdc94ee2828f5d, 0xbfee4a82, 0xbfee4a78},  // -1.861648890457114 -1.8616474960371854
};

struct AngleKat {
  uint32_t b;
  uint64_t x64, y64;  // cos and sin of theta + n pi/2, bits of the doubles
  uint32_t x32, y32;  // and of the floats
};
constexpr AngleKat kAngleKats[] = {
    {0x77f5493b, 0xbfe1c03b562fb98e, 0x3feaa012219a47df, 0xbf0e01db, 0x3f550091},  // -0.55471579392706061 0.83203989565867775
    {0x5742b3d7, 0x3fcb3ee9e7044753, 0x3fef44441ca8c1a1, 0x3e59f74f, 0x3f7a2221},  // 0.21285747318375545 0.97708325955868613
    {0x53ba6cfd, 0x3fd2fc7fa6db5195, 0x3fee8f3802a68db2, 0x3e97e3fe, 0x3f7479c0},  // 0.29666129393196999 0.95498276250548586
    {0x744e06fb, 0xbfde973d60cf0e6e, 0x3fec1b9bd593515d, 0xbef4b9eb, 0x3f60dcdf},  // -0.47798094228730903 0.87837020601231652
    {0xffffffff, 0x3fe6a09dd8522d75, 0xbfe6a09ef4ab6093, 0x3f3504ef, 0xbf3504f7},  // 0.70710651636311062 -0.70710704600334606
    {0x00000000, 0x3fe6a09ef4ab6093, 0xbfe6a09dd8522d75, 0x3f3504f7, 0xbf3504ef},  // 0.70710704600334606 -0.70710651636311062
    {0x40000000, 0x3fe6a09dd8522d75, 0x3fe6a09ef4ab6093, 0x3f3504ef, 0x3f3504f7},  // 0.70710651636311062 0.70710704600334606
    {0xbfffffff, 0xbfe6a09ef4ab6093, 0xbfe6a09dd8522d75, 0xbf3504f7, 0xbf3504ef},  // -0.70710704600334606 -0.70710651636311062
};

TEST(Philox, BoxMullerAngleKnownAnswers) {
  for (const AngleKat& kat : kAngleKats) {
    const NormalPair<double> d = boxMullerAngle<double>(kat.b);
    const NormalPair<float> f = boxMullerAngle<float>(kat.b);
    EXPECT_EQ(std::bit_cast<uint64_t>(d.even), kat.x64) << std::hex << "word 0x" << kat.b << " fp64 cos";
    EXPECT_EQ(std::bit_cast<uint64_t>(d.odd), kat.y64) << std::hex << "word 0x" << kat.b << " fp64 sin";
    EXPECT_EQ(std::bit_cast<uint32_t>(f.even), kat.x32) << std::hex << "word 0x" << kat.b << " fp32 cos";
    EXPECT_EQ(std::bit_cast<uint32_t>(f.odd), kat.y32) << std::hex << "word 0x" << kat.b << " fp32 sin";
  }
}

TEST(Philox, BoxMullerKnownAnswers) {
  for (const PairKat& kat : kPairKats) {
    const NormalPair<double> d = boxMuller<double>(kat.a, kat.b);
    const NormalPair<float> f = boxMuller<float>(kat.a, kat.b);
    EXPECT_EQ(std::bit_cast<uint64_t>(d.even), kat.even64) << std::hex << "words 0x" << kat.a << " 0x" << kat.b << " fp64 " << d.even;
    EXPECT_EQ(std::bit_cast<uint64_t>(d.odd), kat.odd64) << std::hex << "words 0x" << kat.a << " 0x" << kat.b << " fp64 " << d.odd;
    EXPECT_EQ(std::bit_cast<uint32_t>(f.even), kat.even32) << std::hex << "words 0x" << kat.a << " 0x" << kat.b << " fp32 " << f.even;
    EXPECT_EQ(std::bit_cast<uint32_t>(f.odd), kat.odd32) << std::hex << "words 0x" << kat.a << " 0x" << kat.b << " fp32 " << f.odd;
  }
}

// Draw k is the pair of words 2(k % 4 / 2), +1 of group k / 4: even k its first draw, odd k its second.
TEST(Philox, DrawNormalIsItsPairsDraw) {
  for (uint64_t path : {uint64_t{0}, uint64_t{7}, (uint64_t{1} << 32) + 5})
    for (uint32_t k = 0; k < 16; ++k) {
      const Philox4x32Ctr w = drawGroupWords(42, path, k / 4);
      const uint32_t first = (k % 4) & 2u;  // spelled out here, not pairFirstWord: the test states the rule
      const NormalPair<double> d = boxMuller<double>(w[first], w[first + 1]);
      const NormalPair<float> f = boxMuller<float>(w[first], w[first + 1]);
      EXPECT_EQ(drawNormal<double>(42, path, k), k % 2 ? d.odd : d.even) << "path " << path << " k " << k;
      EXPECT_EQ(drawNormal<float>(42, path, k), k % 2 ? f.odd : f.even) << "path " << path << " k " << k;
    }
}

// The draws are standard normal: moments of 2^18 draws in fp64 (10 standard errors of room), and
// the pair's two draws uncorrelated.
TEST(Philox, DrawsHaveStandardNormalMoments) {
  const int n = 1 << 18;
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0, cross = 0;
  for (int i = 0; i < n / 2; ++i) {
    const double a = drawNormal<double>(7, uint64_t(i), 0), b = drawNormal<double>(7, uint64_t(i), 1);
    for (double z : {a, b}) {
      m1 += z;
      m2 += z * z;
      m3 += z * z * z;
      m4 += z * z * z * z;
    }
    cross += a * b;
  }
  m1 /= n, m2 /= n, m3 /= n, m4 /= n, cross /= n / 2;
  EXPECT_NEAR(m1, 0.0, 10 / std::sqrt(double(n)));
  EXPECT_NEAR(m2, 1.0, 10 * std::sqrt(2.0 / n));
  EXPECT_NEAR(m3, 0.0, 10 * std::sqrt(15.0 / n));
  EXPECT_NEAR(m4, 3.0, 10 * std::sqrt(96.0 / n));
  EXPECT_NEAR(cross, 0.0, 10 / std::sqrt(n / 2.0));
}

// properties/bound.cpp allows an exact engine's draw 64 eps of absolute error against the same formula
// evaluated exactly (what reference-mp's 50 digits stand for): the largest error of fp32 and fp64 over
// 2^19 pairs of words against the formula in long double, with the edges of u and the quadrants among them.
TEST(Philox, DrawErrorIsWithinTheBound) {
  double worst32 = 0, worst64 = 0;
  auto check = [&](uint32_t a, uint32_t b) {
    const NormalPair<long double> x = boxMuller<long double>(a, b);
    const NormalPair<float> f = boxMuller<float>(a, b);
    const NormalPair<double> d = boxMuller<double>(a, b);
    worst32 = std::max({worst32, double(std::fabs(f.even - x.even)), double(std::fabs(f.odd - x.odd))});
    worst64 = std::max({worst64, double(std::fabs(d.even - x.even)), double(std::fabs(d.odd - x.odd))});
  };
  for (uint32_t g = 0; g < (1u << 18); ++g) {
    const Philox4x32Ctr w = drawGroupWords(3, g, 0);
    check(w[0], w[1]);
    check(w[2], w[3]);
  }
  for (uint32_t a : {0u, 0x1ffu, 0xfffffe00u, 0xffffffffu, 0x80000000u})
    for (uint32_t b : {0u, 0x3fffffffu, 0x40000000u, 0x7fffffffu, 0x80000000u, 0xbfffffffu, 0xc0000000u, 0xffffffffu})
      check(a, b);
  const double eps32 = std::numeric_limits<float>::epsilon(), eps64 = std::numeric_limits<double>::epsilon();
  RecordProperty("worst_fp32_eps", std::to_string(worst32 / eps32));
  RecordProperty("worst_fp64_eps", std::to_string(worst64 / eps64));
  EXPECT_LE(worst32, 64 * eps32) << worst32 / eps32 << " eps";
  EXPECT_LE(worst64, 64 * eps64) << worst64 / eps64 << " eps";
}
