// tapelab config and --config: the generated field reference is the committed one, results carry the
// configuration, a field an engine has no use for is one line naming both, a field a kernel did not
// use is said on stderr; and tapelab tune stores a winner that a following run says it used.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/cli/cli_process.h"

using namespace tapelab::clitest;

namespace {

class CliConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"TAPELAB_CONFIG", "TAPELAB_ENGINE", "TAPELAB_CKPT", "TAPELAB_STRATEGY"}) unsetenv(v);
    cache_ = std::filesystem::temp_directory_path() / ("tapelab-config-cache-" + std::to_string(getpid()));
    std::filesystem::remove_all(cache_);
    env_ = "TAPELAB_CACHE_DIR='" + cache_.string() + "'";
  }
  void TearDown() override { std::filesystem::remove_all(cache_); }
  std::filesystem::path cache_;
  std::string env_;
};

}  // namespace

// docs/config.md is what `tapelab config --markdown` prints: regenerate it when a field changes.
TEST_F(CliConfig, TheCommittedReferenceIsTheGeneratedOne) {
  const Proc p = runTapelab("config --markdown");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, slurp(TAPELAB_SOURCE_DIR "/docs/config.md"))
      << "docs/config.md is stale: build/.../tapelab config --markdown > docs/config.md";
  const Proc list = runTapelab("config --list");
  EXPECT_EQ(list.code, 0);
  EXPECT_NE(list.out.find("cuda.reduce"), std::string::npos);
}

TEST_F(CliConfig, ResultsCarryTheConfigAndRefuseFieldsTheEngineHasNoUseFor) {
  const std::string price = "price --product asian --steps 8 --paths 2000 --json --engine reference";
  Proc p = runTapelab(price);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("\"config\":\"math=ieee,tangent_chunk=0\""), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("\"math\":\"ieee\""), std::string::npos) << p.out;
  p = runTapelab(price + " --config lanes=2");
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(p.err, "tapelab: --config: field 'lanes' applies to vulkan,opencl,cuda,hip, not to engine reference\n");
  p = runTapelab(price, "TAPELAB_CONFIG=math=approx");
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(p.err, "tapelab: TAPELAB_CONFIG: math=approx: engine reference has no approximate functions (cuda, hip and "
                   "opencl do, in fp32)\n");
  p = runTapelab(price + " --config lanes=2", "TAPELAB_CONFIG=bogus=1");
  EXPECT_EQ(p.code, 2) << "the flag wins over the variable, and the flag's text is checked";
  EXPECT_NE(p.err.find("--config: field 'lanes'"), std::string::npos) << p.err;
  // math=approx needs the engine's precision, fp32 for cuda: known only where the cuda engine is built.
  const std::string engines = runTapelab("engines --json").out;
  const std::string cuda = engines.substr(std::min(engines.find("{\"name\":\"cuda\""), engines.size()));
  const std::string cudaEntry = cuda.substr(0, cuda.find('}'));
  if (cudaEntry.find("\"usable\":true") == std::string::npos && cudaEntry.find("\"compile_only\":true") == std::string::npos) {
    std::cout << "SKIP the cuda part: this build has no cuda engine (its fp32 default is unknown here)" << std::endl;
    return;
  }
  p = runTapelab("config --engine cuda lanes=2,math=approx");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out.rfind("workgroup=64,lanes=2,", 0), 0u) << p.out;  // canonical: every field, in table order
  EXPECT_NE(p.out.find("math=approx"), std::string::npos) << p.out;
}

