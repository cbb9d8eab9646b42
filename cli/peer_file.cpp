#include "cli/peer_file.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/options.h"
#include "util/files.h"

namespace tapelab::cli {
namespace {

// A peers CSV is a few hundred rows; 64 MiB is far past any real one.
constexpr uint64_t kMaxPeerFileBytes = uint64_t{64} << 20;

// One CSV line: fields split at commas outside double quotes; "" inside quotes is a quote.
bool splitCsv(const std::string& line, std::vector<std::string>& out) {
  out.assign(1, "");
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return !quoted;
}

}  // namespace

std::vector<PeerRow> readPeerFile(const std::string& path) {
  std::stringstream in;
  try {
    in.str(readInputText(path, kMaxPeerFileBytes));
  } catch (const InputError& e) {
    throw UsageError("--peer " + path + ": " + e.what());
  }
  std::map<std::string, size_t> col;
  bool jaxLayout = false;
  std::vector<PeerRow> rows;
  std::string line;
  std::vector<std::string> f;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    auto bad = [&](const std::string& why) { return UsageError(path + ":" + std::to_string(n) + ": " + why); };
    if (!splitCsv(line, f)) throw bad("unterminated quote");
    if (col.empty()) {
      for (size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      jaxLayout = col.count("mpaths_per_s") && !col.count("mpath_s");
      const std::vector<std::string> need =
          jaxLayout ? std::vector<std::string>{"formulation", "pass", "paths", "markets", "mpaths_per_s"}
                    : std::vector<std::string>{"who", "formulation", "pass", "paths", "markets", "ladder_points", "mpath_s"};
      for (const std::string& c : need)
        if (!col.count(c))
          throw bad("header has no column '" + c + "' (expected experiments/drivers/peers.py's or jax_peers.py's CSV)");
      continue;
    }
    if (f.size() != col.size())
      throw bad("expected " + std::to_string(col.size()) + " fields as in the header, got " + std::to_string(f.size()));
    auto field = [&](const std::string& c) { return col.count(c) ? f[col.at(c)] : std::string(); };
    auto integer = [&](const std::string& c, long long lo) {
      const std::string s = field(c);
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0' || errno != 0 || v < lo) throw bad(c + ": expected an integer >= " + std::to_string(lo) + ", got '" + s + "'");
      return v;
    };
    PeerRow r;
    r.line = n;
    r.who = jaxLayout ? "jax" : field("who");
    r.formulation = field("formulation");
    r.pass = field("pass");
    if (r.pass != "price" && r.pass != "value+5greeks") throw bad("pass: expected price or value+5greeks, got '" + r.pass + "'");
    r.paths = static_cast<uint64_t>(integer("paths", 1));
    const int markets = static_cast<int>(integer("markets", 1));
    if (jaxLayout) {
      const bool ladder = r.formulation != "one";
      r.markets = r.formulation == "ladder" ? markets : 1;
      r.ladderPoints = ladder ? markets : 1;
    } else {
      r.markets = markets;
      r.ladderPoints = static_cast<int>(integer("ladder_points", 1));
      if (!field("steps").empty()) r.steps = static_cast<int>(integer("steps", 1));
    }
    auto positive = [&](const std::string& c) {
      const std::string s = field(c);
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0' || !std::isfinite(v) || v <= 0) throw bad(c + ": expected a positive number, got '" + s + "'");
      return v;
    };
    // Mpath/s from the time where the file has it: its mpath_s column is rounded to 0.01
    // (JAX on one CPU core: 0.06). Both scripts count markets x paths per timed call.
    r.mpathPerSecond = positive(jaxLayout ? "mpaths_per_s" : "mpath_s");
    if (jaxLayout && !field("median_s").empty())
      r.mpathPerSecond = double(markets) * double(r.paths) / positive("median_s") / 1e6;
    else if (!jaxLayout && !field("ms").empty())
      r.mpathPerSecond = double(r.ladderPoints) * double(r.paths) / positive("ms") / 1e3;
    rows.push_back(r);
  }
  if (col.empty()) throw UsageError(path + ": no header line (expected experiments/drivers/peers.py's or jax_peers.py's CSV)");
  return rows;
}

std::vector<const PeerRow*> matchingPeers(const std::vector<PeerRow>& peers, bool greeks, uint64_t paths,
                                          int points, int markets, int steps) {
  std::vector<const PeerRow*> out;
  for (const PeerRow& p : peers)
    if (p.who != "tapelab" && p.pass == (greeks ? "value+5greeks" : "price") && p.paths == paths &&
        p.ladderPoints == points && (p.markets > 1) == (markets > 1) && (p.steps < 0 || steps < 0 || p.steps == steps))
      out.push_back(&p);
  return out;
}

}  // namespace tapelab::cli
