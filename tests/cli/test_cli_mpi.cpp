// `mpirun -np N tapelab price|run|compare` (api/ranks.h): the paths split over N ranks give the
// single-process bits (value, Greeks, standard errors) for N = 1, 2, 3 on the CPU engines (and
// Vulkan on lavapipe), whatever the chunks each rank takes (none on some ranks included); ranks that
// disagree (another tape, an unusable engine) stop together with one line naming the rank.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

const std::string kTapelab = "'" TAPELAB_BINARY_DIR "/cli/tapelab'";
const std::string kMpirun = "'" TAPELAB_MPIEXEC "' --oversubscribe --allow-run-as-root --bind-to none";

struct Proc {
  int code = -1;
  std::string out, err;
};

// Runs `line` (stderr into out after a marker line); one CPU thread per rank on this small machine.
Proc sh(const std::string& line) {
  const std::string cmd = "{ TAPELAB_THREADS=1 " + line + " ; } 2>&1; echo \"@rc=$?\"";
  Proc p;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return p;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) p.out.append(buf, n);
  pclose(pipe);
  const size_t at = p.out.rfind("@rc=");
  if (at != std::string::npos) {
    p.code = std::stoi(p.out.substr(at + 4));
    p.out.erase(at);
  }
  return p;
}

// The numbers of price --json: from "value": to before "kernel_stats" (times and rank counts left out;
// "identical_to_plain":"value" of a tangent row is no start).
std::vector<std::string> numbers(const std::string& json) {
  std::vector<std::string> out;
  for (size_t at = 0; (at = json.find("\"value\":", at)) != std::string::npos;) {
    const size_t end = json.find("\"kernel_stats\"", at);
    out.push_back(json.substr(at, end - at));
    at = end;
  }
  return out;
}

// chunkPaths: TAPELAB_MPI_CHUNK_PATHS ("": the default, 2^20 paths: one chunk for these small runs).
Proc price(int ranks, const std::string& args, const std::string& chunkPaths = "") {
  const std::string command = kTapelab + " price --json " + args;
  const std::string env = chunkPaths.empty() ? "" : "TAPELAB_MPI_CHUNK_PATHS=" + chunkPaths + " ";
  return sh(ranks == 0 ? command : env + kMpirun + " -np " + std::to_string(ranks) + " " + command);
}

// A JSON array's text, e.g. "[2,1,0]" for "rank_chunks".
std::string jsonArrayText(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":[");
  if (at == std::string::npos) return "";
  const size_t open = json.find('[', at);
  return json.substr(open, json.find(']', open) - open + 1);
}

// Every count of ranks gives the single process's bits, with the default chunks and with
// one-block granules (many uneven chunks, taken in whatever order the ranks finish).
void expectSameBitsForEveryRankCount(const std::string& args, const std::vector<int>& counts = {1, 2, 3}) {
  const Proc one = price(0, args);
  ASSERT_EQ(one.code, 0) << one.out;
  const std::vector<std::string> want = numbers(one.out);
  ASSERT_FALSE(want.empty()) << one.out;
  for (int n : counts)
    for (const std::string chunkPaths : {"", "1"}) {
      if (n == 1 && !chunkPaths.empty()) continue;  // one rank: no split
      const Proc split = price(n, args, chunkPaths);
      const std::string what = "-np " + std::to_string(n) + " chunk paths '" + chunkPaths + "' " + args;
      ASSERT_EQ(split.code, 0) << what << ": " << split.out;
      EXPECT_EQ(numbers(split.out), want) << what;
      if (n > 1) {
        EXPECT_NE(split.out.find("\"ranks\":{\"count\":" + std::to_string(n)), std::string::npos) << split.out;
        EXPECT_NE(jsonArrayText(split.out, "rank_chunks"), "") << split.out;
      }
    }
}

