#include "planner/planfile.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <streambuf>
#include <string_view>

#include "planner/liveness.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/text.h"

namespace tapelab {
namespace {

using Json = nlohmann::ordered_json;

Json treeJson(const CutTree& c) {
  if (c.leaf()) return nullptr;
  Json j;
  j["cuts"] = c.cuts;
  if (c.chain) j["chain"] = true;
  if (!c.inner.empty()) {
    Json inner = Json::array();
    for (const CutTree& i : c.inner) inner.push_back(treeJson(i));
    j["inner"] = std::move(inner);  // a copy here made writing a plan quadratic in its depth
  }
  return j;
}

// What the parser reads: a string, or a file through InputFile (a chunk at a time, never the
// whole file), with the line and column of the last byte read for messages.
class Source : public std::streambuf {
 public:
  explicit Source(std::string_view text) { set(text); }
  explicit Source(InputFile& file) : file_(&file) {}
  // "line L, column C" of the last byte the parser took (the same for a string and a file).
  std::string where() const {
    if (gptr() == eback()) return at(lastLine_, lastColumn_);  // the last byte taken was a retired chunk's
    size_t line = lines_, column = column_;
    for (const char* c = eback(); c + 1 < gptr(); ++c) advance(*c, line, column);
    return at(line, column);
  }

 protected:
  int_type underflow() override {
    if (!file_) return traits_type::eof();
    for (const char* c = eback(); c < egptr(); ++c) {  // the chunk done with: where its last byte was
      lastLine_ = lines_;
      lastColumn_ = column_;
      advance(*c, lines_, column_);
    }
    const std::string_view chunk = file_->next();  // throws InputError past the limit
    if (chunk.empty()) {
      setg(egptr(), egptr(), egptr());  // nothing left to count twice
      return traits_type::eof();
    }
    set(chunk);
    return traits_type::to_int_type(*gptr());
  }

 private:
  static void advance(char c, size_t& line, size_t& column) {
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  static std::string at(size_t line, size_t column) {
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
  }
  void set(std::string_view v) {
    char* b = const_cast<char*>(v.data());  // read only: a get area needs char*
    setg(b, b, b + v.size());
  }
  InputFile* file_ = nullptr;
  size_t lines_ = 1, column_ = 1;          // where the current chunk starts
  size_t lastLine_ = 1, lastColumn_ = 1;   // where the last byte of the chunks before it was
};

// Parsing: every check names the file and the field.
class Reader {
 public:
  Reader(const Tape& t, std::string file) : tape_(t), file_(std::move(file)) {}

