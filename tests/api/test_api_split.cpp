// A run split at block boundaries (Kernel::runBlocks, what api/ranks.h gives each MPI rank)
// and reduced in block order (BlockReduction) returns run()'s bits on every engine that runs
// here, plain and checkpointed, value-only and with Greeks, one and several markets, from a
// path offset: without MPI, so the GPU engines' part is checked wherever they run.
#include <gtest/gtest.h>

#include "api/ranks.h"
#include "api/registry.h"
#include "tape/products/products.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

class Split : public ::testing::TestWithParam<std::string> {};

// run(paths) against runBlocks over the parts cut at `cuts` (in blocks; the last part runs to the end).
void expectSplitGivesRunBits(Kernel& kernel, const std::vector<std::vector<double>>& inputs, uint64_t paths,
                             const std::vector<uint64_t>& cuts, const std::string& what) {
  const uint64_t block = kernel.blockPaths();
  ASSERT_GT(block, 0u) << what;
  BlockReduction reduction;
  uint64_t first = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const uint64_t end = i < cuts.size() ? std::min(paths, cuts[i] * block) : paths;
    if (end > first) kernel.runBlocks(inputs, first, end - first, 42, reduction);
    first = std::max(first, end);
  }
  testutil::expectSameBits(reduction.finish(inputs.size(), inputs[0].size(), paths, 42), kernel.run(inputs, paths, 42),
                           what);
}

TEST_P(Split, BlocksReducedInOrderGiveRunBits) {
  const EngineEntry& entry = findEngine(GetParam());
  const EngineCaps caps = engineCaps(entry);
  if (!caps.usable || caps.compileOnly) GTEST_SKIP() << entry.name << " cannot run here: " << caps.reason;
  auto engine = entry.make(engineSettingsFromEnvironment());
  const Tape tape = products::asianCall().record(12);
  struct Case {
    KernelKind kind;
    bool greeks;
    int markets;
  };
  for (const Case c : {Case{KernelKind::Plain, true, 1}, Case{KernelKind::Register, true, 3},
                       Case{KernelKind::Plain, false, 2}}) {
    if (c.markets > caps.maxMarkets) continue;
    KernelOptions o = testutil::kindOptions(tape, c.kind, 3, 0, ScratchLayout::SoA, c.markets, caps.defaultPrecision);
    o.greeks = c.greeks;
    o.dispatch.pathOffset = c.markets == 3 ? (uint64_t{1} << 32) - 700 : 0;  // across the 32-bit boundary
    auto kernel = engine->compile(tape, o);
    std::vector<std::vector<double>> inputs;
    for (int m = 0; m < c.markets; ++m) {
      inputs.push_back(tape.inputDefaults);
      inputs.back()[0] += m;
    }
    const uint64_t block = kernel->blockPaths();
    const std::string what = entry.name + " " + toString(c.kind) + (c.greeks ? " greeks" : " value") + " markets " +
                             std::to_string(c.markets);
    // Uneven parts, an empty one, the last block partial.
    expectSplitGivesRunBits(*kernel, inputs, 5 * block + 17, {1, 1, 3}, what);
    expectSplitGivesRunBits(*kernel, inputs, 2 * block, {0, 2}, what + " (whole blocks)");
    // The chunks a split over ranks hands out (api/ranks.h), one-block granules.
    const std::vector<uint64_t> starts = ranks::chunkStarts(9, 1, 2);
    expectSplitGivesRunBits(*kernel, inputs, 8 * block + 5, std::vector<uint64_t>(starts.begin() + 1, starts.end()),
                            what + " (rank chunks)");
  }
}

// Chunks cover the blocks in order, whole granules but the last, never growing, at most kMaxChunks;
// the first a quarter of the blocks over the ranks, the last ones one granule (a short tail).
TEST(RankChunks, GuidedWholeGranulesCoverEveryBlock) {
  struct Case {
    uint64_t blocks, granule;
    int ranks;
  };
  for (const Case c : {Case{1, 1, 1}, Case{5, 1, 3}, Case{293, 1, 2}, Case{3906250, 4096, 2}, Case{250000, 4096, 2},
                       Case{100, 64, 8}, Case{uint64_t{1} << 40, 1, 2}}) {
    const std::vector<uint64_t> s = ranks::chunkStarts(c.blocks, c.granule, c.ranks);
    const std::string what = std::to_string(c.blocks) + " blocks, granule " + std::to_string(c.granule);
    ASSERT_GE(s.size(), 2u) << what;
    EXPECT_EQ(s.front(), 0u) << what;
    EXPECT_EQ(s.back(), c.blocks) << what;
    EXPECT_LE(s.size() - 1, ranks::kMaxChunks) << what;
    for (size_t i = 1; i + 1 < s.size(); ++i) {
      EXPECT_EQ((s[i] - s[i - 1]) % c.granule, 0u) << what << " chunk " << i - 1;
      EXPECT_GE(s[i] - s[i - 1], s[i + 1] - s[i]) << what << " chunk " << i;
    }
  }
  // 1G paths of 256 on two ranks, 2^20-path granules: a few dozen chunks, an eighth first, 2^20 paths last.
  const std::vector<uint64_t> s = ranks::chunkStarts(3906250, 4096, 2);
  EXPECT_LT(s.size(), 80u);
  EXPECT_EQ(s[1], (3906250 / 8 + 4095) / 4096 * 4096);
  EXPECT_EQ(s[s.size() - 2] - s[s.size() - 3], 4096u);
  EXPECT_EQ(ranks::chunkGranule(256), 4096u);
  EXPECT_EQ(ranks::chunkGranule(1000), 1049u);
}

std::vector<std::string> enginesButMp() {  // every engine but reference-mp (the multiprecision interpreter)
  std::vector<std::string> out = engineNames();
  std::erase(out, "reference-mp");
  return out;
}

INSTANTIATE_TEST_SUITE_P(Engines, Split, ::testing::ValuesIn(enginesButMp()), testutil::engineParamName);

}  // namespace
