// Hostile input, round three (issue 49), through the binaries: outputs that never replace what the run
// read, resource limits that end in one line and leave no temporary file, requests that are either
// followed, refused or listed as not used, plans refused before a compiler chokes on them, and
// messages that stay one line and say what was given. docs/faults.md names each case's class.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_process.h"

using namespace tapelab::clitest;
namespace fs = std::filesystem;

namespace {

const std::string kBin = TAPELAB_BINARY_DIR;
const std::string kTape = "tapelab-tape 1\ninput spot 100\nrandn 0\nmul 0 1\nexp 2\noutput 3\n";

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// One line on stderr, `code`, and each of `words` in it.
void expectLine(const Proc& p, int code, const std::vector<std::string>& words, const std::string& what) {
  EXPECT_EQ(p.code, code) << what << ": " << p.err;
  EXPECT_TRUE(!p.err.empty() && p.err.find('\n') == p.err.size() - 1) << what << ": not one line: '" << p.err << "'";
  for (const std::string& w : words) EXPECT_NE(p.err.find(w), std::string::npos) << what << ": no '" << w << "' in " << p.err;
}

std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().string().find(".tmp") != std::string::npos) out.push_back(e.path().string());
  return out;
}

// A plan file of `depth` levels for a tape of `nodes` nodes: one cut per level, each nested in the
// first sub-segment of the level above (cuts at nodes-2, nodes-4, ...).
std::string deepPlan(int nodes, const std::string& structure, int depth) {
  std::string open, close;
  for (int level = 1; level < depth; ++level) {
    open += "[{\"cuts\": [" + std::to_string(nodes - 2 * (level + 1)) + "], \"inner\": ";
    close = "}, null]" + close;
  }
  return "{\"format\": \"tapelab-plan 1\", \"tape\": {\"nodes\": " + std::to_string(nodes) + ", \"structure\": \"" +
         structure + "\"}, \"cuts\": [" + std::to_string(nodes - 2) + "], \"inner\": " + open + "[null, null]" + close +
         "}";
}

bool usable(const std::string& engine) {
  const Proc p = runTapelab("engines --json");
  const size_t at = p.out.find("\"name\":\"" + engine + "\"");
  if (at == std::string::npos) return false;
  const size_t next = p.out.find("\"name\":", at + 8);
  return p.out.substr(at, next == std::string::npos ? std::string::npos : next - at).find("\"usable\":true") !=
         std::string::npos;
}

class CliEdges : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"TAPELAB_ENGINE", "TAPELAB_PATHS", "TAPELAB_CKPT", "TAPELAB_PLAN", "TAPELAB_STRATEGY",
                          "TAPELAB_SEGLEN", "TAPELAB_INNER", "TAPELAB_BUDGET", "TAPELAB_CONFIG", "TAPELAB_KERNEL"})
      unsetenv(v);
    dir_ = tempPath("edges");
    fs::create_directories(dir_);
    tape_ = dir_ + "/x.tape";
    write(tape_, kTape);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_, tape_;
};

}  // namespace

// Class 1: tune wrote its shortlist over the plan it ran; a --dump, a shortlist or a plan never replaces
// a file the run read, by any name (util/files.h guardRunInputs: UtilFiles.GuardedInputsAreNeverOutputs).
TEST_F(CliEdges, OutputsNeverReplaceWhatTheRunRead) {
  const std::string plan = dir_ + "/z.json";
  ASSERT_EQ(runTapelab("plan '" + tape_ + "' --checkpoint 2 --out '" + plan + "'").code, 0);
  const std::string before = slurp(plan);
  const Proc p = runTapelab("tune '" + tape_ + "' --engine reference --plan '" + plan + "' --write-shortlist '" + plan + "'");
  expectLine(p, 2, {"tapelab: --write-shortlist " + plan + ": is ", "an input of this run; refusing to overwrite it"}, "tune");
  EXPECT_EQ(slurp(plan), before);
  fs::create_symlink(tape_, dir_ + "/link.tape");
  const Proc q = runTapelab("plan '" + tape_ + "' --checkpoint 2 --out '" + dir_ + "/link.tape'");
  expectLine(q, 2, {"an input of this run"}, "plan --out through a link");
  EXPECT_EQ(slurp(tape_), kTape);
}