// A field set by the user that the kernel could not use is said on stderr (and listed in --json).
TEST_F(CliConfig, AFieldTheKernelDidNotUseIsSaid) {
  if (runTapelab("engines").out.find("opencl         yes") == std::string::npos) GTEST_SKIP() << "no OpenCL here";
  const Proc p = runTapelab("price --product asian --steps 8 --paths 500 --engine opencl --checkpoint off "
                         "--config draws=stored --json");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.err, "tapelab: --config: draws=stored: not a checkpointed kernel\n");
  const size_t unused = p.out.find("\"config_unused\":[");
  ASSERT_NE(unused, std::string::npos) << p.out;
  EXPECT_LT(p.out.find("\"draws=stored: not a checkpointed kernel\"", unused), p.out.find(']', unused)) << p.out;
  // The engine's defaults that do not apply to this kernel are listed too, but not said on stderr.
  EXPECT_LT(p.out.find("\"markets=loop: not a register kernel\"", unused), p.out.find(']', unused)) << p.out;
}

namespace {

// Whether `engine` can run here, from tapelab engines --json; else why not (its reason, or that it
// compiles only).
bool usableHere(const std::string& engine, std::string& why) {
  const Proc p = runTapelab("engines --json");
  const size_t at = p.out.find("{\"name\":\"" + engine + "\"");
  if (at == std::string::npos) {
    why = "not built (tapelab engines does not list it)";
    return false;
  }
  const std::string entry = p.out.substr(at, p.out.find('}', at) - at);
  const size_t r = entry.find("\"reason\":\"");
  why = r == std::string::npos ? "" : entry.substr(r + 10, entry.find('"', r + 10) - r - 10);
  if (entry.find("\"compile_only\":true") != std::string::npos) why = "compile-only here: " + why;
  return entry.find("\"usable\":true") != std::string::npos && entry.find("\"compile_only\":false") != std::string::npos;
}

// The text after `key` up to the next quote (a JSON string's value), "" when absent.
std::string jsonText(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":\"");
  if (at == std::string::npos) return "";
  const size_t from = at + key.size() + 4;
  return json.substr(from, json.find('"', from) - from);
}

}  // namespace

// tune stores a winner; the same job's next run says it used it (and runs the winner's
// configuration), --untuned does not, another job (other markets) does not see it, and --forget
// removes it. On every engine served by a CPU here: cpu-jit, Vulkan (lavapipe), OpenCL (PoCL); a small
// tape and a tight budget.
class CliTune : public CliConfig, public ::testing::WithParamInterface<std::string> {};

