// The .tape text format: exact round trips, and every rejection with its
// FILE:LINE: prefix (the cases are in tests/common/bad_tapes.h, shared with the CLI test).
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "tests/common/bad_tapes.h"
#include "tape/products/products.h"
#include "tape/tape.h"
#include "tape/textformat.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

using testutil::g17;

// Bit-for-bit equality of everything a tape means (the name is free text).
void expectSameTape(const Tape& x, const Tape& y, const std::string& what) {
  ASSERT_EQ(x.size(), y.size()) << what;
  EXPECT_EQ(x.op, y.op) << what;
  EXPECT_EQ(x.a, y.a) << what;
  EXPECT_EQ(x.b, y.b) << what;
  EXPECT_EQ(x.c, y.c) << what;
  for (int32_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint64_t>(x.imm[i]), std::bit_cast<uint64_t>(y.imm[i]))
        << what << " node " << i << ": " << g17(x.imm[i]) << " vs " << g17(y.imm[i]);
  EXPECT_EQ(x.inputNames, y.inputNames) << what;
  ASSERT_EQ(x.inputDefaults.size(), y.inputDefaults.size()) << what;
  for (size_t k = 0; k < x.inputDefaults.size(); ++k)
    EXPECT_EQ(std::bit_cast<uint64_t>(x.inputDefaults[k]), std::bit_cast<uint64_t>(y.inputDefaults[k]))
        << what << " input " << x.inputNames[k] << ": " << g17(x.inputDefaults[k]) << " vs "
        << g17(y.inputDefaults[k]);
  EXPECT_EQ(x.inputNodes, y.inputNodes) << what;
  EXPECT_EQ(x.output, y.output) << what;
}

void expectRoundTrip(const Tape& t) {
  ASSERT_EQ(validate(t), "") << t.name;
  const std::string text = writeTape(t);
  const Tape back = parseTape(text, t.name + ".tape");
  expectSameTape(t, back, t.name);
  EXPECT_EQ(validate(back), "") << t.name;
  Tape named = back;
  named.name = t.name;  // the reader does not keep the writer's comment line
  EXPECT_EQ(writeTape(named), text) << t.name;
}

