// The .tape text format: write then read is the identity; random bytes and
// mutations of valid files never crash the reader (a Tape that validates, or
// TapeParseError, nothing else); and the CLI answers a file the reader
// rejects with exit status 2.
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>

#include "properties/gen.h"
#include "properties/harness.h"
#include "tape/textformat.h"

namespace tapelab::props {
namespace {

namespace gen = rc::gen;

void assertSameTape(const Tape& x, const Tape& y) {
  RC_ASSERT(x.size() == y.size());
  for (int32_t i = 0; i < x.size(); ++i) {
    RC_ASSERT(x.op[i] == y.op[i]);
    RC_ASSERT(x.a[i] == y.a[i]);
    RC_ASSERT(x.b[i] == y.b[i]);
    RC_ASSERT(x.c[i] == y.c[i]);
    if (!identicalBits(x.imm[i], y.imm[i]))
      RC_FAIL("node " + std::to_string(i) + " immediate " + describe(x.imm[i]) + " read back as " + describe(y.imm[i]));
  }
  RC_ASSERT(x.inputNames == y.inputNames);
  RC_ASSERT(x.inputNodes == y.inputNodes);
  RC_ASSERT(x.inputDefaults.size() == y.inputDefaults.size());
  for (size_t k = 0; k < x.inputDefaults.size(); ++k)
    if (!identicalBits(x.inputDefaults[k], y.inputDefaults[k]))
      RC_FAIL("input default " + describe(x.inputDefaults[k]) + " read back as " + describe(y.inputDefaults[k]));
  RC_ASSERT(x.output == y.output);
}

// The reader's contract on any text: a valid tape, or TapeParseError.
// Returns whether it parsed.
bool readerAccepts(const std::string& text) {
  ++counters().compared;
  try {
    const Tape t = parseTape(text, "fuzz.tape");
    const std::string problem = validate(t);
    if (!problem.empty()) RC_FAIL("the reader accepted a tape that does not validate: " + problem);
    // What it accepted, it writes and reads back unchanged.
    assertSameTape(t, parseTape(writeTape(t), "again.tape"));
    return true;
  } catch (const TapeParseError& e) {
    const std::string what = e.what();
    if (what.rfind("fuzz.tape:", 0) != 0) RC_FAIL("TapeParseError without FILE:LINE: " + what);
    if (what.find('\n') != std::string::npos) RC_FAIL("TapeParseError message spans lines: " + what);
    return false;
  } catch (const rc::detail::CaseResult&) {
    throw;
  } catch (const std::exception& e) {
    RC_FAIL(std::string("the reader threw something other than TapeParseError: ") + e.what());
  }
  return false;
}

// Words a mutation splices in: the format's keywords and numbers at its edges.
const std::vector<std::string>& interestingWords() {
  static const std::vector<std::string> w = {
      "tapelab-tape", "1", "2", "0", "input", "output", "const", "randn", "add", "mul", "div", "sqrt", "abs",
      "max", "-1", "-0", "4294967295", "4294967296", "2147483647", "2147483648", "99999999999999999999",
      "1e308", "1e309", "-1e400", "1e-400", "4.9e-324", "nan", "NaN", "inf", "-inf", "infinity", "0x1p3",
      "1.5", "+3", "3.", ".5", "1e", "e5", "x", "x0", "0x", "_a", "a.b", "#", "# comment", "", " ", "\t",
      "\r", "\xff", "\xc3\xa9", "\x7f", std::string(1, '\0'), "output 0", "input x 1"};
  return w;
}

std::string mutate(std::string text) {
  const int count = *gen::inRange(1, 5);
  for (int m = 0; m < count; ++m) {
    const int kind = *gen::inRange(0, 8);
    const size_t size = text.size();
    const size_t pos = size ? *gen::inRange<size_t>(0, size) : 0;
    switch (kind) {
      case 0:  // delete a byte
        if (size) text.erase(pos, 1);
        break;
      case 1:  // insert a byte
        text.insert(pos, 1, static_cast<char>(*gen::arbitrary<unsigned char>()));
        break;
      case 2:  // flip a byte
        if (size) text[pos] = static_cast<char>(*gen::arbitrary<unsigned char>());
        break;
      case 3: {  // splice in an interesting word
        text.insert(pos, *gen::elementOf(interestingWords()));
        break;
      }
      case 4: {  // replace the word at pos with an interesting one
        if (!size) break;
        size_t b = pos, e = pos;
        while (b > 0 && !std::isspace(static_cast<unsigned char>(text[b - 1]))) --b;
        while (e < size && !std::isspace(static_cast<unsigned char>(text[e]))) ++e;
        text.replace(b, e - b, *gen::elementOf(interestingWords()));
        break;
      }
      case 5: {  // delete a line
        const size_t b = text.rfind('\n', pos) == std::string::npos ? 0 : text.rfind('\n', pos);
        const size_t e = text.find('\n', pos + 1);
        text.erase(b, e == std::string::npos ? std::string::npos : e - b);
        break;
      }
      case 6: {  // duplicate a line
        const size_t b = text.rfind('\n', pos) == std::string::npos ? 0 : text.rfind('\n', pos);
        const size_t e = text.find('\n', pos + 1);
        text.insert(b, text.substr(b, e == std::string::npos ? std::string::npos : e - b));
        break;
      }
      default:  // truncate
        text.resize(pos);
        break;
    }
  }
  return text;
}

// Text from the format's vocabulary: lines of words, mostly malformed.
rc::Gen<std::string> genTokenSoup() {
  return gen::map(gen::container<std::vector<std::vector<std::string>>>(
                      gen::container<std::vector<std::string>>(gen::elementOf(interestingWords()))),
                  [](const std::vector<std::vector<std::string>>& lines) {
                    std::string s;
                    for (const auto& l : lines) {
                      for (size_t i = 0; i < l.size(); ++i) s += (i ? " " : "") + l[i];
                      s += "\n";
                    }
                    return s;
                  });
}

TEST(TextFormat, WriteThenReadIsIdentity) {
  checkProperty("textformat", 200 * propertyRuns(), [&] {
    const Tape t = buildTape(*genTapeSpec(*gen::element(TapeMode::Wild, TapeMode::Conditioned), 3000));
    noteTape(t);
    RC_ASSERT(validate(t).empty());
    const std::string text = writeTape(t);
    const Tape back = parseTape(text, "roundtrip.tape");
    assertSameTape(t, back);
    Tape unnamed = t;
    unnamed.name.clear();
    RC_ASSERT(writeTape(back) == writeTape(unnamed));
    ++counters().compared;
  });
}

TEST(TextFormat, RandomBytesNeverCrashTheReader) {
  checkProperty("textformat", 1000 * propertyRuns(), [&] {
    const std::string text = *gen::oneOf(
        gen::container<std::string>(gen::arbitrary<char>()),
        gen::map(genTokenSoup(), [](std::string s) { return "tapelab-tape 1\n" + s; }), genTokenSoup());
    logCase("text: ", std::quoted(text));
    readerAccepts(text);
  });
}

TEST(TextFormat, MutatedFilesNeverCrashTheReader) {
  int accepted = 0;
  checkProperty("textformat", 600 * propertyRuns(), [&] {
    const Tape t = buildTape(*genTapeSpec(TapeMode::Wild, 200));
    const std::string text = mutate(writeTape(t));
    logCase("mutated text: ", std::quoted(text));
    accepted += readerAccepts(text);
  });
  std::cout << "mutated files the reader accepted: " << accepted << std::endl;
}

// `tapelab run FILE` on files the reader rejects exits 2 (a handful: each is a process).
TEST(Cli, MutatedFilesExitTwo) {
  const std::filesystem::path cli = std::filesystem::path(TAPELAB_BINARY_DIR) / "cli" / "tapelab";
  if (!std::filesystem::exists(std::filesystem::path(TAPELAB_SOURCE_DIR) / "cli" / "cmd_run.cpp") ||
      !std::filesystem::exists(cli)) {
    GTEST_SKIP() << "cli: " << cli.string() << " (tapelab run) is not built";
  }
  const std::filesystem::path dir = std::filesystem::path(TAPELAB_BINARY_DIR) / "properties" / "cli-fuzz";
  std::filesystem::create_directories(dir);
  checkProperty("cli", 8 * propertyRuns(), [&] {
    const Tape t = buildTape(*genTapeSpec(TapeMode::Wild, 60));
    std::string text = mutate(writeTape(t));
    bool parses = true;
    try {
      parseTape(text, "x");
    } catch (const TapeParseError&) {
      parses = false;
    }
    RC_PRE(!parses);  // only files the reader rejects
    const std::filesystem::path file = dir / "mutated.tape";
    std::ofstream(file, std::ios::binary) << text;
    logCase("file: ", std::quoted(text));
    std::string cmd = "'";
    cmd += cli.string();
    cmd += "' run '";
    cmd += file.string();
    cmd += "' --engine reference --paths 16 >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    ++counters().runs;
    RC_ASSERT(WIFEXITED(status));
    RC_ASSERT(WEXITSTATUS(status) == 2);
  });
}

}  // namespace
}  // namespace tapelab::props
