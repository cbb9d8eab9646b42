// Philox4x32-10 against every known-answer line of tests/data/philox_kat.txt,
// and the draw mapping (README "Random numbers", version 3) against its own known answers.
#include <gtest/gtest.h>

#include <bit>
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

// Version 3's quantile in the central region (|u - 1/2| <= 1/2 - 0.02425): Horner by fused
// multiply-adds, then * q and one division. The answers below were computed outside tapelab, with
// exact rationals rounded correctly to binary64 and binary32 after every operation
// (tests/data/normal_kat.py prints them), so no libm and no FMA unit stand
// behind them; version 2 (separate multiplies and adds) misses 3 of the 10 in fp64 and 4 in fp32.
struct NormalKat {
  uint32_t word;
  uint64_t z64;  // bits of the double
  uint32_t z32;  // bits of the float
};
constexpr NormalKat kNormalKats[] = {
    {0x9ceaf053, 0x3fd25ee56e0d4807, 0x3e92f72c},  // 0.28704200503591476
    {0x77f5493b, 0xbfb42dc6f302e7e9, 0xbda16e37},  // -0.078823503807967335
    {0x12bf50ad, 0xbff73bf40481c444, 0xbfb9df6f},  // -1.4521370101977178
    {0x5742b3d7, 0xbfda3f4aedd4100a, 0xbed1fa57},  // -0.41011307931353314
    {0x0cdb2127, 0xbffa48a6fa49486d, 0xbfd244f9},  // -1.6427373673255048
    {0x53ba6cfd, 0xbfdcaca1d0e11ccb, 0xbee5650e},  // -0.44803662680028528
    {0x838f5a6e, 0x3fa1d9c8ced42241, 0x3d0ece46},  // 0.034864688155782371
    {0x744e06fb, 0xbfbd61412242b79d, 0xbdeb0a09},  // -0.11476523481789376
    {0x7fffff00, 0xbe840d932057548e, 0xb4206c99},  // -1.494066880619078e-07
    {0x08000000, 0xbffdcdbf0a78f9ae, 0xbfee6b8b},  // -1.8627310189327591
};

TEST(Philox, NormalQuantileKnownAnswers) {
  for (const NormalKat& kat : kNormalKats) {
    const double z64 = normalQuantile<double>(uniformFromWord<double>(kat.word));
    const float z32 = normalQuantile<float>(uniformFromWord<float>(kat.word));
    EXPECT_EQ(std::bit_cast<uint64_t>(z64), kat.z64) << std::hex << "word 0x" << kat.word << " fp64 " << z64;
    EXPECT_EQ(std::bit_cast<uint32_t>(z32), kat.z32) << std::hex << "word 0x" << kat.word << " fp32 " << z32;
  }
}
