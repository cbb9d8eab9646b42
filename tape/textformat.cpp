#include "tape/textformat.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>
#include <functional>
#include <vector>

#include "util/files.h"

namespace tapelab {
namespace {

// The input names seen so far, as indices into the tape's own names (no copies): open addressing
// over a power-of-two table of 4-byte slots with each name's hash beside it, so that a million
// inputs cost two flat arrays, not a million allocated nodes.
class NameSet {
 public:
  // Inserts names[names.size()] to come, `name`; false when it is there already.
  bool insert(const std::string& name, const std::vector<std::string>& names) {
    if ((count_ + 1) * 2 > slots_.size()) grow(names);
    const uint64_t h = std::hash<std::string>{}(name);
    for (size_t at = h & (slots_.size() - 1);; at = (at + 1) & (slots_.size() - 1)) {
      const uint32_t s = slots_[at];
      if (s == 0) {
        slots_[at] = static_cast<uint32_t>(names.size()) + 1;
        hashes_.push_back(h);
        ++count_;
        return true;
      }
      if (hashes_[s - 1] == h && names[s - 1] == name) return false;
    }
  }

 private:
  void grow(const std::vector<std::string>& names) {
    std::vector<uint32_t> old = std::move(slots_);
    slots_.assign(std::max<size_t>(16, old.size() * 2), 0);
    for (uint32_t s : old)
      if (s != 0)
        for (size_t at = hashes_[s - 1] & (slots_.size() - 1);; at = (at + 1) & (slots_.size() - 1))
          if (slots_[at] == 0) {
            slots_[at] = s;
            break;
          }
    (void)names;
  }
  std::vector<uint32_t> slots_;   // 0 empty, else the name's index + 1
  std::vector<uint64_t> hashes_;  // per name, in tape order
  size_t count_ = 0;
};

// The reader takes one line at a time (no copy of the file is kept): memory is the tape's own
// plus one line, time is linear in the bytes (input names are checked against NameSet).
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  void line(std::string_view raw) {
    ++line_;
    if (line_ == 1 && raw.substr(0, 3) == "\xEF\xBB\xBF") raw.remove_prefix(3);  // a UTF-8 byte-order mark
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    checkBytes(raw, line_);
    const size_t nw = words(raw);
    if (nw == 0) return;
    const std::string_view w0 = w_[0];
    if (!header_) {
      if (w0 != "tapelab-tape") fail(line_, "not a tapelab tape (the first line must be 'tapelab-tape 1')");
      if (nw != 2) fail(line_, "header must be 'tapelab-tape 1'");
      if (w_[1] != "1") fail(line_, "unsupported version '" + shown(w_[1]) + "' (this reader knows version 1)");
      header_ = true;
      return;
    }
    if (haveOutput_)
      fail(line_, w0 == "output" ? "duplicate 'output' line (a tape has exactly one)" : "'output' must be the last line");
    if (w0 == "output") {
      expectCount(nw, 1);
      const int32_t node = index(w_[1]);
      if (node >= t_.size())
        fail(line_, "output " + std::string(w_[1]) + " is out of range (the tape has " + std::to_string(t_.size()) + " nodes)");
      t_.output = node;
      haveOutput_ = true;
      return;
    }
    if (t_.size() == std::numeric_limits<int32_t>::max()) fail(line_, "too many nodes");
    if (w0 == "input") {
      expectCount(nw, 2);
      const std::string name(w_[1]);
      if (!validName(name)) fail(line_, "input name '" + shown(name) + "' must be letters, digits, '_' or '.', not starting with a digit");
      if (!names_.insert(name, t_.inputNames)) fail(line_, "duplicate input name '" + name + "'");
      t_.addInput(name, number(w_[2]));
      return;
    }
    const std::optional<Op> op = opFromName(std::string(w0));
    if (!op) fail(line_, "unknown op '" + shown(w0) + "'");
    if (*op == Op::Const) {
      expectCount(nw, 1);
      t_.push(Op::Const, -1, -1, number(w_[1]));
    } else if (*op == Op::Randn) {
      expectCount(nw, 1);
      t_.push(Op::Randn, -1, -1, static_cast<double>(drawIndex(w_[1])));
    } else {
      const int ar = arity(*op);
      expectCount(nw, static_cast<size_t>(ar));
      int32_t args[kMaxArity] = {-1, -1, -1};
      for (int k = 0; k < ar; ++k) {
        args[k] = index(w_[1 + k]);
        if (args[k] >= t_.size())
          fail(line_, "argument " + std::string(w_[1 + k]) + " is not an earlier node (this is node " + std::to_string(t_.size()) + ")");
      }
      if (ar == 3)
        t_.push3(*op, args[0], args[1], args[2]);
      else
        t_.push(*op, args[0], args[1]);
    }
  }

  Tape finish(bool emptyFile) {
    if (emptyFile) fail(1, "empty file");
    if (!header_) fail(line_ == 0 ? 1 : line_, "empty file (no 'tapelab-tape 1' header)");
    if (!haveOutput_) fail(line_, "missing 'output' line");
    return std::move(t_);
  }

  int lineNumber() const { return line_; }
  // A line too long to be a tape's: binary data says so first (`run /dev/zero`), else its length.
  [[noreturn]] void tooLong(std::string_view start) const {
    checkBytes(start, line_ + 1);
    fail(line_ + 1, "a line longer than " + byteCount(kMaxTapeLineBytes));
  }
  void checkBytes(std::string_view raw, int line) const {
    for (unsigned char u : raw)
      if (u == 0 || u == 127 || (u < 32 && u != '\t' && u != '\r'))
        fail(line, "binary data (control byte " + std::to_string(u) + "), not a tape");
  }
  [[noreturn]] void fail(int line, const std::string& why) const {
    throw TapeParseError(file_ + ":" + std::to_string(line) + ": " + why);
  }