// Class 3: under `ulimit -f`, SIGXFSZ ended tapelab with exit 153, no message, OUT.<pid>.0.tmp beside the target.
TEST_F(CliEdges, AFileSizeLimitIsOneLineAndLeavesNoTemporary) {
  const Proc p = sh("ulimit -f 1; " + kTapelab + " tape --product asian --steps 252 --out '" + dir_ + "/big.tape'");
  expectLine(p, 1, {"tapelab: --out " + dir_ + "/big.tape: cannot write: File too large"}, "tape --out");
  const Proc q = sh("ulimit -f 1; " + kTapelab + " plan --product asian --steps 252 --checkpoint 200 --out '" + dir_ + "/p.json'");
  expectLine(q, 1, {"cannot write: File too large"}, "plan --out");
  for (const std::string engine : {"cpu-jit", "vulkan", "opencl"}) {  // their caches: a miss, never a signal
    if (!usable(engine)) continue;
    const Proc r = sh("ulimit -f 4; TAPELAB_CACHE_DIR='" + dir_ + "/cache' " + kTapelab + " price --product asian --steps 4 "
                      "--paths 1000 --engine " + engine);
    EXPECT_TRUE(r.code == 0 || r.code == 1) << engine << ": exit " << r.code << ": " << r.err;
    EXPECT_EQ(r.err.find("File size limit"), std::string::npos) << r.err;
  }
  EXPECT_EQ(temporaries(dir_), std::vector<std::string>{});
}

// Class 3: a thread the system refuses is one fewer worker (util/threads.h), never `terminate called`.
TEST_F(CliEdges, ThreadsTheSystemRefusesNeverAbort) {
  const Proc p = sh("'" + kBin + "/experiments/cut_strategies' --quick --threads 100000 --no-plot --out '" + dir_ + "/c.csv'");
  expectLine(p, 2, {"cut_strategies: --threads: expected an integer in 1..1024, got '100000'"}, "--threads 100000");
  // 200 workers' stacks (8 MiB each) do not fit a 1 GiB address space: most are refused, the run is the same.
  if (TAPELAB_HAS_ASAN) GTEST_SKIP() << "AddressSanitizer's shadow memory does not fit under ulimit -v";
  const std::string price = kTapelab + " price --product asian --steps 16 --paths 200000 --engine reference --json";
  const Proc one = sh("TAPELAB_THREADS=1 " + price);
  const Proc many = sh("ulimit -v 1048576; TAPELAB_THREADS=200 " + price);
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(many.code, 0) << many.err;
  EXPECT_EQ(many.out.substr(0, many.out.find("\"seconds\"")), one.out.substr(0, one.out.find("\"seconds\"")));
}