  Plan read(Source& source) {
    Json root;
    std::istream in(&source);
    // Checked as the parser goes, so that no input costs more than its size: nesting at most
    // kMaxJsonDepth, no key twice in an object, at most kMaxObjectKeys keys in one; the derived
    // fields are checked for their type and dropped, never held.
    std::vector<std::set<std::string>> open;  // keys seen, per object or array being parsed
    bool derivedValue = false;
    auto check = [&](int depth, Json::parse_event_t event, Json& parsed) -> bool {
      using E = Json::parse_event_t;
      switch (event) {
        case E::object_start:
        case E::array_start:
          if (depth >= kMaxJsonDepth)
            fail("(file)", source.where() + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                               " levels (a plan's inner cuts nest at most " + std::to_string(kMaxPlanDepth) + " levels)");
          if (depth == 1) derivedValue = false;
          open.emplace_back();
          return true;
        case E::object_end:
        case E::array_end:
          open.pop_back();
          return true;
        case E::key: {
          const std::string key = parsed.get<std::string>();
          if (!open.back().insert(key).second)
            fail("(file)", source.where() + ": the key '" + shown(key) + "' appears twice in one object");
          if (open.back().size() > kMaxObjectKeys)
            fail("(file)", source.where() + ": an object with more than " + std::to_string(kMaxObjectKeys) + " keys");
          derivedValue = depth == 1 && (key == "metrics" || key == "persistent_nodes" || key == "segment_list");
          if (derivedValue) return false;  // derived again from the cuts: dropped
          return true;
        }
        case E::value:
          if (depth == 1 && derivedValue)
            fail("(file)", source.where() + ": a derived field (metrics, persistent_nodes, segment_list) is not an "
                                              "object or an array (it is derived again from the cuts)");
          return true;
      }
      return true;
    };
    try {
      root = Json::parse(in, check);
    } catch (const Json::parse_error& e) {
      fail("(file)", "not JSON: " + source.where() + ": " + jsonReason(e.what()));
    } catch (const Json::exception& e) {  // out_of_range: a number too large for any JSON type
      fail("(file)", "not JSON: " + source.where() + ": " + jsonReason(e.what()));
    } catch (const InputError& e) {
      fail("(file)", e.what());
    } catch (const std::bad_alloc&) {
      fail("(file)", "out of memory parsing the plan file (at " + source.where() + ")");
    }
    if (!root.is_object())
      fail("(file)", std::string("expected a plan: a JSON object with format, tape and cuts; found ") +
                         (root.is_array() ? "an array" : root.is_string() ? "a string" : root.is_null() ? "null" : "a value"));
    const Json& format = need(root, "format", "");
    if (!format.is_string()) fail("format", "expected a string");
    const bool v2 = format.get<std::string>() == kPlanFormat2;
    if (format.get<std::string>() != kPlanFormat && !v2)
      fail("format", "'" + shown(format.get<std::string>()) + "' is not '" + kPlanFormat + "' or '" + kPlanFormat2 +
                         "' (this tapelab reads versions 1 and 2)");
    std::set<std::string> known{"format", "tape", "strategy", "cuts", "inner", "requested_segments", "metrics",
                                "persistent_nodes", "segment_list"};
    if (v2) known.insert({"family", "keep", "solver"});
    keys(root, "", known);
    checkTape(need(root, "tape", ""));
    std::string strategy = "file";
    if (root.contains("strategy")) {
      if (!root["strategy"].is_string()) fail("strategy", "expected a string");
      strategy = root["strategy"].get<std::string>();
      checkLabel(strategy);
    }
    if (root.contains("requested_segments") &&
        !(root["requested_segments"].is_number_integer() &&
          within(root["requested_segments"], 0, std::numeric_limits<int32_t>::max())))
      fail("requested_segments", "expected an integer from 0 to 2147483647");
    std::vector<int32_t> bounds{0};
    const std::vector<int32_t> cuts = cutList(need(root, "cuts", ""), "cuts", 0, tape_.size());
    bounds.insert(bounds.end(), cuts.begin(), cuts.end());
    bounds.push_back(tape_.size());
    const bool perValue = family(root);
    std::vector<CutTree> inner;
    if (root.contains("inner")) {
      if (perValue) fail("inner", "a per-value plan has no nested cuts (its cuts only group the reverse sweep)");
      inner = innerList(root["inner"], "inner", bounds, false, 1);
    }
    std::vector<int32_t> keep;
    if (perValue) keep = cutList(need(root, "keep", ""), "keep", -1, tape_.size());
    Plan plan;
    try {
      plan = perValue ? makePerValuePlan(tape_, std::move(bounds), std::move(keep), strategy)
                      : makePlan(tape_, std::move(bounds), strategy, std::move(inner));
    } catch (const std::invalid_argument& e) {
      fail("cuts", e.what());
    }
    if (root.contains("solver")) plan.solver = solverOf(root["solver"]);
    return plan;
  }

 private:
  // "family": true for "per-value"; "keep" only there.
  bool family(const Json& root) const {
    bool perValue = false;
    if (root.contains("family")) {
      const Json& f = root["family"];
      if (!f.is_string() || (f.get<std::string>() != "segment" && f.get<std::string>() != "per-value"))
        fail("family", "expected \"segment\" or \"per-value\"");
      perValue = f.get<std::string>() == "per-value";
    }
    if (!perValue && root.contains("keep")) fail("keep", "only a per-value plan keeps values of its own (\"family\": \"per-value\")");
    return perValue;
  }