// What a parse of `text` throws: "" when it parses.
std::string parseError(const std::string& text, const std::string& file = "bad.tape") {
  try {
    parseTape(text, file);
  } catch (const TapeParseError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TextFormat, ProductTapesRoundTripExactly) {
  for (int n : {1, 4, 252}) {
    expectRoundTrip(products::europeanCall(n));
    expectRoundTrip(products::asianCall(n));
  }
  expectRoundTrip(products::asianCall(7, {123.456789, 99.1, 0.1234567890123, 0.0007, 1.0 / 3.0}));
  for (int m : {1, 3, 5}) expectRoundTrip(products::basketCall(m, 6, 0.3));
  expectRoundTrip(products::basketCall(4, 3, -0.2));  // Cholesky factors with full 17-digit mantissas
}

TEST(TextFormat, AwkwardConstantsRoundTripExactly) {
  const double awkward[] = {1e-300, 0.1, -0.0, 0.0, DBL_MAX, -DBL_MAX, 5e-324, -5e-324, DBL_MIN,
                            std::nextafter(DBL_MIN, 0.0), 1.0 / 3.0, 2.0 / 3.0, M_PI, 1e23, 9007199254740993.0,
                            0.30000000000000004, 123456789012345680.0, std::nextafter(1.0, 2.0),
                            std::nextafter(1.0, 0.0)};
  Tape t;
  t.name = "awkward";
  int32_t acc = t.addInput("x", 1.0);
  int k = 0;
  for (double c : awkward) {
    t.addInput("in_" + std::to_string(k++), c);  // as input defaults
    const int32_t node = t.push(Op::Const, -1, -1, c);  // and as constants
    acc = t.push(Op::Add, acc, node);
  }
  t.output = acc;
  expectRoundTrip(t);
  // The writer's spelling of the tiniest and largest: 17 significant digits, read back exactly.
  const std::string text = writeTape(t);
  EXPECT_NE(text.find("const -0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("const 4.9406564584124654e-324\n"), std::string::npos) << text;
  EXPECT_NE(text.find("const 1.7976931348623157e+308\n"), std::string::npos) << text;
}

TEST(TextFormat, ReadsTheIssuesExample) {
  const Tape t = parseTape(
      "tapelab-tape 1\n"
      "# comment; blank lines ignored; '#' starts a comment anywhere\n"
      "\n"
      "input spot 100        # node 0: a named input and its default value\n"
      "input vol 0.2         # node 1\n"
      "const 0.5             # node 2\n"
      "randn 0               # node 3: standard normal draw k = 0\n"
      "mul 1 3               # node 4 = node1 * node3; arguments are earlier node indices\n"
      "output 4              # exactly one, the last line: the value; Greeks = adjoints of the inputs\n",
      "example.tape");
  ASSERT_EQ(t.size(), 5);
  EXPECT_EQ(t.op, (std::vector<Op>{Op::Input, Op::Input, Op::Const, Op::Randn, Op::Mul}));
  EXPECT_EQ(t.inputNames, (std::vector<std::string>{"spot", "vol"}));
  EXPECT_EQ(t.inputDefaults, (std::vector<double>{100.0, 0.2}));
  EXPECT_EQ(t.imm[2], 0.5);
  EXPECT_EQ(t.imm[3], 0.0);
  EXPECT_EQ(t.a[4], 1);
  EXPECT_EQ(t.b[4], 3);
  EXPECT_EQ(t.output, 4);
  EXPECT_EQ(validate(t), "");
}

TEST(TextFormat, ToleratesCrLfTabsAndTrailingComments) {
  const Tape a = parseTape("tapelab-tape 1\ninput x 2\nneg 0\noutput 1\n", "a.tape");
  const Tape b = parseTape("tapelab-tape 1\r\n\tinput\tx  2#c\r\nneg 0 # minus\r\n  output 1\r\n", "b.tape");
  const Tape c = parseTape("tapelab-tape 1\ninput x 2\nneg 0\noutput 1", "c.tape");  // no final newline
  expectSameTape(a, b, "crlf");
  expectSameTape(a, c, "no final newline");
}

TEST(TextFormat, LargestDrawIndexIsAccepted) {
  const Tape t = parseTape("tapelab-tape 1\nrandn 4294967295\noutput 0\n", "k.tape");
  EXPECT_EQ(t.imm[0], 4294967295.0);
  EXPECT_EQ(t.drawCount(), uint64_t{4294967296});
  EXPECT_EQ(validate(t), "");
}

TEST(TextFormat, EveryRejectionNamesFileAndLine) {
  for (const testdata::BadTape& bad : testdata::badTapes()) {
    const std::string file = std::string("dir/") + bad.name + ".tape";
    const std::string err = parseError(bad.text, file);
    const std::string prefix = file + ":" + std::to_string(bad.line) + ": ";
    EXPECT_EQ(err.rfind(prefix, 0), 0u) << bad.name << ": expected prefix '" << prefix << "', got '" << err << "'";
    EXPECT_NE(err.find(bad.reason), std::string::npos)
        << bad.name << ": expected the reason to mention \"" << bad.reason << "\", got '" << err << "'";
    EXPECT_EQ(err.find('\n'), std::string::npos) << bad.name << ": the message must be one line: " << err;
  }
}

TEST(TextFormat, MissingFileIsAParseError) {
  try {
    readTapeFile("/nonexistent/dir/none.tape");
    FAIL() << "no error";
  } catch (const TapeParseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/dir/none.tape:", 0), 0u) << e.what();
  }
}

TEST(TextFormat, WriteThenReadFileKeepsTheTape) {
  const Tape t = products::asianCall(5);
  const std::string path = ::testing::TempDir() + "tapelab_textformat_asian5.tape";
  writeTapeFile(t, path);
  const Tape back = readTapeFile(path);
  expectSameTape(t, back, "file");
  EXPECT_EQ(back.name, "tapelab_textformat_asian5.tape");
  std::remove(path.c_str());
}

// No input crashes the reader: random edits of a valid tape (a word or a byte
// replaced, a line dropped or repeated) either parse to a valid tape or are
// rejected with "FILE:LINE: " naming a line of the file.
TEST(TextFormat, RandomEditsNeverCrashAndAlwaysNameALine) {
  const std::string good = writeTape(products::asianCall(3));
  std::vector<std::string> lines;
  for (size_t p = 0, q; p < good.size(); p = q + 1) {
    q = good.find('\n', p);
    lines.push_back(good.substr(p, q - p));
  }
  const char* words[] = {"add", "exp", "randn", "const", "input", "output", "-1", "0", "1.5", "nan", "1e999",
                         "2147483648", "spot", "#", "tapelab-tape", "99", "", "\x01", "\xff"};
  std::mt19937_64 rng(20240611);
  int parsed = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<std::string> l = lines;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t i = rng() % l.size();
      switch (rng() % 4) {
        case 0: {  // replace one word
          std::vector<std::string> w;
          for (size_t p = 0, q; p <= l[i].size(); p = q + 1) {
            q = l[i].find(' ', p);
            if (q == std::string::npos) q = l[i].size();
            w.push_back(l[i].substr(p, q - p));
          }
          w[rng() % w.size()] = words[rng() % std::size(words)];
          l[i].clear();
          for (size_t k = 0; k < w.size(); ++k) l[i] += (k ? " " : "") + w[k];
          break;
        }
        case 1:
          if (!l[i].empty()) l[i][rng() % l[i].size()] = static_cast<char>(rng() % 256);
          break;
        case 2: l.erase(l.begin() + static_cast<long>(i)); break;
        default: l.insert(l.begin() + static_cast<long>(i), l[i]); break;
      }
      if (l.empty()) l.push_back("");
    }
    std::string text;
    for (const auto& s : l) text += s + "\n";
    int nlines = 0;
    for (char c : text) nlines += c == '\n';
    try {
      const Tape t = parseTape(text, "fuzz.tape");
      EXPECT_EQ(validate(t), "") << text;
      ++parsed;
    } catch (const TapeParseError& e) {
      const std::string m = e.what();
      ASSERT_EQ(m.rfind("fuzz.tape:", 0), 0u) << m;
      const int line = std::atoi(m.c_str() + 10);
      EXPECT_GE(line, 1) << m;
      EXPECT_LE(line, std::max(1, nlines)) << m;
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(parsed, 10);  // some edits keep the tape valid (a changed constant, a dropped comment)
}

namespace {
std::string tapeError(const std::function<void()>& f) {
  try {
    f();
    return "(accepted)";
  } catch (const TapeParseError& e) {
    return e.what();
  }
}
}  // namespace

// The reader streams with a stated limit (README, "Faults"): /dev/zero, a line without end and a
// file that cannot be opened are one line each, naming the file and why; a BOM reads as in plans.
TEST(TextFormat, ReaderIsBoundedAndSaysWhyAFileCannotBeRead) {
  const std::string good = "tapelab-tape 1\ninput spot 100\nrandn 0\nmul 0 1\noutput 2\n";
  EXPECT_EQ(parseTape("\xEF\xBB\xBF" + good, "bom.tape").size(), 3);
  EXPECT_EQ(tapeError([&] { readTapeFile("/dev/zero"); }), "/dev/zero:1: binary data (control byte 0), not a tape");
  const std::filesystem::path d = std::filesystem::temp_directory_path() / ("tapelab-textformat-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  const std::string dir = d.string();
  EXPECT_EQ(tapeError([&] { readTapeFile(dir + "/missing.tape"); }), dir + "/missing.tape:0: no such file");
  std::filesystem::create_symlink(d / "nowhere.tape", d / "dangling.tape");
  EXPECT_EQ(tapeError([&] { readTapeFile(dir + "/dangling.tape"); }),
            dir + "/dangling.tape:0: a symbolic link to '" + dir + "/nowhere.tape', which does not exist");
  std::filesystem::create_symlink(d / "loop2", d / "loop1");
  std::filesystem::create_symlink(d / "loop1", d / "loop2");
  EXPECT_EQ(tapeError([&] { readTapeFile(dir + "/loop1"); }).rfind(dir + "/loop1:0: a loop of symbolic links", 0), 0u);
  EXPECT_EQ(tapeError([&] { readTapeFile(dir); }), dir + ":0: a directory, not a file");
  {
    std::ofstream(d / "long.tape") << "tapelab-tape 1\n# " << std::string(kMaxTapeLineBytes, 'x') << "\n";
    std::ofstream(d / "big.tape") << " ";
    std::filesystem::resize_file(d / "big.tape", kMaxTapeBytes + 1);  // sparse
    std::ofstream(d / "good.tape") << good;
  }
  EXPECT_EQ(tapeError([&] { readTapeFile(dir + "/long.tape"); }), dir + "/long.tape:2: a line longer than 64 KiB");
  EXPECT_EQ(tapeError([&] { parseTape("tapelab-tape 1\n# " + std::string(kMaxTapeLineBytes, 'x'), "s"); }), "s:2: a line longer than 64 KiB");
  EXPECT_EQ(tapeError([&] { readTapeFile(dir + "/big.tape"); }),
            dir + "/big.tape:0: larger than the limit of 1 GiB (" + std::to_string(kMaxTapeBytes + 1) + " bytes)");
  // Streamed in chunks: the same tape as parsed from the text, across every chunk boundary.
  Tape wide;
  for (int i = 0; i < 20000; ++i) wide.addInput("in" + std::to_string(i), i + 0.5);
  wide.push(Op::Add, 0, 1);
  wide.output = wide.size() - 1;
  const std::string text = writeTape(wide);
  ASSERT_GT(text.size(), 4 * 65536u);
  {
    std::ofstream(d / "wide.tape") << text;
  }
  Tape back = readTapeFile(dir + "/wide.tape");
  back.name.clear();
  EXPECT_TRUE(writeTape(back) == writeTape(parseTape(text, "wide.tape"))) << "the streamed tape differs";
  EXPECT_EQ(back.numInputs(), 20000);
  EXPECT_EQ(tapeError([&] { parseTape(text + "input in7 1\n", "dup"); }).rfind("dup:", 0), 0u);
  std::filesystem::remove_all(d);
}
