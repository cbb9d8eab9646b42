#include "cli/cli.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "api/ranks.h"
#include "tape/products/products.h"
#include "tape/textformat.h"

namespace tapelab::cli {

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string rounded(double estimate, double stderror) {
  if (!std::isfinite(estimate)) return num(estimate);
  if (!(std::isfinite(stderror) && stderror > 0)) return sig3(estimate) + " (exact)";
  // Decimal places that keep two significant digits of the error (0 when the error is 10 or more).
  const int decimals = std::max(0, 1 - static_cast<int>(std::floor(std::log10(stderror))));
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.*f +- %.*f", decimals, estimate, decimals, stderror);
  return buf;
}

std::string sig3(double v) {
  if (!std::isfinite(v)) return num(v);
  if (v == 0) return "0";
  char buf[64];
  const int e = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (e >= 3) {
    const double r = std::round(v / std::pow(10.0, e - 2)) * std::pow(10.0, e - 2);
    std::snprintf(buf, sizeof buf, "%.0f", r);
    std::string digits = buf, out;  // thousands separated: 12,300
    const size_t start = digits[0] == '-' ? 1 : 0;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > start && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return out;
  }
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, 2 - e), v);
  return buf;
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 32) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string jsonArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]";
}

Json& Json::field(const std::string& key, const std::string& raw) {
  body_ += (body_.empty() ? "" : ",") + jsonString(key) + ":" + raw;
  return *this;
}
Json& Json::str(const std::string& key, const std::string& value) { return field(key, jsonString(value)); }
Json& Json::number(const std::string& key, double value) {
  // JSON has no NaN/Inf: those are written as strings.
  return field(key, std::isfinite(value) ? num(value) : jsonString(num(value)));
}
Json& Json::integer(const std::string& key, int64_t value) { return field(key, std::to_string(value)); }
Json& Json::boolean(const std::string& key, bool value) { return field(key, value ? "true" : "false"); }

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  auto numeric = [](const std::string& s) {
    return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+') &&
           s.find_first_not_of("0123456789+-.eEx%") == std::string::npos;
  };
  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (size_t c = 0; c < w.size(); ++c) {
      const std::string cell = c < r.size() ? r[c] : "";
      const std::string pad(w[c] - cell.size(), ' ');
      out += (c ? "  " : "") + (numeric(cell) ? pad + cell : cell + pad);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  std::string rule;
  for (size_t c = 0; c < w.size(); ++c) rule += (c ? "  " : "") + std::string(w[c], '-');
  out += rule + "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

namespace {
std::pair<std::string, std::string> splitAssign(const std::string& s, const std::string& flag) {
  const auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError(flag + ": expected NAME=VALUE, got '" + s + "'");
  return {s.substr(0, eq), s.substr(eq + 1)};
}
double parseValue(const std::string& v, const std::string& flag) {
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(d)) throw UsageError(flag + ": '" + v + "' is not a finite number");
  if (d == 0 && errno == ERANGE) throw UsageError(flag + ": '" + v + "' underflows to zero");  // as the tape reader
  return d;
}
int inputOf(const Tape& t, const std::string& name, const std::string& flag) {
  const int k = t.inputIndex(name);
  if (k < 0) {
    std::string known;
    for (const auto& n : t.inputNames) known += (known.empty() ? "" : ", ") + n;
    throw UsageError(flag + ": the tape has no input '" + name + "' (inputs: " + known + ")");
  }
  return k;
}
}  // namespace

void addSetFlag(Flags& f) { f.repeatable("set", "NAME=VALUE", "override an input's value"); }

std::vector<double> inputsFrom(const Flags& f, const Tape& t) {
  std::vector<double> in = t.inputDefaults;
  std::vector<bool> set(in.size(), false);
  for (const std::string& s : f.all("set")) {
    auto [name, value] = splitAssign(s, "--set");
    const int k = inputOf(t, name, "--set");
    if (set[static_cast<size_t>(k)]) throw UsageError("--set: input '" + name + "' given twice (one --set per input)");
    set[static_cast<size_t>(k)] = true;
    in[static_cast<size_t>(k)] = parseValue(value, "--set " + name);
  }
  return in;
}

std::vector<std::vector<double>> ladderFrom(const Flags& f, const Tape& t, const std::vector<double>& base,
                                            std::string* ladderInput) {
  std::vector<std::vector<double>> sets;
  auto v = f.text("ladder");
  if (!v) return sets;
  auto [name, list] = splitAssign(*v, "--ladder");
  const int k = inputOf(t, name, "--ladder");
  for (const std::string& s : f.all("set"))
    if (s.substr(0, s.find('=')) == name)
      throw UsageError("--ladder " + name + ": --set also sets '" + name + "'; give the input one or the other");
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    std::vector<double> s = base;
    s[k] = parseValue(item, "--ladder " + name);
    sets.push_back(s);
  }
  if (sets.empty()) throw UsageError("--ladder: no values");
  if (ladderInput) *ladderInput = name;
  return sets;
}

