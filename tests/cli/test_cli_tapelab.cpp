// The tapelab binary end to end: the article's numbers, --json's keys, exit
// codes and one-line errors for invalid tapes and flags, philox words, and
// a tape written by `tapelab tape` pricing the same as `tapelab price`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/bad_tapes.h"

namespace {

const std::string kTapelab = "'" TAPELAB_BINARY_DIR "/cli/tapelab'";

struct Proc {
  int code = -1;
  std::string out, err;
};

std::string tempPath(const std::string& stem) {
  static int counter = 0;
  return ::testing::TempDir() + "tapelab_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" +
         stem;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs a shell command line; "tapelab" at the start of it, or after "| ",
// means the binary under test. stderr of the whole line is captured.
Proc sh(std::string line) {
  auto expand = [&](size_t at) { line.replace(at, 7, kTapelab); };
  if (line.rfind("tapelab", 0) == 0) expand(0);
  for (size_t at; (at = line.find("| tapelab")) != std::string::npos;) expand(at + 2);
  const std::string errPath = tempPath("stderr");
  const std::string cmd = "{ " + line + " ; } 2>'" + errPath + "'";
  Proc p;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) {
    ADD_FAILURE() << "popen failed: " << cmd;
    return p;
  }
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) p.out.append(buf, n);
  const int status = pclose(pipe);
  p.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  p.err = slurp(errPath);
  std::remove(errPath.c_str());
  return p;
}

// The raw text of a JSON member `"key":VALUE` (inside the object that
// follows `"scope":` when scope is given), VALUE up to the next ',' or '}'.
std::string jsonRaw(const std::string& json, const std::string& key, const std::string& scope = "") {
  size_t from = 0, to = json.size();
  if (!scope.empty()) {
    from = json.find("\"" + scope + "\":{");
    if (from == std::string::npos) return "";
    to = json.find('}', from);
  }
  const std::string needle = "\"" + key + "\":";
  const size_t at = json.find(needle, from);
  if (at == std::string::npos || at > to) return "";
  const size_t begin = at + needle.size();
  const size_t end = json.find_first_of(",}", begin);
  return json.substr(begin, end - begin);
}

double jsonNumber(const std::string& json, const std::string& key, const std::string& scope = "") {
  const std::string raw = jsonRaw(json, key, scope);
  EXPECT_FALSE(raw.empty()) << "no \"" << key << "\" in " << (scope.empty() ? "" : scope + " of ") << json;
  char* end = nullptr;
  const double v = std::strtod(raw.c_str(), &end);
  EXPECT_TRUE(!raw.empty() && *end == '\0') << key << " = '" << raw << "' is not a number";
  return v;
}

// One line on stderr, starting "tapelab: ".
void expectOneErrorLine(const Proc& p, const std::string& what) {
  EXPECT_EQ(p.err.rfind("tapelab: ", 0), 0u) << what << ": stderr '" << p.err << "'";
  ASSERT_FALSE(p.err.empty()) << what;
  EXPECT_EQ(p.err.back(), '\n') << what;
  EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << what << ": more than one line: '" << p.err << "'";
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

}  // namespace

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(TAPELAB_BINARY_DIR "/cli/tapelab", X_OK) != 0)
      FAIL() << TAPELAB_BINARY_DIR "/cli/tapelab is missing: build the 'tapelab' target first";
    // The tests pass their own flags; knobs from the caller's environment must not leak in.
    for (const char* v : {"TAPELAB_ENGINE", "TAPELAB_PATHS", "TAPELAB_SEED", "TAPELAB_CKPT", "TAPELAB_CKPT_NODES",
                          "TAPELAB_STRATEGY", "TAPELAB_SEGLEN", "TAPELAB_KERNEL", "TAPELAB_SCRATCH_LAYOUT",
                          "TAPELAB_DUMP"})
      unsetenv(v);
  }
};