 private:
  // A word from the file as an error shows it: at most 80 bytes, so the error stays short.
  static std::string shown(std::string_view s) {
    return s.size() > 80 ? std::string(s.substr(0, 80)) + "..." : std::string(s);
  }

  // Splits the line before any '#' into w_ (at most four words kept); returns how many there are.
  size_t words(std::string_view raw) {
    raw = raw.substr(0, raw.find('#'));
    size_t n = 0;
    for (size_t i = 0; i < raw.size();) {
      while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r')) ++i;
      if (i == raw.size()) break;
      const size_t start = i;
      while (i < raw.size() && raw[i] != ' ' && raw[i] != '\t' && raw[i] != '\r') ++i;
      if (n < 4) w_[n] = raw.substr(start, i - start);
      ++n;
    }
    return n;
  }

  void expectCount(size_t nw, size_t n) const {
    if (nw != n + 1)
      fail(line_, "'" + shown(w_[0]) + "' takes " + std::to_string(n) + (n == 1 ? " argument" : " arguments") + ", got " +
                      std::to_string(nw - 1));
  }

  static bool validName(const std::string& s) {
    if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
    for (char c : s)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
    return true;
  }

  int32_t index(std::string_view s) const {
    if (!s.empty() && s[0] == '-') fail(line_, "node index " + shown(s) + " is negative");
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && v > std::numeric_limits<int32_t>::max()))
      fail(line_, "node index " + shown(s) + " overflows");
    if (ec != std::errc() || p != s.data() + s.size()) fail(line_, "node index '" + shown(s) + "' is not an integer");
    return static_cast<int32_t>(v);
  }

  uint32_t drawIndex(std::string_view s) const {
    if (!s.empty() && s[0] == '-') fail(line_, "draw index " + shown(s) + " is negative");
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && v > 0xFFFFFFFFull))
      fail(line_, "draw index " + shown(s) + " overflows (at most 4294967295)");
    if (ec != std::errc() || p != s.data() + s.size()) fail(line_, "draw index '" + shown(s) + "' is not a non-negative integer");
    return static_cast<uint32_t>(v);
  }

  double number(std::string_view word) const {
    const std::string s(word);
    const char* begin = s.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(begin, &end);
    if (end == begin || *end != '\0') fail(line_, "'" + shown(s) + "' is not a number");
    if (std::isnan(v)) fail(line_, "NaN is not allowed");
    if (std::isinf(v)) fail(line_, errno == ERANGE ? "number " + shown(s) + " overflows a double" : "infinity is not allowed");
    if (v == 0 && errno == ERANGE) fail(line_, "number " + shown(s) + " underflows to zero");
    return v;
  }

  const std::string& file_;
  int line_ = 0;
  bool header_ = false, haveOutput_ = false;
  Tape t_;
  NameSet names_;
  std::string_view w_[4];
};

std::string fmt17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Tape parseTape(const std::string& text, const std::string& fileName) {
  Reader r(fileName);
  if (text.size() > kMaxTapeBytes) r.fail(0, "larger than the limit of " + byteCount(kMaxTapeBytes));
  size_t at = 0;
  while (at < text.size()) {
    const size_t eol = text.find('\n', at);
    const size_t end = eol == std::string::npos ? text.size() : eol;
    if (end - at > kMaxTapeLineBytes) r.tooLong(std::string_view(text).substr(at, kMaxTapeLineBytes));
    r.line(std::string_view(text).substr(at, end - at));
    at = eol == std::string::npos ? text.size() : eol + 1;
  }
  return r.finish(text.empty());
}

Tape readTapeFile(const std::string& path) {
  Reader r(path);
  std::string carry;  // the line read so far
  uint64_t bytes = 0;
  try {
    InputFile in(path, kMaxTapeBytes);
    for (std::string_view chunk; !(chunk = in.next()).empty();) {
      bytes += chunk.size();
      for (size_t eol; (eol = chunk.find('\n')) != std::string_view::npos;) {
        if (carry.empty()) {
          if (eol > kMaxTapeLineBytes) r.tooLong(chunk.substr(0, eol));
          r.line(chunk.substr(0, eol));
        } else {
          carry.append(chunk.substr(0, eol));
          if (carry.size() > kMaxTapeLineBytes) r.tooLong(carry);
          r.line(carry);
          carry.clear();
        }
        chunk.remove_prefix(eol + 1);
      }
      carry.append(chunk);
      if (carry.size() > kMaxTapeLineBytes) r.tooLong(carry);
    }
  } catch (const InputError& e) {
    r.fail(r.lineNumber(), e.what());
  } catch (const std::bad_alloc&) {
    r.fail(r.lineNumber(), "out of memory reading the tape (" + std::to_string(bytes) + " bytes read)");
  }
  if (!carry.empty()) r.line(carry);
  Tape t = r.finish(bytes == 0);
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
        for (int k = 1; k < arity(t.op[i]); ++k) {
          out += ' ';
          out += std::to_string(t.arg(i, k));
        }
    }
    out += "\n";
  }
  out += "output " + std::to_string(t.output) + "\n";
  return out;
}

void writeTapeFile(const Tape& t, const std::string& path, const std::vector<std::string>& inputs) {
  writeOutputFile(path, writeTape(t), inputs, "--out");
}

}  // namespace tapelab