void addTapeFlags(Flags& f, TapeSource source, const std::string& defaultProduct) {
  if (source != TapeSource::Product)
    f.positional("file", "FILE.tape", "a tape in the .tape text format" +
                                          std::string(source == TapeSource::File ? "" : " (instead of --product)"));
  if (source == TapeSource::File) return;
  std::string names;
  for (const products::ProductInfo& p : products::catalog()) names += (names.empty() ? "" : ", ") + p.name;
  CLI::Option* product = f.value("product", "NAME", names, defaultProduct);
  if (source == TapeSource::Product) product->required();
  f.value("steps", "N", "time steps (default: the product's)");
  f.value("assets", "M", "assets (basket: 5, worstof: 20, hestonbasket: 5)");
  f.repeatable("param", "NAME=VALUE", "a product's structural parameter (tapelab tape --product NAME --summary lists them)");
  f.knob("max-nodes", "N", std::to_string(RunConfig{}.maxNodes));
}

namespace {
// The structural parameters the flags give a built-in product (--steps, --assets, --param), each once.
products::ProductParams productParamsFrom(const Flags& f, const std::string& product) {
  products::ProductParams params;
  if (f.given("steps")) {
    const int steps = f.integer("steps");
    if (steps < 1 || steps > 1000000) throw UsageError("--steps: expected 1..1000000, got " + std::to_string(steps));
    params["steps"] = steps;
  }
  if (f.given("assets")) {
    const int assets = f.integer("assets");
    if (assets < 1 || assets > 1000) throw UsageError("--assets: expected 1..1000, got " + std::to_string(assets));
    if (product != "basket" && product != "worstof" && product != "hestonbasket")
      throw UsageError("--assets applies to --product basket, worstof or hestonbasket only");
    params["assets"] = assets;
  }
  if (f.registered("param"))
    for (const std::string& s : f.all("param")) {
      auto [name, value] = splitAssign(s, "--param");
      if (params.count(name))
        throw UsageError("--param " + name + ": given twice (or with --" + name + "); give each parameter once");
      params[name] = parseValue(value, "--param " + name);
    }
  return params;
}
}  // namespace

Tape tapeFrom(const Flags& f) {
  if (auto file = f.text("file")) {
    if (f.given("product")) throw UsageError("give a tape file or --product, not both");
    Tape t = readTapeFile(*file);  // TapeParseError: FILE:LINE: reason
    const std::string problem = validate(t);
    if (!problem.empty()) throw UsageError(*file + ": " + problem);
    return t;
  }
  const auto product = f.textOrDefault("product");
  if (!product) throw UsageError(f.registered("product") ? "give a tape file or --product NAME" : "give a tape file (FILE.tape)");
  const products::ProductParams params = productParamsFrom(f, *product);
  const double maxNodes = static_cast<double>(maxNodesFrom(f));
  try {
    return products::byName(*product, params, maxNodes);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--product: ") + e.what());
  }
}

int productSteps(const Flags& f) {
  if (f.text("file")) return -1;
  const auto product = f.textOrDefault("product");
  if (!product) return -1;
  const products::ProductParams params = productParamsFrom(f, *product);
  if (auto given = params.find("steps"); given != params.end()) return static_cast<int>(given->second);
  for (const products::ProductInfo& p : products::catalog())
    if (p.name == *product)
      for (const products::ProductParam& q : p.params)
        if (q.name == "steps") return static_cast<int>(q.defaultValue);
  return -1;  // a product whose structure has no steps (lmm: its forwards)
}

void warnUnusedConfig(const RunConfig& config, const KernelStats& stats) {
  for (const std::string& u : stats.configUnused)
    for (const std::string& name : config.userConfig.fields)
      if (u.rfind(name + "=", 0) == 0) std::fprintf(stderr, "tapelab: %s: %s\n", config.userConfig.what.c_str(), u.c_str());
}

bool warnNonFinite(const Result& r) {
  const std::string bad = nonFiniteEstimates(r.run, r.kernel, r.inputNames);
  if (bad.empty()) return false;
  std::fprintf(stderr, "tapelab: warning: not finite: %s (a path's value, or a sum over paths, overflowed or is "
               "undefined; printed as nan)\n", bad.c_str());
  return true;
}