  Plan::Solver solverOf(const Json& v) const {
    if (!v.is_object()) fail("solver", "expected an object with status, objective, bound, gap, seconds, name");
    keys(v, "solver.", {"status", "objective", "bound", "gap", "seconds", "name"});
    Plan::Solver s;
    auto text = [&](const char* key, std::string& out) {
      if (!v.contains(key)) return;
      if (!v[key].is_string()) fail(std::string("solver.") + key, "expected a string");
      out = v[key].get<std::string>();
      checkText(std::string("solver.") + key, out);
    };
    auto number = [&](const char* key, double& out) {
      if (!v.contains(key)) return;
      if (!v[key].is_number()) fail(std::string("solver.") + key, "expected a number");
      out = v[key].get<double>();
    };
    text("status", s.status);
    text("name", s.solverName);
    number("objective", s.objective);
    number("bound", s.bound);
    number("gap", s.gap);
    number("seconds", s.seconds);
    if (s.status.empty()) s.status = "unknown";
    return s;
  }

  void checkText(const std::string& field, const std::string& s) const {
    const bool ok = s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
                      return c >= 32 && c <= 126 && c != '"' && c != '\'' && c != '\\';
                    });
    if (!ok) fail(field, "'" + shown(s) + "' is not plain text (at most 64 printable ASCII characters, no quotes or backslash)");
  }