// Class 4: a plan and what makes one (a strategy, a segment count, --seglen, --inner, --budget).
TEST_F(CliEdges, APlanAndWhatMakesOneAreNeverBothSilentlyTaken) {
  const std::string plan = dir_ + "/p.json";
  ASSERT_EQ(runTapelab("plan '" + tape_ + "' --strategy uniform --checkpoint 2 --out '" + plan + "'").code, 0);
  const std::string run = "run '" + tape_ + "' --engine reference --paths 1000 ";
  for (const std::string flag : {"--checkpoint off", "--checkpoint 1", "--seglen 2", "--inner 2", "--budget 3",
                                 "--strategy window"}) {
    const std::string name = flag.substr(0, flag.find(' '));
    expectLine(runTapelab(run + "--plan '" + plan + "' " + flag), 2,
               {"tapelab: --plan: the file's plan replaces " + name + "; give one of them"}, flag);
  }
  // Flags beat variables: the variable's side is dropped and listed.
  const Proc p = runTapelab(run + "--plan '" + plan + "' --json", "TAPELAB_STRATEGY=window TAPELAB_SEGLEN=3");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("TAPELAB_STRATEGY: not used: the plan given (--plan) replaces it (flags beat variables)"),
            std::string::npos) << p.out;
  EXPECT_NE(p.out.find("TAPELAB_SEGLEN: not used"), std::string::npos) << p.out;
  const Proc q = runTapelab(run + "--checkpoint 2 --json", "TAPELAB_PLAN='" + plan + "'");
  ASSERT_EQ(q.code, 0) << q.err;
  EXPECT_NE(q.out.find("TAPELAB_PLAN: not used: --checkpoint given instead (flags beat variables)"), std::string::npos)
      << q.out;
  // A strategy's plan: the knobs it does not read are listed.
  const Proc r = runTapelab("price --product asian --steps 16 --engine reference --paths 1000 --checkpoint 4 "
                            "--seglen 5 --budget 9 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("--seglen: not used: only the uniform strategy reads it; this kernel's plan is window's"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--budget: not used: only the budget strategy reads it"), std::string::npos) << r.out;
}

// Class 4: --steps 5 --param steps=7, or --param steps twice, took the last value (main since 1b5ac7a).
TEST_F(CliEdges, AProductParameterIsGivenOnce) {
  for (const std::string flags : {"--steps 5 --param steps=7", "--param steps=5 --param steps=7"})
    expectLine(runTapelab("tape --product asian --summary " + flags), 2,
               {"tapelab: --param steps: given twice (or with --steps); give each parameter once"}, flags);
}

// Class 4: a tune whose winner could not be stored exited 0; later runs would not have used it.
// (--store-within-noise: a winner within the noise of its own run is kept on purpose, not by failure.)
TEST_F(CliEdges, ATuneThatCannotKeepItsWinnerFails) {
  const std::string job = "tune --product asian --steps 8 --engine reference --paths 2000 --repeats 1 "
                          "--strategies window --segments 2 --plans 1 --budget-seconds 60 --store-within-noise";
  const Proc p = runTapelab(job, "TAPELAB_CACHE_DIR=/dev/null/tapelab");
  EXPECT_EQ(p.code, 1) << p.err;
  EXPECT_NE(p.err.find("tapelab: tune: the winner is not stored: "), std::string::npos) << p.err;
  // Stored: a later run with --seglen lists it as not used (the winner's plan runs).
  const std::string cache = "TAPELAB_CACHE_DIR='" + dir_ + "/cache'";
  ASSERT_EQ(runTapelab(job, cache).code, 0);
  const Proc r = runTapelab("price --product asian --steps 8 --engine reference --paths 1000 --seglen 3 --json", cache);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("--seglen: not used: the tuned winner's plan runs ("), std::string::npos) << r.out;
}

// Class 6: a 254-deep plan was accepted, then OpenCL failed ("bracket nesting level exceeded maximum of
// 256") and Vulkan compiled for minutes: refused in one line before any compile, on every engine with a limit.
TEST_F(CliEdges, PlansDeeperThanTheEngineCompilesAreRefusedFirst) {
  const std::string tape = dir_ + "/long.tape";
  ASSERT_EQ(runTapelab("tape --product asian --steps 400 --out '" + tape + "'").code, 0);
  const Proc js = runTapelab("plan '" + tape + "' --json");
  const size_t at = js.out.find("\"structure\":\"") + 13;
  const size_t nodesAt = js.out.find("\"nodes\":") + 8;
  const int nodes = std::stoi(js.out.substr(nodesAt));
  write(dir_ + "/deep.json", deepPlan(nodes, js.out.substr(at, 32), 254));
  int checked = 0;
  for (const std::string engine : {"opencl", "vulkan", "cuda", "hip"}) {
    if (!usable(engine)) continue;
    const auto t0 = std::chrono::steady_clock::now();
    const Proc p = runTapelab("run '" + tape + "' --engine " + engine + " --paths 1000 --plan '" + dir_ + "/deep.json'");
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    expectLine(p, 2, {"tapelab: --plan: the plan nests 254 levels of cuts; " + engine + " compiles at most "}, engine);
    EXPECT_LT(took, 20) << engine;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no engine with a nesting limit runs here";
  // The interpreters have none: the same plan runs there.
  EXPECT_EQ(runTapelab("run '" + tape + "' --engine reference --paths 100 --plan '" + dir_ + "/deep.json'").code, 0);
}

// Class 7: echoed input stays on one line.
TEST_F(CliEdges, ControlCharactersInEchoedInputAreWrittenOut) {
  const Proc p = sh(kTapelab + " price --product asian --steps 4 --config \"$(printf 'lanes=4\\n\\033[2Jx')\"");
  expectLine(p, 2, {"\\n", "\\e[2J"}, "--config with a newline and an escape");
  EXPECT_EQ(p.err.find('\033'), std::string::npos);
  const Proc q = sh(kTapelab + " run \"$(printf 'a\\rb.tape')\"");
  expectLine(q, 2, {"a\\rb.tape"}, "a file name with a carriage return");
}

// Class 7: numbers in a plan file as written (2^63 was -9223372036854775808), JSON errors with whole tokens.
TEST_F(CliEdges, PlanFileErrorsQuoteWhatTheFileSays) {
  const std::string plan = dir_ + "/big.json";
  const Proc js = runTapelab("plan '" + tape_ + "' --checkpoint 2 --json");
  const std::string structure = js.out.substr(js.out.find("\"structure\":\"") + 13, 32);
  write(plan, "{\"format\": \"tapelab-plan 1\", \"tape\": {\"nodes\": 4, \"structure\": \"" + structure +
                  "\"}, \"cuts\": [9223372036854775808]}");
  expectLine(runTapelab("run '" + tape_ + "' --plan '" + plan + "'"), 2,
             {plan + ": cuts[0]: 9223372036854775808 is outside (0, 4)"}, "2^63");
  write(plan, "{\"format\": \"tapelab-plan 1\", \"tape\": {\"a: b\": x}}");
  const Proc p = runTapelab("run '" + tape_ + "' --plan '" + plan + "'");
  expectLine(p, 2, {"syntax error while parsing value - invalid literal; last read: '\"a: b\": x'"}, "a JSON error");
}

// Class 7: one grammar: --config= is --config '', an integer is ASCII digits (leading zeros, no sign).
TEST_F(CliEdges, OneGrammarForValues) {
  const Proc a = runTapelab("config --engine vulkan --json --markets 1 ''");
  const Proc b = runTapelab("price --product asian --steps 4 --paths 100 --config= --json");
  const Proc c = runTapelab("price --product asian --steps 4 --paths 100 --config '' --json");
  ASSERT_EQ(b.code, 0) << b.err;
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(b.out.substr(0, b.out.find("\"seconds\"")), c.out.substr(0, c.out.find("\"seconds\"")));
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(runTapelab("config --engine vulkan lanes=0004").out, runTapelab("config --engine vulkan lanes=4").out);
  expectLine(runTapelab("config --engine vulkan lanes=+4"), 2, {"lanes", "'+4'"}, "lanes=+4");
  expectLine(runTapelab("price --product asian --steps 4 --paths +100"), 2, {"--paths", "'+100'"}, "--paths +100");
  expectLine(runTapelab("price --product asian --steps 4 --paths 100 --seed +4"), 2, {"--seed", "'+4'"}, "--seed +4");
  EXPECT_EQ(runTapelab("price --product asian --steps 4 --paths 0100 --seed 007").code, 0);
}

// Class 7: counts out of range are bad input (exit 2), in every command and driver.
TEST_F(CliEdges, CountsOutOfRangeAreBadInput) {
  expectLine(runTapelab("config --engine cuda --markets 9"), 2, {"--markets: expected an integer in 1..8, got '9'"}, "config");
  expectLine(runTapelab("config --list --markets 2"), 2, {"--list prints every field"}, "config --list");
  expectLine(runTapelab("compare --product asian --steps 4 --engines reference --warmup-ms -1"), 2,
             {"--warmup-ms: expected an integer in 0..600000, got '-1'"}, "--warmup-ms -1");
  expectLine(runTapelab("tune --product asian --steps 4 --engine reference --markets 9"), 2, {"--markets"}, "tune");
  const Proc g = sh("'" + kBin + "/experiments/gpu_kernels' --quick --engine reference --markets 9 --out '" + dir_ + "/g.csv'");
  expectLine(g, 2, {"gpu_kernels: --markets: expected markets per dispatch in 1..8, got '9'"}, "gpu_kernels --markets 9");
}

// Class 7: a misspelt TAPELAB_* variable is said (Python warns at import with the same words).
TEST_F(CliEdges, UnknownVariablesAreSaid) {
  const Proc p = runTapelab("price --product asian --steps 4 --paths 100", "TAPELAB_PATH=5 TAPELAB_NO_SUCH_THING=1");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.err.find("tapelab: warning: TAPELAB_PATH is set but tapelab reads no such variable (ignored; did you "
                       "mean TAPELAB_PATHS?)"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("tapelab: warning: TAPELAB_NO_SUCH_THING is set but tapelab reads no such variable (ignored)"),
            std::string::npos) << p.err;
  const Proc q = runTapelab("price --product asian --steps 4 --paths 100", "TAPELAB_SOURCE_DIR=/ TAPELAB_PROPERTY_RUNS=3");
  EXPECT_EQ(q.err.find("warning"), std::string::npos) << q.err;  // the harnesses' own variables
}

// Class 7: under `ulimit -v` Vulkan and OpenCL said "no device" (exit 3), or their drivers crashed loading
// (lavapipe at 250 MB, PoCL at 400 MB): memory is said before a driver is loaded, exit 1.
TEST_F(CliEdges, OutOfMemoryIsNotNoDevice) {
  if (TAPELAB_HAS_ASAN) GTEST_SKIP() << "AddressSanitizer's shadow memory does not fit under ulimit -v";
  int checked = 0;
  for (const std::string engine : {"vulkan", "opencl"}) {
    if (!usable(engine)) continue;
    for (const char* limit : {"150000", "250000", "400000"}) {
      const Proc p = sh("ulimit -v " + std::string(limit) + "; " + kTapelab + " price --product asian --steps 4 --paths 100 --engine " +
                        engine);
      if (p.code == 0) continue;  // room enough to load it and run
      expectLine(p, 1, {"tapelab: engine '" + engine + "' is not usable here: ", "out of memory: the address-space limit (ulimit -v: "},
                 engine + " under ulimit -v " + limit);
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "neither Vulkan nor OpenCL runs here";
}

// Class 7: on a one-node tape compare blamed a --checkpoint 1 nobody gave.
TEST_F(CliEdges, CompareOnAOneNodeTapeBlamesNoFlag) {
  write(dir_ + "/one.tape", "tapelab-tape 1\ninput spot 100\noutput 0\n");
  const Proc p = runTapelab("compare '" + dir_ + "/one.tape' --engines reference --paths 100 --ladders 1 --points 2");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.err.find("--checkpoint 1"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("a tape of one node has nothing to checkpoint"), std::string::npos) << p.err;
}

// compare --config with a field only GPU engines have (loads_ahead) runs on a GPU engine: the tangent row's
// size check reads each engine's own configuration (2026-12-06f: it applied the request to the reference
// engine, which refused the field before any row ran).
TEST_F(CliEdges, CompareTakesAGpuOnlyFieldOnAGpuEngine) {
  if (runTapelab("engines").out.find("opencl         yes") == std::string::npos) GTEST_SKIP() << "no OpenCL here";
  const Proc p = runTapelab("compare --product asian --steps 8 --engines opencl --paths 2000 --ladders 1 --points 1 "
                            "--config loads_ahead=off --json");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("loads_ahead=off"), std::string::npos) << p.out;
}