std::string resultJson(const Result& r, size_t market, const KernelStats* stats) {
  const MarketResult& m = r.run.markets.at(market);
  Json g, ge, inputs;
  const bool tangent = r.kernel.kind == KernelKind::Tangent;
  auto computed = [&](size_t i) {  // a tangent kernel's --wrt leaves the other inputs out
    return !tangent || r.kernel.wrt.empty() ||
           std::find(r.kernel.wrt.begin(), r.kernel.wrt.end(), static_cast<int>(i)) != r.kernel.wrt.end();
  };
  for (size_t i = 0; i < r.inputNames.size(); ++i) {
    if (!computed(i)) continue;
    g.number(r.inputNames[i], m.greeks.at(i));
    ge.number(r.inputNames[i], m.greeksStderr.at(i));
  }
  Json j;
  j.str("engine", r.engine)
      .str("kernel", r.kernel.kind == KernelKind::Plain ? "plain" : tangent ? "tangent" : "checkpointed")
      .str("kernel_kind", toString(r.kernel.kind))
      .integer("segments", r.kernel.plan.segments())
      .str("strategy", tangent ? "none (tangent: no reverse sweep, no plan)" : r.kernel.plan.strategy)
      .str("precision", toString(r.kernel.precision))
      .str("config", configText(r.kernel.config, r.engine))
      .str("math", toString(r.kernel.config.math))
      .str("tuned", r.tuned)
      .str("kernel_choice", r.kindWhy.empty() ? (r.tuned.empty() ? "named" : "tuned") : r.kindWhy)
      .str("provenance", r.provenance.text())
      .field("not_used", [&] {
        std::vector<std::string> items;
        for (const std::string& n : r.notUsed) items.push_back(jsonString(n));
        return jsonArray(items);
      }())
      .integer("paths", static_cast<int64_t>(r.run.paths))
      .field("seed", std::to_string(r.run.seed))
      .number("seconds", r.run.seconds)
      .number("paths_per_second", r.pathsPerSecond())
      .number("value", m.value)
      .number("stderr", m.valueStderr);
  if (r.kernel.kind == KernelKind::Scratch) j.str("layout", toString(r.kernel.config.layout));
  {  // the estimates that are not finite (warnNonFinite), only when there are some
    RunResult one;
    one.markets.push_back(m);
    const std::string bad = nonFiniteEstimates(one, r.kernel, r.inputNames);
    if (!bad.empty()) {
      std::vector<std::string> items;
      for (size_t at = 0; at <= bad.size();) {
        const size_t comma = std::min(bad.find(", ", at), bad.size());
        items.push_back(jsonString(bad.substr(at, comma - at)));
        at = comma + 2;
      }
      j.field("non_finite", jsonArray(items));
    }
  }
  if (r.kernel.greeks) {
    j.field("greeks", g.done()).field("greeks_stderr", ge.done());
  } else {
    j.field("greeks", "{}").field("greeks_stderr", "{}");
  }
  if (stats) {
    Json s;
    s.integer("registers", stats->registers)
        .integer("spill_bytes", stats->spillBytes)
        .integer("scratch_bytes_per_path", stats->scratchBytesPerPath)
        .integer("source_bytes", stats->sourceBytes)
        .number("compile_seconds", stats->compileSeconds)
        .boolean("cache_hit", stats->cacheHit);
    if (!stats->notes.empty()) s.str("notes", stats->notes);
    j.field("kernel_stats", s.done());
    std::vector<std::string> unused;
    for (const std::string& u : stats->configUnused) unused.push_back(jsonString(u));
    j.field("config_unused", jsonArray(unused));
  }
  // Where a GPU run's time went (engine.h DispatchTiming): times, after the numbers and kernel_stats,
  // as the ranks' below (tests compare the JSON up to kernel_stats).
  if (!r.run.dispatches.empty()) {
    std::vector<std::string> ds;
    for (const DispatchTiming& d : r.run.dispatches) {
      Json x;
      x.integer("groups", d.groups).number("ready_seconds", d.readySeconds).number("sum_seconds", d.sumSeconds);
      if (d.kernelSeconds >= 0) x.number("kernel_seconds", d.kernelSeconds);
      if (d.gapSeconds >= 0) x.number("gap_seconds", d.gapSeconds);
      ds.push_back(x.done());
    }
    j.number("setup_seconds", r.run.setupSeconds).field("dispatches", jsonArray(ds));
  }
  if (ranks::size() > 1) {  // where a split run's time went (api/ranks.h); the last run's
    const ranks::RunTiming& t = ranks::lastRunTiming();
    std::vector<std::string> chunks, blocks, busy, idle, end;
    for (const ranks::RankTiming& r : t.ranks) {
      chunks.push_back(std::to_string(r.chunks));
      blocks.push_back(std::to_string(r.blocks));
      busy.push_back(num(r.busySeconds));
      idle.push_back(num(r.idleSeconds));
      end.push_back(num(r.endSeconds));
    }
    Json s;
    s.integer("count", ranks::size())
        .integer("blocks", static_cast<int64_t>(t.blocks))
        .integer("chunks", static_cast<int64_t>(t.chunks))
        .field("rank_chunks", jsonArray(chunks))
        .field("rank_blocks", jsonArray(blocks))
        .field("run_seconds", jsonArray(busy))
        .field("idle_seconds", jsonArray(idle))
        .field("end_seconds", jsonArray(end))
        .number("wait_seconds", t.waitSeconds)
        .number("reduce_seconds", t.reduceSeconds)
        .number("tail_reduce_seconds", t.tailReduceSeconds)
        .number("tail_seconds", t.tailSeconds);
    j.field("ranks", s.done());
  }
  return j.done();
}

}  // namespace tapelab::cli