  // A strategy is a label (where the cuts came from), never an instruction: 1-64 printable ASCII
  // characters other than quotes and backslash, so that what the outputs echo is plain text.
  void checkLabel(const std::string& s) const {
    const bool ok = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
                      return c >= 32 && c <= 126 && c != '"' && c != '\'' && c != '\\';
                    });
    if (!ok)
      fail("strategy", "'" + shown(s) + "' is not a label (1-64 printable ASCII characters, no quotes or backslash); "
                                        "the cuts are the plan, the strategy only names where they came from");
  }

  // A string from the file as an error shows it: control bytes escaped, long ones cut, so the error stays one line.
  static std::string shown(const std::string& s) {
    std::string out;
    for (unsigned char c : s.substr(0, 80)) {
      if (c < 32 || c == 127) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
    return s.size() > 80 ? out + "..." : out;
  }

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    // A field deep in nested cuts is named by its start and its end: the line stays readable.
    const std::string shownField = field.size() <= 120 ? field : field.substr(0, 60) + "..." + field.substr(field.size() - 50);
    throw PlanFileError(file_ + ": " + shownField + ": " + why);
  }

  // nlohmann's message after its "[json.exception.parse_error.101] parse error at line L, column C: "
  // prefix (the first ": " after it: the token it quotes may hold one too), whole tokens, control
  // bytes escaped, a long quoted token shortened on a character boundary.
  static std::string jsonReason(const std::string& what) {
    std::string r = what;
    if (const size_t tag = r.find("] "); r.rfind("[json.exception.", 0) == 0 && tag != std::string::npos) r = r.substr(tag + 2);
    if (r.rfind("parse error at ", 0) == 0)
      if (const size_t colon = r.find(": "); colon != std::string::npos) r = r.substr(colon + 2);
    const size_t quoted = r.find("last read: '");
    if (quoted != std::string::npos && r.size() > quoted + 12 + 80 && r.back() == '\'')
      r = r.substr(0, quoted + 12) + shortened(r.substr(quoted + 12, r.size() - quoted - 13), 80) + "'";
    return escapeControls(r);
  }

  // A JSON integer as the file wrote it (2^63 is not -2^63).
  static std::string integerText(const Json& v) {
    return v.is_number_unsigned() ? std::to_string(v.get<uint64_t>()) : std::to_string(v.get<int64_t>());
  }
  // Whether a JSON integer is in [lo, hi] (an unsigned one past INT64_MAX never is).
  static bool within(const Json& v, int64_t lo, int64_t hi) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return false;
    const int64_t x = v.get<int64_t>();
    return x >= lo && x <= hi;
  }

  void keys(const Json& obj, const std::string& path, std::set<std::string> allowed) const {
    for (const auto& [key, value] : obj.items())
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
        fail(path + shown(key), "unknown key (known here: " + list + ")");
      }
  }

  // A required key; when it is not there the message names where it is missing, not the key as a field.
  const Json& need(const Json& obj, const std::string& key, const std::string& path) const {
    if (!obj.contains(key))
      fail(path.empty() ? "(file)" : path.substr(0, path.size() - 1), "the required key '" + key + "' is missing");
    return obj[key];
  }

  void checkTape(const Json& t) const {
    if (!t.is_object()) fail("tape", "expected an object with name, nodes and structure");
    keys(t, "tape.", {"name", "nodes", "structure"});
    if (t.contains("name") && !t["name"].is_string()) fail("tape.name", "expected a string");
    const Json& nodes = need(t, "nodes", "tape.");
    if (!nodes.is_number_integer()) fail("tape.nodes", "expected an integer");
    if (!within(nodes, tape_.size(), tape_.size()))
      fail("tape.nodes", "the plan is for a tape of " + integerText(nodes) + " nodes; this tape has " +
                             std::to_string(tape_.size()));
    const Json& structure = need(t, "structure", "tape.");
    if (!structure.is_string()) fail("tape.structure", "expected a string of 32 hex digits");
    const std::string want = structureHash(tape_);
    if (structure.get<std::string>() != want)
      fail("tape.structure", "the plan was made for another tape (" + shown(structure.get<std::string>()) +
                                 "; this tape's structure is " + want + ")");
  }

  std::vector<int32_t> cutList(const Json& v, const std::string& field, int32_t begin, int32_t end) const {
    if (!v.is_array()) fail(field, "expected an array of node indices");
    std::vector<int32_t> out;
    for (size_t k = 0; k < v.size(); ++k) {
      const std::string at = field + "[" + std::to_string(k) + "]";
      if (!v[k].is_number_integer()) fail(at, "expected an integer node index");
      if (!within(v[k], int64_t{begin} + 1, int64_t{end} - 1))
        fail(at, integerText(v[k]) + " is outside (" + std::to_string(begin) + ", " + std::to_string(end) + ")");
      const int64_t x = v[k].get<int64_t>();
      if (!out.empty() && x <= out.back())
        fail(at, std::to_string(x) + " does not increase on " + std::to_string(out.back()));
      out.push_back(static_cast<int32_t>(x));
    }
    return out;
  }

  // One entry per segment of `bounds`; null or {} for a segment not cut again.
  std::vector<CutTree> innerList(const Json& v, const std::string& field, const std::vector<int32_t>& bounds,
                                 bool inChain, int depth) const {
    const size_t segments = bounds.size() - 1;
    if (!v.is_array()) fail(field, "expected an array with one entry per segment");
    if (v.size() != segments)
      fail(field, std::to_string(v.size()) + " entries for " + std::to_string(segments) + " segments");
    std::vector<CutTree> out;
    for (size_t k = 0; k < segments; ++k) {
      const std::string at = field + "[" + std::to_string(k) + "]";
      const Json& e = v[k];
      CutTree c;
      if (e.is_null() || (e.is_object() && e.empty())) {
        out.push_back(c);
        continue;
      }
      if (!e.is_object()) fail(at, "expected null or an object with cuts");
      if (inChain) fail(at, "the sub-segments of a chain cannot be cut again");
      if (depth >= kMaxPlanDepth)  // its cuts would make the plan kMaxPlanDepth + 1 levels deep
        fail(at, "nested deeper than " + std::to_string(kMaxPlanDepth) + " levels of cuts (the most a plan may nest)");
      keys(e, at + ".", {"cuts", "chain", "inner"});
      c.cuts = cutList(need(e, "cuts", at + "."), at + ".cuts", bounds[k], bounds[k + 1]);
      if (e.contains("chain")) {
        if (!e["chain"].is_boolean()) fail(at + ".chain", "expected true or false");
        c.chain = e["chain"].get<bool>();
      }
      if (e.contains("inner")) {
        if (c.cuts.empty()) fail(at + ".inner", "a segment without cuts has no sub-segments");
        std::vector<int32_t> sub{bounds[k]};
        sub.insert(sub.end(), c.cuts.begin(), c.cuts.end());
        sub.push_back(bounds[k + 1]);
        c.inner = innerList(e["inner"], at + ".inner", sub, c.chain, depth + 1);
      }
      out.push_back(std::move(c));
    }
    return out;
  }

  const Tape& tape_;
  std::string file_;
};

}  // namespace

