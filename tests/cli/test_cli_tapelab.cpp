// The tapelab binary end to end: the article's numbers, --json's keys, exit
// codes and one-line errors for invalid tapes and flags, philox words, a tape
// written by `tapelab tape` pricing the same as `tapelab price`, the
// flag-over-variable rule, and plan files (--plan) from tapelab and from Python.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "api/knobs.h"
#include "tests/cli/cli_process.h"
#include "tests/common/bad_tapes.h"

using namespace tapelab::clitest;

namespace {

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
    // The tests pass their own flags; the run's knobs from the caller's environment must not leak in.
    for (const tapelab::Knob& k : tapelab::knobTable())
      if (k.scope == tapelab::Knob::Scope::Run) unsetenv(k.variable);
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

// Every result says where its configuration, plan and kind came from (api/montecarlo.h Provenance).
TEST_F(Cli, ResultsPrintTheirProvenance) {
  const Proc plain = sh("tapelab price --product european --steps 4 --paths 1000 --untuned --json");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(jsonRaw(plain.out, "provenance"), "\"config=default plan=default kind=default\"") << plain.out;
  const Proc named = sh("tapelab price --product asian --steps 60 --paths 200 --untuned --checkpoint 7 --kernel register "
                        "--config math=ieee --json");
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_EQ(jsonRaw(named.out, "provenance"), "\"config=default+user(math) plan=user kind=user\"") << named.out;
  const Proc table = sh("tapelab price --product european --steps 4 --paths 1000 --untuned");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("\nfrom config=default plan=default kind=default\n"), std::string::npos) << table.out;
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
      price + "--config layout=diagonal",
      price + "--fp32 --fp64",
      price + "--no-greeks=1",
      price + "--seglen 0",
      "tapelab price --product frobnicate --steps 4",
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
      "tapelab --bogus",
      price + "--paths 5 --paths 6",
      price + "--set",
      price + "--plan /nonexistent/plan.json",
      "tapelab compare --product european --bogus",
      "tapelab plan --product asian --steps 4 --all --checkpoint 3",
      "tapelab plan --product asian --steps 4 --checkpoint 3 --out",
      "tapelab help frobnicate",
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

// What a reader needs first (issue 50): the version names the commit it was built from; compare names the
// device behind each engine, not only the API; run --strategy A,B prints every strategy's value and Greeks
// rounded to their standard error (the bits compared in full, --json keeps 17 digits), times at 3 figures.
TEST_F(Cli, VersionDevicesAndRoundedGreeksAreSaid) {
  const Proc v = sh("tapelab --version");
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("tapelab 0.1 (commit ", 0), 0u) << v.out;
  const Proc c = sh("tapelab compare --product asian --steps 8 --paths 300 --ladders 1 --engines reference");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("\ndevice reference: interpreter on the CPU\n"), std::string::npos) << c.out;
  const Proc r = sh("tapelab price --product asian --steps 8 --engine reference --paths 2000 --strategy window,two-level "
                    "--checkpoint 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("value and Greeks, estimate +- standard error, rounded to the error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("quantity      window"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nd/d spot "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("e-0"), std::string::npos) << "no 17-digit scientific numbers in the table: " << r.out;
  // Each estimate to the decimal place of its error's second significant digit: "5.16 +- 0.12", "0.5498 +- 0.0041".
  const std::regex estimate(R"((-?\d+)\.(\d+) \+- 0\.(0*)([1-9]\d))");
  int seen = 0;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), estimate), end; it != end; ++it, ++seen)
    EXPECT_EQ((*it)[2].length(), (*it)[3].length() + 2) << it->str() << " is not rounded to its error";
  EXPECT_GE(seen, 12) << "value and five Greeks for each of two strategies: " << r.out;
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
  for (const char* cmd : {"price", "run", "tape", "engines", "philox", "compare", "plan"}) {
    const Proc p = sh(std::string("tapelab ") + cmd + " --help");
    EXPECT_EQ(p.code, 0) << cmd << ": " << p.err;
    EXPECT_EQ(p.out.rfind(std::string("usage: tapelab ") + cmd, 0), 0u) << p.out;
    EXPECT_EQ(sh(std::string("tapelab help ") + cmd).out, p.out) << cmd;
  }
  const Proc top = sh("tapelab --help");
  EXPECT_EQ(top.code, 0);
  for (const char* cmd : {"compare", "price", "run", "engines", "tape", "plan", "philox"})
    EXPECT_NE(top.out.find(std::string("\n  ") + cmd + " "), std::string::npos) << cmd << " not listed: " << top.out;
  EXPECT_EQ(sh("tapelab help").out, top.out);
}

