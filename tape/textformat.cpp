#include "tape/textformat.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

namespace tapelab {
namespace {

class Reader {
 public:
  Reader(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  Tape read() {
    if (text_.empty()) fail(1, "empty file");
    for (size_t i = 0; i < text_.size(); ++i) {
      const unsigned char u = static_cast<unsigned char>(text_[i]);
      if (u == 0 || u == 127 || (u < 32 && u != '\n' && u != '\r' && u != '\t'))
        fail(lineOf(i), "binary data (control byte " + std::to_string(u) + "), not a tape");
    }
    std::istringstream in(text_);
    std::string raw;
    int line = 0;
    bool header = false, haveOutput = false;
    Tape t;
    while (std::getline(in, raw)) {
      ++line;
      std::vector<std::string> w = words(raw);
      if (w.empty()) continue;
      if (!header) {
        if (w[0] != "tapelab-tape") fail(line, "not a tapelab tape (the first line must be 'tapelab-tape 1')");
        if (w.size() != 2) fail(line, "header must be 'tapelab-tape 1'");
        if (w[1] != "1") fail(line, "unsupported version '" + w[1] + "' (this reader knows version 1)");
        header = true;
        continue;
      }
      if (haveOutput)
        fail(line, w[0] == "output" ? "duplicate 'output' line (a tape has exactly one)" : "'output' must be the last line");
      if (w[0] == "output") {
        expectCount(line, w, 1);
        const int32_t node = index(line, w[1]);
        if (node >= t.size()) fail(line, "output " + w[1] + " is out of range (the tape has " + std::to_string(t.size()) + " nodes)");
        t.output = node;
        haveOutput = true;
        continue;
      }
      if (t.size() == std::numeric_limits<int32_t>::max()) fail(line, "too many nodes");
      if (w[0] == "input") {
        expectCount(line, w, 2);
        if (!validName(w[1])) fail(line, "input name '" + w[1] + "' must be letters, digits, '_' or '.', not starting with a digit");
        if (t.inputIndex(w[1]) >= 0) fail(line, "duplicate input name '" + w[1] + "'");
        t.addInput(w[1], number(line, w[2]));
        continue;
      }
      const std::optional<Op> op = opFromName(w[0]);
      if (!op) fail(line, "unknown op '" + w[0] + "'");
      if (*op == Op::Const) {
        expectCount(line, w, 1);
        t.push(Op::Const, -1, -1, number(line, w[1]));
      } else if (*op == Op::Randn) {
        expectCount(line, w, 1);
        t.push(Op::Randn, -1, -1, static_cast<double>(drawIndex(line, w[1])));
      } else {
        const int ar = arity(*op);
        expectCount(line, w, ar);
        int32_t args[2] = {-1, -1};
        for (int k = 0; k < ar; ++k) {
          args[k] = index(line, w[1 + k]);
          if (args[k] >= t.size())
            fail(line, "argument " + w[1 + k] + " is not an earlier node (this is node " + std::to_string(t.size()) + ")");
        }
        t.push(*op, args[0], args[1]);
      }
    }
    if (!header) fail(line == 0 ? 1 : line, "empty file (no 'tapelab-tape 1' header)");
    if (!haveOutput) fail(line, "missing 'output' line");
    return t;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& why) const {
    throw TapeParseError(file_ + ":" + std::to_string(line) + ": " + why);
  }

  int lineOf(size_t pos) const {
    int line = 1;
    for (size_t q = 0; q < pos; ++q) line += text_[q] == '\n';
    return line;
  }

  static std::vector<std::string> words(const std::string& raw) {
    std::string s = raw.substr(0, raw.find('#'));
    std::istringstream ss(s);
    std::vector<std::string> w;
    for (std::string x; ss >> x;) w.push_back(x);
    return w;
  }

  void expectCount(int line, const std::vector<std::string>& w, size_t n) const {
    if (w.size() != n + 1)
      fail(line, "'" + w[0] + "' takes " + std::to_string(n) + (n == 1 ? " argument" : " arguments") + ", got " +
                     std::to_string(w.size() - 1));
  }

  static bool validName(const std::string& s) {
    if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
    for (char c : s)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
    return true;
  }

  int32_t index(int line, const std::string& s) const {
    if (!s.empty() && s[0] == '-') fail(line, "node index " + s + " is negative");
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && v > std::numeric_limits<int32_t>::max()))
      fail(line, "node index " + s + " overflows");
    if (ec != std::errc() || p != s.data() + s.size()) fail(line, "node index '" + s + "' is not an integer");
    return static_cast<int32_t>(v);
  }

  uint32_t drawIndex(int line, const std::string& s) const {
    if (!s.empty() && s[0] == '-') fail(line, "draw index " + s + " is negative");
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && v > 0xFFFFFFFFull))
      fail(line, "draw index " + s + " overflows (at most 4294967295)");
    if (ec != std::errc() || p != s.data() + s.size()) fail(line, "draw index '" + s + "' is not a non-negative integer");
    return static_cast<uint32_t>(v);
  }

  double number(int line, const std::string& s) const {
    const char* begin = s.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(begin, &end);
    if (end == begin || *end != '\0') fail(line, "'" + s + "' is not a number");
    if (std::isnan(v)) fail(line, "NaN is not allowed");
    if (std::isinf(v)) fail(line, errno == ERANGE ? "number " + s + " overflows a double" : "infinity is not allowed");
    if (v == 0 && errno == ERANGE) fail(line, "number " + s + " underflows to zero");
    return v;
  }

  const std::string& text_;
  const std::string& file_;
};

std::string fmt17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Tape parseTape(const std::string& text, const std::string& fileName) { return Reader(text, fileName).read(); }

Tape readTapeFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw TapeParseError(path + ":0: cannot open file");
  std::stringstream ss;
  ss << f.rdbuf();
  Tape t = parseTape(ss.str(), path);
  const auto slash = path.find_last_of('/');
  t.name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  return t;
}

std::string writeTape(const Tape& t) {
  std::string out = "tapelab-tape 1\n";
  if (!t.name.empty()) out += "# " + t.name + ": " + std::to_string(t.size()) + " nodes\n";
  for (int32_t i = 0; i < t.size(); ++i) {
    switch (t.op[i]) {
      case Op::Input: {
        const auto k = static_cast<size_t>(t.imm[i]);
        out += "input " + t.inputNames[k] + " " + fmt17(t.inputDefaults[k]);
        break;
      }
      case Op::Const: out += "const " + fmt17(t.imm[i]); break;
      case Op::Randn: out += "randn " + std::to_string(static_cast<uint32_t>(t.imm[i])); break;
      default:
        // Appended piece by piece: `" " + std::to_string(..)` trips GCC 12's -Wrestrict false positive at -O3.
        out += name(t.op[i]);
        out += ' ';
        out += std::to_string(t.a[i]);
        if (arity(t.op[i]) == 2) {
          out += ' ';
          out += std::to_string(t.b[i]);
        }
    }
    out += "\n";
  }
  out += "output " + std::to_string(t.output) + "\n";
  return out;
}

void writeTapeFile(const Tape& t, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << writeTape(t);
  if (!f) throw std::runtime_error("error writing " + path);
}

}  // namespace tapelab