TEST_P(CliTune, TuneStoresAWinnerThatRunsSayTheyUse) {
  const std::string engine = GetParam();
  std::string why;
  if (!usableHere(engine, why)) {
    std::cout << "SKIP " << engine << ": " << why << std::endl;
    GTEST_SKIP() << engine << ": " << why;
  }
  const std::string job = "--product asian --steps 8 --engine " + engine + " --paths 4000";
  // --store-within-noise: this tests the cache's use, whatever the noise (TuneStoresNoWinnerWithinTheNoise: the rule).
  const Proc t = runTapelab("tune " + job + " --budget-seconds 40 --repeats 1 --segments 2 --strategies window "
                            "--store-within-noise", env_);
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("(winner)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("==plain"), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("tune: [1] defaults: "), std::string::npos) << "progress is printed: " << t.err;
  EXPECT_NE(t.err.find("budget 40 s"), std::string::npos) << "the budget is said: " << t.err;
  // One row is the defaults (the baseline's step), and the "defaults:" line is its configuration.
  const size_t first = t.out.find("(the defaults)");
  EXPECT_EQ(t.out.find("(the defaults)", first == std::string::npos ? 0 : first + 1), std::string::npos)
      << "two rows marked as the defaults:\n" << t.out;
  Proc p = runTapelab("price " + job + " --json", env_);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("\"tuned\":\"" + cache_.string() + "/tune/"), std::string::npos) << p.out;
  EXPECT_EQ(jsonText(p.out, "provenance"), "config=tuned plan=tuned kind=tuned") << p.out;
  const std::string tunedConfig = jsonText(p.out, "config");
  EXPECT_NE(tunedConfig, "") << p.out;
  // The tune's "winner: PLAN | CONFIG (...)" line names the plan (or the tangent kernel, which has none) and the
  // configuration the run used.
  const std::string plan = jsonText(p.out, "kernel") == "tangent" ? "tangent | " : jsonText(p.out, "strategy");
  EXPECT_NE(t.out.find("\nwinner: " + plan), std::string::npos) << t.out << p.out;
  EXPECT_NE(t.out.find(" | " + tunedConfig + " ("), std::string::npos)
      << "price ran " << tunedConfig << "; the tune said:\n" << t.out;
  // The run says which entry, by how much it beat the defaults, beyond what noise, and when.
  const Proc said = runTapelab("price " + job, env_);
  EXPECT_NE(said.out.find("(tuned: " + cache_.string() + "/tune/"), std::string::npos) << said.out;
  EXPECT_TRUE(said.out.find("% against the defaults beyond a noise of ") != std::string::npos ||
              said.out.find("% against the defaults, within a noise of ") != std::string::npos) << said.out;
  EXPECT_NE(said.out.find(", tuned 20"), std::string::npos) << said.out;
  p = runTapelab("price " + job + " --json --untuned", env_);
  EXPECT_NE(p.out.find("\"tuned\":\"\""), std::string::npos) << p.out;
  EXPECT_EQ(jsonText(p.out, "provenance"), "config=default plan=default kind=default") << p.out;
  p = runTapelab("price " + job + " --json --ladder spot=99,100", env_);
  EXPECT_NE(p.out.find("\"tuned\":\"\""), std::string::npos) << "two markets are another job: " << p.out;
  p = runTapelab("tune " + job + " --forget", env_);
  EXPECT_EQ(p.out, "tuning cache entry removed\n");
  p = runTapelab("price " + job + " --json", env_);
  EXPECT_NE(p.out.find("\"tuned\":\"\""), std::string::npos) << p.out;
}