TEST(CliMpi, ReferenceSameBitsForOneTwoThreeRanks) {
  // 5000 paths: 5 blocks of 1024 (2/2/1... split 1/2/2 over three ranks, the last one partial).
  expectSameBitsForEveryRankCount("--product asian --steps 16 --paths 5000 --engine reference");
  // One block: ranks 1 and 2 of three run nothing.
  expectSameBitsForEveryRankCount("--product european --paths 700 --engine reference --seed 7");
  const Proc lone = price(3, "--product european --paths 700 --engine reference --seed 7");
  EXPECT_EQ(jsonArrayText(lone.out, "rank_chunks"), "[1,0,0]") << lone.out;
  // Several markets per dispatch, a checkpointed kernel, fp32 interpreter.
  expectSameBitsForEveryRankCount("--product asian --steps 24 --paths 4100 --engine reference-f32 --checkpoint 3 "
                                  "--ladder spot=90,100,110");
}

TEST(CliMpi, CpuJitSameBitsForOneTwoThreeRanks) {
  expectSameBitsForEveryRankCount("--product asian --steps 16 --paths 6000 --engine cpu-jit --fp32");
  expectSameBitsForEveryRankCount("--product basket --assets 2 --steps 4 --paths 3500 --engine cpu-jit "
                                  "--checkpoint 2 --ladder spot1=95,105");
}

TEST(CliMpi, VulkanSameBitsSplitOverTwoRanks) {
  const Proc engines = sh(kTapelab + " engines");
  if (engines.out.find("vulkan         yes") == std::string::npos)
    GTEST_SKIP() << "vulkan is not usable here";
  // 256 paths per workgroup: 9 blocks, the last partial. Two ranks only: lavapipe builds the
  // pipeline again in every process (seconds each).
  expectSameBitsForEveryRankCount("--product european --paths 2100 --engine vulkan --seed 3", {2});
}

TEST(CliMpi, RanksThatDisagreeStopTogetherNamingTheRank) {
  const std::string rank0 = kTapelab + " price --product asian --steps 16 --paths 3000";
  Proc p = sh(kMpirun + " -np 1 " + rank0 + " : -np 1 " + kTapelab + " price --product asian --steps 17 --paths 3000");
  EXPECT_EQ(p.code, 2) << p.out;
  EXPECT_NE(p.out.find("tapelab: rank 1: the tape, plan and kernel options differ from rank 0's"), std::string::npos)
      << p.out;
  p = sh(kMpirun + " -np 1 " + rank0 + " : -np 1 " + rank0 + " --seed 9");
  EXPECT_EQ(p.code, 2) << p.out;
  EXPECT_NE(p.out.find("tapelab: rank 1: the inputs, paths and seed differ"), std::string::npos) << p.out;
  // An engine that rank 1 cannot use: exit 3, the reason on one line, no hang.
  p = sh(kMpirun + " -np 1 " + rank0 + " : -np 1 " + rank0 + " --engine cuda");
  EXPECT_EQ(p.code, 3) << p.out;
  EXPECT_NE(p.out.find("tapelab: rank 1: engine 'cuda' is not usable here"), std::string::npos) << p.out;
  // The same bad flag on every rank: one line, no rank named, printed once.
  p = sh(kMpirun + " -np 2 " + rank0 + " --paths x");
  EXPECT_EQ(p.code, 2) << p.out;
  const size_t first = p.out.find("tapelab: ");
  ASSERT_NE(first, std::string::npos) << p.out;
  EXPECT_EQ(p.out.find("tapelab: ", first + 1), std::string::npos) << p.out;
}

TEST(CliMpi, CompareSplitGivesTheSameBits) {
  const std::string args = " compare --product asian --steps 16 --engines reference --paths 3000 --ladders 1 --points 3 --json";
  const Proc one = sh(kTapelab + args);
  ASSERT_EQ(one.code, 0) << one.out;
  const Proc two = sh(kMpirun + " -np 2 " + kTapelab + args);
  ASSERT_EQ(two.code, 0) << two.out;
  EXPECT_EQ(numbers(two.out), numbers(one.out));
  EXPECT_FALSE(numbers(one.out).empty()) << one.out;
}

}  // namespace