// The done-when command of issue 2: the article's value and Greeks, each
// within 4 of its standard errors.
TEST_F(Cli, PriceAsian252MatchesTheArticle) {
  const Proc p = sh("tapelab price --product asian --steps 252 --paths 100000 --json");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.err, "");
  const std::string& j = p.out;
  EXPECT_EQ(jsonRaw(j, "engine"), "\"reference\"");
  EXPECT_EQ(jsonNumber(j, "paths"), 100000);
  EXPECT_EQ(jsonNumber(j, "seed"), 42);
  struct Row {
    const char* key;
    double article;
  };
  const double value = jsonNumber(j, "value"), err = jsonNumber(j, "stderr");
  EXPECT_LE(std::fabs(value - 5.30), 4 * err) << "value " << value << " +- " << err;
  for (const Row& r : {Row{"spot", 0.562}, Row{"vol", 22.4}, Row{"rate", 23.6}, Row{"strike", -0.509},
                       Row{"maturity", 2.95}}) {
    const double g = jsonNumber(j, r.key, "greeks"), e = jsonNumber(j, r.key, "greeks_stderr");
    EXPECT_GT(e, 0.0) << r.key;
    EXPECT_LE(std::fabs(g - r.article), 4 * e)
        << "d/d " << r.key << " = " << g << " +- " << e << ", the article says " << r.article;
  }
  std::printf("asian-252, 100000 paths on reference: %s s, %s paths/s\n", jsonRaw(j, "seconds").c_str(),
              jsonRaw(j, "paths_per_second").c_str());
}

TEST_F(Cli, JsonHasEveryKey) {
  const Proc p = sh("tapelab price --product european --steps 4 --paths 1000 --json");
  ASSERT_EQ(p.code, 0) << p.err;
  ASSERT_EQ(p.out.front(), '{') << p.out;
  EXPECT_EQ(p.out.find('\n'), p.out.size() - 1) << "one line: " << p.out;
  for (const char* key : {"engine", "kernel", "segments", "paths", "seed", "seconds", "value", "stderr"})
    EXPECT_FALSE(jsonRaw(p.out, key).empty()) << key << " missing from " << p.out;
  EXPECT_EQ(jsonRaw(p.out, "kernel"), "\"plain\"");  // a short tape is not cut by default
  EXPECT_EQ(jsonRaw(p.out, "segments"), "1");
  for (const char* scope : {"greeks", "greeks_stderr"})
    for (const char* in : {"spot", "strike", "vol", "rate", "maturity"})
      EXPECT_FALSE(jsonRaw(p.out, in, scope).empty()) << scope << "." << in << " missing from " << p.out;
  // Doubles with 17 significant digits.
  const std::string v = jsonRaw(p.out, "value");
  int digits = 0;
  for (char c : v.substr(0, v.find_first_of("eE"))) digits += c >= '0' && c <= '9';
  EXPECT_GE(digits, 16) << v;  // %.17g drops no digit but leading zeros of a fraction don't count

  const Proc c = sh("tapelab price --product asian --steps 252 --paths 200 --checkpoint 7 --json");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(jsonRaw(c.out, "kernel"), "\"checkpointed\"");
  EXPECT_EQ(jsonRaw(c.out, "segments"), "7");
}

// Checkpointed and plain print the same digits, end to end.
TEST_F(Cli, CheckpointedPrintsThePlainDigits) {
  const Proc off = sh("tapelab price --product asian --steps 60 --paths 3000 --checkpoint off --json");
  ASSERT_EQ(off.code, 0) << off.err;
  for (const char* flags : {"--checkpoint 7", "--checkpoint 16 --strategy uniform", "--kernel scratch --checkpoint 5"}) {
    const Proc on = sh(std::string("tapelab price --product asian --steps 60 --paths 3000 --json ") + flags);
    ASSERT_EQ(on.code, 0) << flags << ": " << on.err;
    EXPECT_EQ(jsonRaw(on.out, "kernel"), "\"checkpointed\"") << flags;
    EXPECT_EQ(jsonRaw(on.out, "value"), jsonRaw(off.out, "value")) << flags;
    EXPECT_EQ(jsonRaw(on.out, "stderr"), jsonRaw(off.out, "stderr")) << flags;
    for (const char* in : {"spot", "strike", "vol", "rate", "maturity"}) {
      EXPECT_EQ(jsonRaw(on.out, in, "greeks"), jsonRaw(off.out, in, "greeks")) << flags << " " << in;
      EXPECT_EQ(jsonRaw(on.out, in, "greeks_stderr"), jsonRaw(off.out, in, "greeks_stderr")) << flags << " " << in;
    }
  }
  // --no-greeks: the same value, no reverse sweep, empty Greek objects.
  const Proc v = sh("tapelab price --product asian --steps 60 --paths 3000 --checkpoint off --no-greeks --json");
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_EQ(jsonRaw(v.out, "value"), jsonRaw(off.out, "value"));
  EXPECT_NE(v.out.find("\"greeks\":{}"), std::string::npos) << v.out;
}