// tune times the tangent kernel beside the plans (issue 46: the kind searched with the configuration), its
// values checked against the plain kernel's bits (==value: its Greeks sum in another order); a tangent winner
// is stored and the job's next run runs the tangent kernel, saying it is the tuned kind.
TEST_F(CliConfig, TuneTimesTheTangentKernelAndARunUsesATangentWinner) {
  std::string why;
  if (!usableHere("opencl", why)) {
    std::cout << "SKIP opencl: " << why << std::endl;
    GTEST_SKIP() << why;
  }
  const std::string job = "--product asian --steps 8 --engine opencl --paths 4000";
  const Proc t = runTapelab("tune " + job + " --budget-seconds 40 --repeats 1 --segments 2 --strategies window --no-store", env_);
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_NE(t.err.find("plain and the tangent kernel)"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("] plans: tangent, "), std::string::npos) << t.err;
  const size_t row = t.out.find("  tangent ");
  ASSERT_NE(row, std::string::npos) << t.out;
  EXPECT_NE(t.out.substr(row, t.out.find('\n', row) - row).find("==value"), std::string::npos) << t.out;
  const std::filesystem::path shortlist = cache_ / "tangent.txt";
  std::filesystem::create_directories(cache_);
  {
    std::ofstream f(shortlist);
    f << "tangent | workgroup=64,loads_ahead=off\n";
  }
  const Proc w = runTapelab("tune " + job + " --repeats 1 --store-within-noise --shortlist " + shortlist.string(), env_);
  ASSERT_EQ(w.code, 0) << w.out << w.err;
  EXPECT_NE(w.out.find("\nwinner: tangent | "), std::string::npos) << w.out;
  const Proc p = runTapelab("price " + job + " --json", env_);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(jsonText(p.out, "kernel"), "tangent") << p.out;
  EXPECT_EQ(jsonText(p.out, "provenance"), "config=tuned plan=tuned kind=tuned") << p.out;
  EXPECT_NE(jsonText(p.out, "config").find("workgroup=64,"), std::string::npos) << p.out;
  // Naming the winner's kind runs it; naming another kind runs that kind's defaults, not the tangent winner's.
  const Proc named = runTapelab("price " + job + " --kernel tangent --json", env_);
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_NE(jsonText(named.out, "config").find("workgroup=64,"), std::string::npos) << named.out;
  const Proc other = runTapelab("price " + job + " --kernel register --json", env_);
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_EQ(jsonText(other.out, "kernel"), "checkpointed") << other.out;  // the register kind
  EXPECT_EQ(jsonText(other.out, "tuned"), "") << other.out;
  EXPECT_EQ(jsonText(other.out, "config").find("workgroup=64,"), std::string::npos) << other.out;
  // compare: the tangent row runs the winner; the plain and register rows their kinds' defaults (loads_ahead=on),
  // with the winner's fields that change bits (workgroup=64), so that their bits still compare.
  const Proc c = runTapelab("compare --product asian --steps 8 --engines opencl --paths 4000 --markets 1 --points 1 "
                            "--kernels register,tangent --ladders 1 --json", env_);
  ASSERT_EQ(c.code, 0) << c.err;
  const auto configOf = [&](const std::string& engine) {
    const size_t at = c.out.find("{\"engine\":\"" + engine + "\",\"config\":");
    return at == std::string::npos ? std::string("(none)") : jsonText(c.out.substr(at), "config");
  };
  EXPECT_NE(configOf("opencl").find("loads_ahead=off"), std::string::npos) << c.out;
  EXPECT_NE(configOf("opencl (register)").find("workgroup=64,"), std::string::npos) << c.out;
  EXPECT_NE(configOf("opencl (register)").find("loads_ahead=on"), std::string::npos) << c.out;
  EXPECT_NE(configOf("opencl (plain)").find("loads_ahead=on"), std::string::npos) << c.out;
}

// A shortlist line runs over the defaults of the kind its plan runs, as `--kernel KIND` would with nothing
// set: on cuda at 7 markets the register kernel's min_blocks=8 and the tangent kernel's 10, whichever kind
// auto picks for the job (before 2026-12-06g every line took the auto kind's, the tangent kernel's 10 on the
// Asian, so a shortlist's "periodic 16 |" was not what nothing set runs). cuda compiles without a GPU.
TEST_F(CliConfig, ShortlistLinesRunOverTheirKindsDefaults) {
  // cuda compiles here when it runs or compiles only (NVRTC found at configure time); a build without it skips.
  std::string why;
  if (!usableHere("cuda", why) && why.rfind("compile-only here: ", 0) != 0) {
    std::cout << "SKIP cuda: " << why << std::endl;
    GTEST_SKIP() << why;
  }
  const std::filesystem::path shortlist = cache_ / "kinds.txt";
  std::filesystem::create_directories(cache_);
  {
    std::ofstream f(shortlist);
    f << "periodic 2 |\ntangent |\nperiodic 2 | min_blocks=10\n";
  }
  const Proc t = runTapelab("tune --product asian --steps 8 --engine cuda --markets 7 --compile-only --no-store --json "
                            "--shortlist " + shortlist.string(), env_);
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  // Each candidate's plan and configuration, in the JSON's order (ranked).
  std::map<std::string, std::vector<std::string>> configs;
  for (size_t at = t.out.find("{\"rank\":"); at != std::string::npos; at = t.out.find("{\"rank\":", at + 1)) {
    const std::string row = t.out.substr(at, t.out.find('}', at) - at);
    const std::string config = jsonText(row, "config");
    const size_t mb = config.find("min_blocks=");
    configs[jsonText(row, "plan")].push_back(mb == std::string::npos ? "?" : config.substr(mb, config.find(',', mb) - mb));
  }
  EXPECT_EQ(configs["tangent"], std::vector<std::string>{"min_blocks=10"}) << t.out;
  std::vector<std::string> reg = configs["periodic 2"];
  std::sort(reg.begin(), reg.end());
  EXPECT_EQ(reg, (std::vector<std::string>{"min_blocks=10", "min_blocks=8"})) << t.out;
}

// jit.part (moved from the variable TAPELAB_JIT_PART into the configuration, 2026-12-02b) acts: a
// 64-step Asian at jit.part=100 is compiled as several translation units (the dumped .partN files),
// at the default 4096 as one, with the same bits; the result carries the field.
TEST_F(CliConfig, JitPartSplitsTheKernelWithTheSameBits) {
  std::string why;
  if (!usableHere("cpu-jit", why)) {
    std::cout << "SKIP cpu-jit: " << why << std::endl;
    GTEST_SKIP() << why;
  }
  auto parts = [](const std::filesystem::path& dir) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      n += e.path().filename().string().find(".part") != std::string::npos;
    return n;
  };
  const std::string job = "price --product asian --steps 64 --engine cpu-jit --paths 2000 --checkpoint off --json";
  const std::filesystem::path split = cache_ / "split", whole = cache_ / "whole";
  const Proc a = runTapelab(job + " --config jit.part=100 --dump " + split.string(), env_);
  const Proc b = runTapelab(job + " --dump " + whole.string(), env_);
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_GE(parts(split), 2) << "jit.part=100 on a 64-step Asian: several translation units";
  EXPECT_EQ(parts(whole), 0) << "the default 4096: one translation unit";
  EXPECT_NE(jsonText(a.out, "config").find("jit.part=100"), std::string::npos) << a.out;
  EXPECT_NE(jsonText(b.out, "config").find("jit.part=4096"), std::string::npos) << b.out;
  // From "value" to the kernel statistics: the value, its stderr, every Greek and its stderr, 17 digits each.
  const auto numbers = [](const std::string& out) {
    const size_t from = out.find("\"value\":"), to = out.find("\"kernel_stats\"");
    return from == std::string::npos || to == std::string::npos ? std::string("(none)") : out.substr(from, to - from);
  };
  EXPECT_NE(numbers(a.out), "(none)") << a.out;
  EXPECT_EQ(numbers(a.out), numbers(b.out)) << "same bits, whatever the split";
}