std::string structureHash(const Tape& t) {
  std::string bytes;
  auto put = [&](const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); };
  const int32_t header[3] = {t.size(), t.numInputs(), t.output};
  put(header, sizeof header);
  put(t.op.data(), t.op.size() * sizeof(Op));
  put(t.a.data(), t.a.size() * sizeof(int32_t));
  put(t.b.data(), t.b.size() * sizeof(int32_t));
  // Third arguments only where a node has one, so a tape without select keeps its hash (and plan files).
  if (std::any_of(t.c.begin(), t.c.end(), [](int32_t j) { return j >= 0; })) put(t.c.data(), t.c.size() * sizeof(int32_t));
  return contentHash(bytes);
}

std::string planInnerJson(const Plan& p) {
  Json inner = Json::array();
  for (const CutTree& c : p.inner) inner.push_back(treeJson(c));
  return inner.dump();
}

std::string planFileText(const Tape& t, const Plan& p, int requested) {
  const PlanMetrics m = planMetrics(t, p);
  Json j;
  const bool v2 = p.perValue || !p.solver.status.empty();
  j["format"] = v2 ? kPlanFormat2 : kPlanFormat;
  j["tape"] = {{"name", t.name}, {"nodes", t.size()}, {"structure", structureHash(t)}};
  j["strategy"] = p.strategy;
  if (requested > 0) j["requested_segments"] = requested;
  if (p.perValue) j["family"] = "per-value";
  j["cuts"] = std::vector<int32_t>(p.bounds.begin() + 1, p.bounds.end() - 1);
  if (p.perValue) j["keep"] = p.keep;
  if (!p.solver.status.empty())
    j["solver"] = {{"status", p.solver.status}, {"objective", p.solver.objective}, {"bound", p.solver.bound},
                   {"gap", p.solver.gap},       {"seconds", p.solver.seconds},     {"name", p.solver.solverName}};
  if (p.nested()) {
    Json inner = Json::array();
    for (const CutTree& c : p.inner) inner.push_back(treeJson(c));
    j["inner"] = std::move(inner);
  }
  j["metrics"] = {{"segments", m.segments},         {"depth", m.depth},
                  {"persistent", m.persistent},     {"peak_live", m.peakLive},
                  {"scratch_slots", m.scratchSlots}, {"recompute_ops", m.recomputeOps},
                  {"recompute_cost", m.recomputeCost}, {"peak_segment", m.peakSegment}};
  j["persistent_nodes"] = p.persistent;
  const std::vector<int32_t> live = liveAcross(t, lastUse(t));
  Json segs = Json::array();
  for (int s = 0; s < p.segments(); ++s) {
    Json g = {{"begin", p.begin(s)}, {"end", p.end(s)}};
    if (s + 1 < p.segments()) {
      g["live_across_end"] = live[p.end(s)];
      g["stored_at_end"] = p.storedAt[s];
    }
    segs.push_back(g);
  }
  j["segment_list"] = segs;
  return j.dump(1) + "\n";
}

Plan parsePlanFile(const std::string& text, const Tape& tape, const std::string& file) {
  if (text.size() > kMaxPlanBytes)
    throw PlanFileError(file + ": (file): larger than the limit of " + byteCount(kMaxPlanBytes));
  Source source(text);
  return Reader(tape, file).read(source);
}

Plan readPlanFile(const std::string& path, const Tape& tape) {
  try {
    InputFile in(path, kMaxPlanBytes);
    Source source(in);
    return Reader(tape, path).read(source);
  } catch (const InputError& e) {  // the file could not be opened
    throw PlanFileError(path + ": (file): " + e.what());
  }
}

}  // namespace tapelab