TEST_F(Cli, EveryInvalidTapeExits2NamingFileAndLine) {
  for (const tapelab::testdata::BadTape& bad : tapelab::testdata::badTapes()) {
    const std::string path = tempPath(std::string(bad.name) + ".tape");
    writeFile(path, bad.text);
    const Proc p = sh("tapelab run '" + path + "' --paths 10");
    EXPECT_EQ(p.code, 2) << bad.name << ": " << p.err;
    EXPECT_EQ(p.out, "") << bad.name;
    expectOneErrorLine(p, bad.name);
    const std::string prefix = "tapelab: " + path + ":" + std::to_string(bad.line) + ": ";
    EXPECT_EQ(p.err.rfind(prefix, 0), 0u) << bad.name << ": expected '" << prefix << "...', got '" << p.err << "'";
    EXPECT_NE(p.err.find(bad.reason), std::string::npos) << bad.name << ": " << p.err;
    std::remove(path.c_str());
  }
  const Proc missing = sh("tapelab run /nonexistent/none.tape");
  EXPECT_EQ(missing.code, 2);
  expectOneErrorLine(missing, "missing file");
  EXPECT_EQ(missing.err.rfind("tapelab: /nonexistent/none.tape:", 0), 0u) << missing.err;
}

TEST_F(Cli, BadFlagsExit2WithOneLine) {
  const std::string price = "tapelab price --product european --steps 4 --paths 100 ";
  const std::vector<std::string> lines = {
      price + "--bogus",
      "tapelab price --product european --steps 4 --paths abc",
      "tapelab price --product european --steps 4 --paths",
      "tapelab price --product european --steps 4 --paths 1",
      "tapelab price --product european --steps 4 --paths -5",
      price + "--checkpoint 0",
      price + "--checkpoint -3",
      price + "--checkpoint lots",
      price + "--checkpoint 1000",  // more segments than nodes
      price + "--strategy nope",
      price + "--set nosuch=1",
      price + "--set spot",
      price + "--set spot=abc",
      price + "--set spot=inf",
      price + "--engine nosuch",
      price + "--seed -1",
      price + "--kernel nope",
      price + "--layout diagonal",
      price + "--fp32 --fp64",
      price + "--no-greeks=1",
      price + "--seglen 0",
      "tapelab price --product lookback --steps 4",
      "tapelab price --product asian --steps 0",
      "tapelab price --product asian --steps many",
      "tapelab price --product asian --assets 3",
      "tapelab price --steps 4",
      "tapelab run",
      "tapelab run a.tape b.tape",
      "tapelab tape --product asian --steps 3 --paths 5",
      "tapelab tape",
      "tapelab engines extra",
      "tapelab philox 1 2 3",
      "tapelab philox g 0 0 0 0 0",
      "tapelab philox 100000000 0 0 0 0 0",
      "tapelab philox -1 0 0 0 0 0",
      "tapelab frobnicate",
  };
  for (const std::string& line : lines) {
    const Proc p = sh(line);
    EXPECT_EQ(p.code, 2) << line << ": " << p.err;
    expectOneErrorLine(p, line);
  }
}

TEST_F(Cli, UnusableEngineExits3) {
  const Proc list = sh("tapelab engines --json");
  ASSERT_EQ(list.code, 0) << list.err;
  std::string unusable;
  for (size_t at = 0; (at = list.out.find("{\"name\":\"", at)) != std::string::npos; ++at) {
    const size_t end = list.out.find('}', at);
    const std::string obj = list.out.substr(at, end - at + 1);
    if (jsonRaw(obj, "usable") == "false") {
      unusable = jsonRaw(obj, "name");
      unusable = unusable.substr(1, unusable.size() - 2);
      break;
    }
  }
  if (unusable.empty()) GTEST_SKIP() << "every engine is usable on this machine: no engine to refuse";
  const Proc p = sh("tapelab price --product european --steps 4 --paths 100 --engine " + unusable);
  EXPECT_EQ(p.code, 3) << unusable << ": " << p.err;
  EXPECT_EQ(p.out, "");
  expectOneErrorLine(p, "--engine " + unusable);
  EXPECT_NE(p.err.find(unusable), std::string::npos) << p.err;
}

TEST_F(Cli, EnginesListsEveryEngineWithUsableAndReason) {
  const Proc p = sh("tapelab engines --json");
  ASSERT_EQ(p.code, 0) << p.err;
  ASSERT_EQ(p.out.front(), '[') << p.out;
  for (const char* e : {"reference", "reference-f32", "reference-mp", "cpu-jit", "vulkan", "opencl", "cuda", "hip"}) {
    const size_t at = p.out.find(std::string("{\"name\":\"") + e + "\"");
    ASSERT_NE(at, std::string::npos) << e << " missing from " << p.out;
    const std::string obj = p.out.substr(at, p.out.find('}', at) - at + 1);
    const std::string usable = jsonRaw(obj, "usable");
    EXPECT_TRUE(usable == "true" || usable == "false") << obj;
    EXPECT_FALSE(jsonRaw(obj, "reason").empty()) << obj;
  }
  EXPECT_NE(p.out.find("{\"name\":\"reference\",\"usable\":true"), std::string::npos) << p.out;
  const Proc table = sh("tapelab engines");
  EXPECT_EQ(table.code, 0);
  EXPECT_NE(table.out.find("reference-mp"), std::string::npos) << table.out;
}

TEST_F(Cli, PhiloxPrintsTheKnownAnswers) {
  const Proc p = sh("tapelab philox 0 0 0 0 0 0");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "6627e8d5 e169c58d bc57ac4c 9b00dbd8\n");
  // Every known-answer line of tests/data/philox_kat.txt, through the CLI.
  std::ifstream f(TAPELAB_SOURCE_DIR "/tests/data/philox_kat.txt");
  ASSERT_TRUE(f);
  int checked = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name, rounds, w[10];
    ss >> name >> rounds;
    for (auto& x : w) ss >> x;
    if (rounds != "10") continue;
    const Proc q = sh("tapelab philox 0x" + w[0] + " " + w[1] + " " + w[2] + " " + w[3] + " " + w[4] + " " + w[5]);
    EXPECT_EQ(q.code, 0) << q.err;
    EXPECT_EQ(q.out, w[6] + " " + w[7] + " " + w[8] + " " + w[9] + "\n") << line;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// A product's tape written by `tapelab tape` and read back by `tapelab run`
// prices to the same digits as `tapelab price`, through a file and a pipe.
TEST_F(Cli, TapeThenRunEqualsPrice) {
  struct Case {
    std::string product;
    const char* priceFlags;
  };
  for (const Case& c : {Case{"--product asian --steps 3", ""}, Case{"--product basket --assets 3 --steps 2", ""},
                        Case{"--product european --steps 5", " --set vol=0.35 --seed 9"}}) {
    const std::string flags = std::string(" --paths 5000 --json") + c.priceFlags;
    const Proc direct = sh("tapelab price " + c.product + flags);
    ASSERT_EQ(direct.code, 0) << direct.err;

    const std::string path = tempPath("roundtrip.tape");
    const Proc written = sh("tapelab tape " + c.product + " --out '" + path + "'");
    ASSERT_EQ(written.code, 0) << written.err;
    const Proc fromFile = sh("tapelab run '" + path + "'" + flags);
    ASSERT_EQ(fromFile.code, 0) << fromFile.err;
    const Proc piped = sh("tapelab tape " + c.product + " | tapelab run /dev/stdin" + flags);
    ASSERT_EQ(piped.code, 0) << piped.err;
    EXPECT_EQ(slurp(path), sh("tapelab tape " + c.product).out) << "--out and standard output differ";
    std::remove(path.c_str());

    for (const Proc* p : {&fromFile, &piped}) {
      EXPECT_EQ(jsonRaw(p->out, "value"), jsonRaw(direct.out, "value")) << c.product;
      EXPECT_EQ(jsonRaw(p->out, "stderr"), jsonRaw(direct.out, "stderr")) << c.product;
      EXPECT_EQ(jsonRaw(p->out, "greeks"), jsonRaw(direct.out, "greeks")) << c.product;
      const std::string gd = direct.out.substr(direct.out.find("\"greeks\""));
      const std::string gp = p->out.substr(p->out.find("\"greeks\""));
      EXPECT_EQ(gp.substr(0, gp.find("\"kernel_stats\"")), gd.substr(0, gd.find("\"kernel_stats\""))) << c.product;
    }
  }
}

TEST_F(Cli, HelpExitsZero) {
  for (const char* cmd : {"price", "run", "tape", "engines", "philox"}) {
    const Proc p = sh(std::string("tapelab ") + cmd + " --help");
    EXPECT_EQ(p.code, 0) << cmd << ": " << p.err;
    EXPECT_EQ(p.out.rfind(std::string("usage: tapelab ") + cmd, 0), 0u) << p.out;
  }
  const Proc top = sh("tapelab --help");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("price"), std::string::npos);
}