// A budget spent before the first candidate (a shortlist's compile phase took it: NVIDIA's OpenCL
// compiler, 256 s for twelve 7-market kernels on the H200 against a 120 s budget, 2026-12-02b) still
// times the first candidate and stores it; the rest are listed as not tried.
TEST_F(CliConfig, TuneBudgetSpentByCompilesStillTimesTheFirstCandidate) {
  std::filesystem::create_directories(cache_);
  const std::filesystem::path shortlist = cache_ / "short.txt";
  {
    std::ofstream f(shortlist);
    f << "window 2 |\nwindow 2 | jit.chunk=64\nplain |\n";
  }
  const std::string job = "--product asian --steps 8 --engine cpu-jit --paths 2000";
  const Proc t = runTapelab("tune " + job + " --budget-seconds 0.000001 --repeats 1 --json --store-within-noise "
                            "--shortlist " + shortlist.string(), env_);
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("\"winner\":1"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("\"budget_spent\":true"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("not tried: budget"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("not stored"), std::string::npos) << "the first candidate's winner is stored: " << t.out;
  const Proc p = runTapelab("price " + job + " --json", env_);
  EXPECT_NE(p.out.find("\"tuned\":\"" + cache_.string() + "/tune/"), std::string::npos) << p.out;
}

// A winner is stored only when it beats the defaults by more than the noise of interleaved runs of the two
// in the same search (a 3.99x "winner" against a defaults run of 96.8% spread, stored by the tuner before
// 2026-12-06, showed no gain in five alternating runs). An equal candidate (jit.part=4000 on a tape of a
// few dozen nodes: one translation unit either way, the same code as the defaults' 4096) is timed, wins or
// not, and is never stored: the run after it uses the defaults. The defaults themselves are never stored.
TEST_F(CliConfig, TuneStoresNoWinnerWithinTheNoiseOfItsOwnRun) {
  std::string why;
  if (!usableHere("cpu-jit", why)) {
    std::cout << "SKIP cpu-jit: " << why << std::endl;
    GTEST_SKIP() << why;
  }
  std::filesystem::create_directories(cache_);
  const std::filesystem::path equal = cache_ / "equal.txt", defaults = cache_ / "defaults.txt";
  std::ofstream(equal) << "plain | jit.part=4000\n";
  std::ofstream(defaults) << "plain |\n";
  const std::string job = "--product asian --steps 8 --engine cpu-jit --paths 2000";
  Proc t = runTapelab("tune " + job + " --repeats 3 --shortlist " + equal.string(), env_);
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("not stored: the winner's gain is within the noise of its own run ("), std::string::npos)
      << t.out << t.err;
  EXPECT_NE(t.out.find("interleaved runs each)"), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("confirming the winner (plain): "), std::string::npos) << t.err;
  Proc p = runTapelab("price " + job + " --json", env_);
  EXPECT_NE(p.out.find("\"tuned\":\"\""), std::string::npos) << "nothing stored, nothing used: " << p.out;
  t = runTapelab("tune " + job + " --repeats 1 --shortlist " + defaults.string(), env_);
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("not stored: the defaults won (nothing to keep)"), std::string::npos) << t.out;
}