// --help tells the truth: every flag the run takes, with its metavar, default and variable.
TEST_F(Cli, HelpNamesEveryFlagWithItsVariableAndDefault) {
  const Proc p = sh("tapelab price --help");
  ASSERT_EQ(p.code, 0) << p.err;
  for (const tapelab::Knob& k : tapelab::knobTable()) {
    if (k.scope != tapelab::Knob::Scope::Run || !*k.flag) continue;
    const size_t at = p.out.find(std::string("\n  ") + k.flag + " ");
    ASSERT_NE(at, std::string::npos) << k.flag << " missing from " << p.out;
    const std::string line = p.out.substr(at + 1, p.out.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(std::string("[") + k.variable + "]"), std::string::npos) << line;
    EXPECT_NE(line.find(k.meaning), std::string::npos) << line;
  }
  EXPECT_NE(p.out.find("  --paths N "), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("(default 100000) [TAPELAB_PATHS]"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("  --product NAME "), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("(required)"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("  --set NAME=VALUE "), std::string::npos) << p.out;
  const Proc c = sh("tapelab compare --help");
  EXPECT_NE(c.out.find("(default 300000) [TAPELAB_PATHS]"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("  --kernel "), std::string::npos) << "compare picks kernels with --kernels: " << c.out;
}

// CLI11's own parse errors, in tapelab's words: one line naming the flag and the command.
TEST_F(Cli, ParseErrorsNameTheFlagAndTheCommand) {
  const std::string price = "tapelab price --product european --steps 4 --paths 100 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {price + "--bogus", "unknown flag --bogus for 'price' (see tapelab price --help)"},
      {price + "--bogus=3", "unknown flag --bogus for 'price' (see tapelab price --help)"},
      {price + "--seed", "--seed needs a value (S)"},
      {price + "--paths 5", "--paths given twice"},
      {price + "--no-greeks=1", "--no-greeks takes no value"},
      {price + "--fp32 --fp64", "--fp32 excludes --fp64"},
      {"tapelab price --steps 4", "--product is required"},
      {"tapelab engines extra", "unexpected argument 'extra' for 'engines' (see tapelab engines --help)"},
      {"tapelab run a.tape b.tape", "unexpected argument 'b.tape' for 'run' (see tapelab run --help)"},
      {"tapelab run", "give a tape file (FILE.tape)"},
      {"tapelab frobnicate",
       "unknown command 'frobnicate' (commands: compare, price, run, engines, tape, plan, tune, config, philox)"},
      {"tapelab --bogus", "unknown flag --bogus (see tapelab --help)"},
  };
  for (const auto& [line, message] : cases) {
    const Proc p = sh(line);
    EXPECT_EQ(p.code, 2) << line;
    EXPECT_EQ(p.err, "tapelab: " + message + "\n") << line;
  }
  const Proc none = sh("tapelab");
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.err.rfind("usage: tapelab <command>", 0), 0u) << none.err;
}

// Flag beats variable beats default, through CLI11's variable binding: a flag given wins even
// over a malformed variable; a bad value names the flag, or the variable it came from.
TEST_F(Cli, FlagBeatsVariableBeatsDefault) {
  const std::string price = "tapelab price --product asian --steps 12 --json";
  struct Case {
    std::string env, flags, key, want;
  };
  for (const Case& c : {Case{"", "", "paths", "100000"},
                        Case{"TAPELAB_PATHS=700", "", "paths", "700"},
                        Case{"TAPELAB_PATHS=700", "--paths 900", "paths", "900"},
                        Case{"TAPELAB_PATHS=abc", "--paths 900", "paths", "900"},
                        Case{"TAPELAB_SEED=5 TAPELAB_PATHS=300", "", "seed", "5"},
                        Case{"TAPELAB_SEED=5 TAPELAB_PATHS=300", "--seed 6", "seed", "6"},
                        Case{"TAPELAB_CKPT=3 TAPELAB_PATHS=300", "", "segments", "3"},
                        Case{"TAPELAB_CKPT=3 TAPELAB_PATHS=300", "--checkpoint 5", "segments", "5"},
                        Case{"TAPELAB_CKPT=lots TAPELAB_PATHS=300", "--checkpoint 4", "segments", "4"},
                        Case{"TAPELAB_KERNEL=scratch TAPELAB_PATHS=300", "--checkpoint 3 --kernel register",
                             "kernel_kind", "\"register\""},
                        Case{"TAPELAB_ENGINE=nosuch TAPELAB_PATHS=300", "--engine reference-f32", "engine",
                             "\"reference-f32\""}}) {
    const Proc p = sh(price + (c.flags.empty() ? "" : " " + c.flags), c.env);
    ASSERT_EQ(p.code, 0) << c.env << " " << c.flags << ": " << p.err;
    EXPECT_EQ(jsonRaw(p.out, c.key), c.want) << c.env << " " << c.flags;
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> bad = {
      {"TAPELAB_CKPT=lots", "", "TAPELAB_CKPT: expected off, auto or a positive segment count, got 'lots'"},
      {"", "--checkpoint lots", "--checkpoint: expected off, auto or a positive segment count, got 'lots'"},
      {"TAPELAB_PATHS=abc", "", "TAPELAB_PATHS: expected a path count from 1 to 2^48 (281474976710656), got 'abc'"},
      {"", "--paths abc", "--paths: expected a path count from 1 to 2^48 (281474976710656), got 'abc'"},
      {"TAPELAB_PATHS=1", "", "TAPELAB_PATHS: need at least 2 paths for a standard error"},
      {"TAPELAB_CKPT_NODES=0", "", "TAPELAB_CKPT_NODES: expected a positive integer, got '0'"},
      {"TAPELAB_CKPT_NODES=5", "--ckpt-nodes 0", "--ckpt-nodes: expected a positive integer, got '0'"},
      // The layout and the market order are fields of --config: their variables and flags are retired.
      {"TAPELAB_SCRATCH_LAYOUT=aos", "",
       "TAPELAB_SCRATCH_LAYOUT is retired: use --config layout=soa|aos (or TAPELAB_CONFIG; tapelab config --list)"},
      {"", "--layout aos", "--layout is retired: use --config layout=aos (tapelab config --list)"},
      {"", "--market-order=joint", "--market-order is retired: use --config market_order=joint (tapelab config --list)"},
      {"", "--config layout=diagonal", "--config: layout: expected soa|aos, got 'diagonal'"},
  };
  for (const auto& [env, flags, message] : bad) {
    const Proc p = sh(price + (flags.empty() ? "" : " " + flags), env);
    EXPECT_EQ(p.code, 2) << env << " " << flags;
    EXPECT_EQ(p.err, "tapelab: " + message + "\n") << env << " " << flags;
  }
  // plan binds its flags the same way.
  const std::string plan = "tapelab plan --product asian --steps 12 --strategy uniform --json";
  const Proc badSeglen = sh(plan, "TAPELAB_SEGLEN=0");
  EXPECT_EQ(badSeglen.code, 2);
  EXPECT_EQ(badSeglen.err, "tapelab: TAPELAB_SEGLEN: expected a positive integer, got '0'\n");
  EXPECT_EQ(sh(plan + " --seglen 10", "TAPELAB_SEGLEN=0").code, 0);
  const Proc seglen = sh(plan, "TAPELAB_SEGLEN=10");
  ASSERT_EQ(seglen.code, 0) << seglen.err;
  const std::string want = sh(plan + " --seglen 10").out;
  EXPECT_EQ(seglen.out.substr(0, seglen.out.find("plan_seconds")), want.substr(0, want.find("plan_seconds")));
}

namespace {

// The bits of a price run's JSON: value, stderr, every Greek and its stderr, the segments.
std::string bits(const std::string& json) {
  const size_t g = json.find("\"greeks\"");
  return jsonRaw(json, "value") + " " + jsonRaw(json, "stderr") + " " + jsonRaw(json, "segments") + " " +
         json.substr(g, json.find("\"kernel_stats\"") - g);
}

std::vector<std::string> usableCpuServedEngines() {
  const Proc list = sh("tapelab engines --json");
  std::vector<std::string> out;
  for (const char* e : {"reference", "cpu-jit", "vulkan", "opencl"}) {
    const size_t at = list.out.find(std::string("{\"name\":\"") + e + "\"");
    if (at == std::string::npos) continue;
    const std::string obj = list.out.substr(at, list.out.find('}', at) - at + 1);
    if (jsonRaw(obj, "usable") == "true" && (jsonRaw(obj, "cpu_device") == "true" || std::string(e) == "reference" ||
                                              std::string(e) == "cpu-jit"))
      out.push_back(e);
  }
  return out;
}

}  // namespace

// --plan FILE on run, price and compare gives the bits of the strategy that wrote it; a
// malformed file is one line "tapelab: FILE: field: reason", exit 2.
TEST_F(Cli, PlanFileOnRunPriceAndCompare) {
  const std::string plan = tempPath("plan.json"), tape = tempPath("asian.tape");
  const Proc written = sh("tapelab plan --product asian --steps 24 --checkpoint 4 --out '" + plan + "'");
  ASSERT_EQ(written.code, 0) << written.err;
  EXPECT_EQ(written.out.rfind("plan written to " + plan + "\n", 0), 0u) << written.out;
  ASSERT_EQ(sh("tapelab tape --product asian --steps 24 --out '" + tape + "'").code, 0);

  const std::string same = " --strategy window --checkpoint 4";
  for (const std::string& cmd : {std::string("tapelab price --product asian --steps 24 --paths 2000 --json"),
                                 "tapelab run '" + tape + "' --paths 2000 --json"}) {
    const Proc fromPlan = sh(cmd + " --plan '" + plan + "'");
    const Proc fromStrategy = sh(cmd + same);
    ASSERT_EQ(fromPlan.code, 0) << cmd << ": " << fromPlan.err;
    ASSERT_EQ(fromStrategy.code, 0) << cmd << ": " << fromStrategy.err;
    EXPECT_EQ(jsonRaw(fromPlan.out, "segments"), "4") << fromPlan.out;
    EXPECT_EQ(bits(fromPlan.out), bits(fromStrategy.out)) << cmd;
    // The variable binds the same file.
    EXPECT_EQ(bits(sh(cmd, "TAPELAB_PLAN='" + plan + "'").out), bits(fromStrategy.out)) << cmd;
  }
  const std::string compare =
      "tapelab compare --product asian --steps 24 --paths 2000 --points 2 --ladders 1 --markets 1 --engines reference --json";
  const Proc cPlan = sh(compare + " --plan '" + plan + "'");
  const Proc cStrategy = sh(compare + same);
  ASSERT_EQ(cPlan.code, 0) << cPlan.err;
  ASSERT_EQ(cStrategy.code, 0) << cStrategy.err;
  auto registerRow = [](const std::string& out) {
    const size_t at = out.find("\"kernel\":\"register\"");
    return at == std::string::npos ? std::string() : out.substr(at);
  };
  ASSERT_FALSE(registerRow(cPlan.out).empty()) << cPlan.out;
  EXPECT_EQ(jsonRaw(registerRow(cPlan.out), "segments"), "4");
  EXPECT_EQ(jsonRaw(registerRow(cPlan.out), "identical_to_plain"), "\"yes\"");
  EXPECT_EQ(bits(registerRow(cPlan.out).substr(registerRow(cPlan.out).find("\"result\""))),
            bits(registerRow(cStrategy.out).substr(registerRow(cStrategy.out).find("\"result\""))));

  // Malformed files: the file, the field, the reason.
  const std::string bad = tempPath("bad.json");
  struct Bad {
    std::string text, field;
  };
  for (const Bad& b : {Bad{"{\"format\": \"tapelab-plan 1\"}", "(file): the required key 'tape' is missing"}, Bad{"{", "(file): not JSON"},
                       Bad{"{\"format\": \"tapelab-plan 9\"}", "format: 'tapelab-plan 9'"}}) {
    writeFile(bad, b.text);
    for (const std::string& cmd : {std::string("tapelab price --product asian --steps 24 --paths 200"),
                                   "tapelab run '" + tape + "' --paths 200", compare}) {
      const Proc p = sh(cmd + " --plan '" + bad + "'");
      EXPECT_EQ(p.code, 2) << cmd << ": " << p.err;
      expectOneErrorLine(p, cmd);
      EXPECT_EQ(p.err.rfind("tapelab: " + bad + ": " + b.field, 0), 0u) << p.err;
    }
  }
  const Proc other = sh("tapelab price --product asian --steps 25 --paths 200 --plan '" + plan + "'");
  EXPECT_EQ(other.code, 2);
  EXPECT_EQ(other.err.rfind("tapelab: " + plan + ": tape.nodes: ", 0), 0u) << other.err;
  for (const std::string& f : {plan, tape, bad}) std::remove(f.c_str());
}

// `tapelab plan --out` then `tapelab price --plan` gives the bits of --strategy window
// --checkpoint 16 on every CPU-served engine; so does a plan file a Python script writes
// from `tapelab plan --json` (format, tape, cuts, and one nested segment).
TEST_F(Cli, PlanFilesFromTapelabAndPythonPriceTheSameOnEveryCpuServedEngine) {
  const std::string product = "--product asian --steps 12";
  const std::string fromTapelab = tempPath("window16.json"), fromPython = tempPath("python.json");
  const std::string script = tempPath("write_plan.py");
  ASSERT_EQ(sh("tapelab plan " + product + " --checkpoint 16 --out '" + fromTapelab + "'").code, 0);
  writeFile(script,
            "import json, sys\n"
            "d = json.load(sys.stdin)\n"
            "cuts = d['plan']['cuts']\n"
            "inner = [None] * (len(cuts) + 1)\n"
            "if cuts[0] >= 2:\n"
            "    inner[0] = {'cuts': [cuts[0] // 2]}\n"
            "tape = {k: d['tape'][k] for k in ('name', 'nodes', 'structure')}\n"
            "with open(sys.argv[1], 'w') as f:\n"
            "    json.dump({'format': 'tapelab-plan 1', 'tape': tape, 'cuts': cuts, 'inner': inner}, f)\n");
  const Proc py = sh("tapelab plan " + product + " --checkpoint 16 --json | python3 '" + script + "' '" + fromPython + "'");
  ASSERT_EQ(py.code, 0) << py.err;
  const std::vector<std::string> engines = usableCpuServedEngines();
  EXPECT_GE(engines.size(), 1u);
  for (const std::string& e : engines) {
    const std::string price = "tapelab price " + product + " --paths 1000 --engine " + e + " --json";
    const Proc want = sh(price + " --strategy window --checkpoint 16");
    ASSERT_EQ(want.code, 0) << e << ": " << want.err;
    EXPECT_EQ(jsonRaw(want.out, "segments"), "16") << e;
    for (const std::string& file : {fromTapelab, fromPython}) {
      const Proc got = sh(price + " --plan '" + file + "'");
      ASSERT_EQ(got.code, 0) << e << " " << file << ": " << got.err;
      EXPECT_EQ(bits(got.out), bits(want.out)) << e << " " << file;
    }
    std::printf("%s: --plan from tapelab and from Python equal --strategy window --checkpoint 16\n", e.c_str());
  }
  for (const std::string& f : {fromTapelab, fromPython, script}) std::remove(f.c_str());
}

// compare --peer FILE: each row's Mpath/s over the matching peer rows' (same pass, paths, ladder
// points, fused or not, steps), from peers.py's CSV and jax_peers.py's; a bad file is one line
// "tapelab: FILE:LINE: reason" (or "--peer FILE: ..."), exit 2, before any kernel runs.
TEST_F(Cli, ComparePeerRatios) {
  const std::string peers = tempPath("peers.csv"), jax = tempPath("jax.csv"), bad = tempPath("bad.csv");
  const std::string head = "who,formulation,engine,kernel,segments,pass,steps,paths,markets,ladder_points,ms,mpath_s,notes\n";
  std::ofstream(peers) << "# machine=test\n" << head
                       << "jax,ladder-loop,jax-cpu,,,value+5greeks,24,2000,1,2,7.9,0.51,\"spots 85..115, shared\"\n"
                       << "jax,ladder-loop,jax-cpu,,,value+5greeks,24,4000,1,2,1,0.25,other paths\n"
                       << "jax,ladder-loop,jax-cpu,,,value+5greeks,12,2000,1,2,1,0.25,other steps\n"
                       << "jax,ladder,jax-cpu,,,value+5greeks,24,2000,2,2,1,0.25,fused\n"
                       << "tapelab,ladder-loop,cpu-jit,plain,1,value+5greeks,24,2000,1,2,1,9,tapelab's own\n";
  const std::string compare = "tapelab compare --product asian --steps 24 --paths 2000 --points 2 --ladders 1 "
                              "--markets 1 --kernels register --engines reference ";
  const Proc text = sh(compare + "--peer '" + peers + "'");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("against " + peers + ": "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("jax ladder-loop (line 3)"), std::string::npos) << text.out;
  for (const char* other : {"(line 4)", "(line 5)", "(line 6)", "(line 7)"})
    EXPECT_EQ(text.out.find(other), std::string::npos) << other << " should not match: " << text.out;
  const Proc js = sh(compare + "--json --peer '" + peers + "'");
  ASSERT_EQ(js.code, 0) << js.err;
  const std::string row = js.out.substr(js.out.find("\"rows\""));
  const double mps = std::stod(jsonRaw(row, "mpaths_per_second"));
  const std::string peer = row.substr(row.find("\"peers\":[{"));
  EXPECT_EQ(jsonRaw(peer, "who"), "\"jax\"");
  EXPECT_EQ(jsonRaw(peer, "line"), "3");
  // From the time (2 x 2000 paths in 7.9 ms), not the rounded mpath_s column.
  EXPECT_NEAR(std::stod(jsonRaw(peer, "ratio")), mps / (4000 / 7.9e3), 1e-9 * mps) << peer;
  // jax_peers.py's own CSV: 'one' is one market per call, a ladder's markets are its points.
  std::ofstream(jax) << "# jax 0.4 on cpu:cpu, fp64, 24 steps, spots [100.0]\n"
                     << "formulation,pass,paths,markets,median_s,mpaths_per_s,value_at_spot100,delta_at_spot100\n"
                     << "one,value+5greeks,2000,1,0.01,0.2,5.3,0.56\n"
                     << "ladder,value+5greeks,2000,2,0.01,0.3,5.3,0.56\n";
  const Proc one = sh("tapelab compare --product asian --steps 24 --paths 2000 --points 1 --ladders 1 --markets 1 "
                      "--kernels register --engines reference --json --peer '" + jax + "'");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("\"formulation\":\"one\""), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("\"formulation\":\"ladder\""), std::string::npos) << one.out;

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", bad + ": no header line (expected experiments/drivers/peers.py's or jax_peers.py's CSV)"},
      {"who,pass\n", bad + ":1: header has no column 'formulation' (expected experiments/drivers/peers.py's or "
                           "jax_peers.py's CSV)"},
      {head + "jax,one\n", bad + ":2: expected 13 fields as in the header, got 2"},
      {"# c\n" + head + "jax,one,e,,,greeks,24,2000,1,1,1,0.5,\n", bad + ":3: pass: expected price or value+5greeks, got 'greeks'"},
      {head + "jax,one,e,,,price,24,2k,1,1,1,0.5,\n", bad + ":2: paths: expected an integer >= 1, got '2k'"},
      {head + "jax,one,e,,,price,24,2000,1,1,1,fast,\n", bad + ":2: mpath_s: expected a positive number, got 'fast'"},
      {head + "jax,one,e,,,price,24,2000,1,1,1,0,\n", bad + ":2: mpath_s: expected a positive number, got '0'"},
      {head + "jax,one,e,,,price,24,2000,1,1,1,1,\"open\n", bad + ":2: unterminated quote"},
  };
  for (const auto& [content, message] : cases) {
    std::ofstream(bad) << content;
    const Proc p = sh(compare + "--peer '" + bad + "'");
    EXPECT_EQ(p.code, 2) << content;
    EXPECT_EQ(p.err, "tapelab: " + message + "\n") << content;
  }
  const Proc missing = sh(compare + "--peer '" + bad + ".none'");
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "tapelab: --peer " + bad + ".none: no such file\n");
  for (const std::string& f : {peers, jax, bad}) std::remove(f.c_str());
}
