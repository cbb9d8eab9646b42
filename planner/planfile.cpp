#include "planner/planfile.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "planner/liveness.h"
#include "util/hash.h"

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
    j["inner"] = inner;
  }
  return j;
}

// Parsing: every check names the file and the field.
class Reader {
 public:
  Reader(const Tape& t, std::string file) : tape_(t), file_(std::move(file)) {}

  Plan read(const std::string& text) {
    Json root;
    try {
      root = Json::parse(text);
    } catch (const Json::parse_error& e) {
      fail("(file)", "not JSON: " + where(text, e.byte) + jsonReason(e.what()));
    } catch (const Json::exception& e) {  // out_of_range: a number too large for any JSON type
      fail("(file)", "not JSON: " + jsonReason(e.what()));
    }
    if (!root.is_object()) fail("(file)", "expected a JSON object");
    keys(root, "", {"format", "tape", "strategy", "cuts", "inner", "requested_segments", "metrics",
                    "persistent_nodes", "segment_list"});
    const Json& format = need(root, "format", "");
    if (!format.is_string()) fail("format", "expected a string");
    if (format.get<std::string>() != kPlanFormat)
      fail("format", "'" + shown(format.get<std::string>()) + "' is not '" + kPlanFormat + "' (this tapelab reads version 1)");
    checkTape(need(root, "tape", ""));
    std::string strategy = "file";
    if (root.contains("strategy")) {
      if (!root["strategy"].is_string()) fail("strategy", "expected a string");
      strategy = root["strategy"].get<std::string>();
    }
    if (root.contains("requested_segments") && !root["requested_segments"].is_number_integer())
      fail("requested_segments", "expected an integer");
    for (const char* derived : {"metrics", "persistent_nodes", "segment_list"})
      if (root.contains(derived) && !(root[derived].is_object() || root[derived].is_array()))
        fail(derived, "expected an object or an array (it is derived again from the cuts)");
    std::vector<int32_t> bounds{0};
    const std::vector<int32_t> cuts = cutList(need(root, "cuts", ""), "cuts", 0, tape_.size());
    bounds.insert(bounds.end(), cuts.begin(), cuts.end());
    bounds.push_back(tape_.size());
    std::vector<CutTree> inner;
    if (root.contains("inner")) inner = innerList(root["inner"], "inner", bounds, false);
    try {
      return makePlan(tape_, std::move(bounds), strategy, std::move(inner));
    } catch (const std::invalid_argument& e) {
      fail("cuts", e.what());
    }
  }

 private:
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
    throw PlanFileError(file_ + ": " + field + ": " + why);
  }

  static std::string where(const std::string& text, size_t byte) {
    size_t line = 1, column = 1;
    for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
  }
  // nlohmann's message after its "[json.exception.parse_error.101] parse error at ...: " prefix.
  static std::string jsonReason(const std::string& what) {
    const size_t colon = what.rfind(": ");
    return colon == std::string::npos ? what : what.substr(colon + 2);
  }

  void keys(const Json& obj, const std::string& path, std::set<std::string> allowed) const {
    for (const auto& [key, value] : obj.items())
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
        fail(path + shown(key), "unknown key (known here: " + list + ")");
      }
  }

  const Json& need(const Json& obj, const std::string& key, const std::string& path) const {
    if (!obj.contains(key)) fail(path + key, "missing");
    return obj[key];
  }

  void checkTape(const Json& t) const {
    if (!t.is_object()) fail("tape", "expected an object with name, nodes and structure");
    keys(t, "tape.", {"name", "nodes", "structure"});
    if (t.contains("name") && !t["name"].is_string()) fail("tape.name", "expected a string");
    const Json& nodes = need(t, "nodes", "tape.");
    if (!nodes.is_number_integer()) fail("tape.nodes", "expected an integer");
    if (nodes.get<int64_t>() != tape_.size())
      fail("tape.nodes", "the plan is for a tape of " + std::to_string(nodes.get<int64_t>()) +
                             " nodes; this tape has " + std::to_string(tape_.size()));
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
      const int64_t x = v[k].get<int64_t>();
      if (x <= begin || x >= end)
        fail(at, std::to_string(x) + " is outside (" + std::to_string(begin) + ", " + std::to_string(end) + ")");
      if (!out.empty() && x <= out.back())
        fail(at, std::to_string(x) + " does not increase on " + std::to_string(out.back()));
      out.push_back(static_cast<int32_t>(x));
    }
    return out;
  }

  // One entry per segment of `bounds`; null or {} for a segment not cut again.
  std::vector<CutTree> innerList(const Json& v, const std::string& field, const std::vector<int32_t>& bounds,
                                 bool inChain) const {
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
        c.inner = innerList(e["inner"], at + ".inner", sub, c.chain);
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
  j["format"] = kPlanFormat;
  j["tape"] = {{"name", t.name}, {"nodes", t.size()}, {"structure", structureHash(t)}};
  j["strategy"] = p.strategy;
  if (requested > 0) j["requested_segments"] = requested;
  j["cuts"] = std::vector<int32_t>(p.bounds.begin() + 1, p.bounds.end() - 1);
  if (p.nested()) {
    Json inner = Json::array();
    for (const CutTree& c : p.inner) inner.push_back(treeJson(c));
    j["inner"] = inner;
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
  return Reader(tape, file).read(text);
}

Plan readPlanFile(const std::string& path, const Tape& tape) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw PlanFileError(path + ": (file): cannot be read");
  std::ostringstream ss;
  ss << f.rdbuf();
  return parsePlanFile(ss.str(), tape, path);
}

}  // namespace tapelab