// CPU engines are not pruned by a GPU's register budget: a tape whose every checkpointed plan has a peak_live
// over sm_90's budget (a 20-asset worst-of: window's 765 and 810 > 212) keeps its plans on cpu-jit (the cuda
// search, compile-only here, prunes them; before 2026-12-06 cpu-jit's did too).
TEST_F(CliConfig, TuneDoesNotPruneCpuPlansByTheGpuRegisterBudget) {
  std::string why;
  if (!usableHere("cpu-jit", why)) {
    std::cout << "SKIP cpu-jit: " << why << std::endl;
    GTEST_SKIP() << why;
  }
  const std::string job = "--product worstof --param assets=20 --steps 4 --paths 256 --repeats 1 --plans 1 "
                          "--strategies window --segments 2,3 --no-store --budget-seconds 60";
  const Proc t = runTapelab("tune " + job + " --engine cpu-jit --json", env_);
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_EQ(t.out.find("pruned: peak_live"), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("a CPU engine: no register budget prunes them"), std::string::npos) << t.err;
}

// The quantile field went with version 3 of the draws (Box-Muller has none): --config and a tune shortlist
// naming it are refused in one line, before anything is emitted.
TEST_F(CliConfig, TheRetiredQuantileFieldIsRefused) {
  Proc p = runTapelab("config --engine cuda quantile=select");  // checked as --config is: no device needed
  EXPECT_EQ(p.code, 2);
  EXPECT_EQ(p.err, "tapelab: config: field 'quantile' is retired: version 4 of the draws (Box-Muller pairs, "
                   "docs/tape-format.md) has no quantile to branch on, select or gather\n");
  EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
  std::filesystem::create_directories(cache_);
  const std::filesystem::path shortlist = cache_ / "quantile.txt";
  {
    std::ofstream f(shortlist);
    f << "window 2 |\nwindow 2 | quantile=gather\n";
  }
  p = runTapelab("tune --product asian --steps 8 --engine cpu-jit --paths 2000 --json --shortlist " + shortlist.string(),
                 env_);
  EXPECT_EQ(p.code, 2) << p.out;
  EXPECT_NE(p.err.find("tapelab: shortlist 'window 2 | quantile=gather': field 'quantile' is retired: version 4"),
            std::string::npos)
      << p.err;
}

INSTANTIATE_TEST_SUITE_P(Engines, CliTune, ::testing::Values("cpu-jit", "vulkan", "opencl"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });
