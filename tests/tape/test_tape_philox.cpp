// Philox4x32-10 against every known-answer line of tests/data/philox_kat.txt.
#include <gtest/gtest.h>

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
