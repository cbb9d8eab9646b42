#include "cli/cli.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "tape/products/products.h"
#include "tape/textformat.h"

namespace tapelab::cli {

Args::Args(std::string command, const std::vector<std::string>& argv, std::vector<Flag> flags)
    : command_(std::move(command)), flags_(std::move(flags)) {
  auto find = [&](const std::string& name) -> const Flag* {
    for (const Flag& f : flags_)
      if (f.name == name) return &f;
    return nullptr;
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      std::string name = a.substr(2), value;
      const auto eq = name.find('=');
      const bool inlineValue = eq != std::string::npos;
      if (inlineValue) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      const Flag* f = find(name);
      if (!f) throw UsageError("unknown flag --" + name + " for '" + command_ + "' (see tapelab " + command_ + " --help)");
      if (f->metavar.empty()) {
        if (inlineValue) throw UsageError("--" + name + " takes no value");
        value = "1";
      } else if (!inlineValue) {
        if (i + 1 >= argv.size()) throw UsageError("--" + name + " needs a value (" + f->metavar + ")");
        value = argv[++i];
      }
      auto& slot = values_[name];
      if (!slot.empty() && !f->repeatable) throw UsageError("--" + name + " given twice");
      slot.push_back(value);
      continue;
    }
    if (a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9'))
      throw UsageError("unknown flag " + a + " for '" + command_ + "' (see tapelab " + command_ + " --help)");
    positional_.push_back(a);
  }
}

bool Args::has(const std::string& flag) const { return values_.count(flag) > 0; }

std::optional<std::string> Args::get(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::all(const std::string& flag) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<std::string> Args::valueOrEnv(const std::string& flag) const {
  if (auto v = get(flag)) return v;
  for (const Flag& f : flags_)
    if (f.name == flag && !f.env.empty()) return knobValue(f.env);  // api/knobs.h: the one reader
  return std::nullopt;
}

namespace {
std::string flagLabel(const std::vector<Flag>& flags, const std::string& name, bool fromFlag) {
  if (fromFlag) return "--" + name;
  for (const Flag& f : flags)
    if (f.name == name && !f.env.empty()) return f.env;
  return "--" + name;
}
}  // namespace

uint64_t Args::getU64(const std::string& flag, uint64_t fallback) const {
  auto v = valueOrEnv(flag);
  if (!v) return fallback;
  uint64_t out = 0;
  // Accept 1e6-style counts too, when they are whole numbers.
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec == std::errc() && p == v->data() + v->size()) return out;
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v->c_str(), &end);
  if (!v->empty() && *end == '\0' && errno == 0 && d >= 0 && d < 1.8e19 && d == std::floor(d))
    return static_cast<uint64_t>(d);
  throw UsageError(flagLabel(flags_, flag, has(flag)) + ": expected a non-negative integer, got '" + *v + "'");
}

int Args::getInt(const std::string& flag, int fallback) const {
  auto v = valueOrEnv(flag);
  if (!v) return fallback;
  int out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size())
    throw UsageError(flagLabel(flags_, flag, has(flag)) + ": expected an integer, got '" + *v + "'");
  return out;
}

double Args::getDouble(const std::string& flag, double fallback) const {
  auto v = valueOrEnv(flag);
  if (!v) return fallback;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !std::isfinite(d))
    throw UsageError(flagLabel(flags_, flag, has(flag)) + ": expected a finite number, got '" + *v + "'");
  return d;
}

std::string Args::getString(const std::string& flag, const std::string& fallback) const {
  return valueOrEnv(flag).value_or(fallback);
}

std::string Args::usage(const std::string& synopsis, const std::string& description) const {
  std::string out = "usage: tapelab " + command_ + " " + synopsis + "\n\n" + description + "\n\nflags:\n";
  size_t width = 0;
  std::vector<std::string> left;
  for (const Flag& f : flags_) {
    left.push_back("--" + f.name + (f.metavar.empty() ? "" : " " + f.metavar));
    width = std::max(width, left.back().size());
  }
  for (size_t i = 0; i < flags_.size(); ++i) {
    out += "  " + left[i] + std::string(width - left[i].size() + 2, ' ') + flags_[i].help;
    if (!flags_[i].env.empty()) out += " [" + flags_[i].env + "]";
    out += "\n";
  }
  out += "  --help" + std::string(width > 6 ? width - 6 + 2 : 2, ' ') + "this text\n";
  return out;
}

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
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

std::vector<Flag> pricingFlags() {
  return {
      {"engine", "NAME", "engine to run on (tapelab engines lists them); default reference", "TAPELAB_ENGINE"},
      {"paths", "N", "Monte-Carlo paths (default 100000)", "TAPELAB_PATHS"},
      {"seed", "S", "64-bit seed (default 42)", "TAPELAB_SEED"},
      {"set", "NAME=VALUE", "override an input's value (repeatable)", "", true},
      {"ladder", "NAME=V1,V2,...", "price one market per value, several markets per dispatch", ""},
      {"markets", "M", "markets per dispatch for --ladder (1-8, default: all values, at most 8)", ""},
      {"checkpoint", "off|auto|SEGMENTS", "checkpoint segments; auto = on for tapes of >= --ckpt-nodes nodes (default auto)", "TAPELAB_CKPT"},
      {"ckpt-nodes", "N", "auto checkpointing threshold in nodes (default 768)", "TAPELAB_CKPT_NODES"},
      {"strategy", "NAME", "cut strategy (default window; uniform for scratch kernels; tapelab plan --help lists them)", "TAPELAB_STRATEGY"},
      {"plan", "FILE", "run the plan in FILE (tapelab plan --out) instead of --strategy/--checkpoint", "TAPELAB_PLAN"},
      {"budget", "B", "budget strategy: the most values live at once (peak_live)", "TAPELAB_BUDGET"},
      {"inner", "N", "two-level strategy: sub-segments per segment (default 4)", "TAPELAB_INNER"},
      {"seglen", "N", "segment length for uniform/scratch plans (default max(48, round(sqrt(n))))", "TAPELAB_SEGLEN"},
      {"kernel", "plain|register|scratch", "kernel kind (default: register when checkpointing, else plain)", "TAPELAB_KERNEL"},
      {"layout", "aos|soa", "scratch buffer layout (default soa)", "TAPELAB_SCRATCH_LAYOUT"},
      {"fp32", "", "single precision (default on GPU engines)", ""},
      {"fp64", "", "double precision (default on CPU engines)", ""},
      {"no-greeks", "", "value only: no reverse sweep", ""},
      {"dump", "DIR", "write generated kernel source to DIR", "TAPELAB_DUMP"},
      {"json", "", "print one JSON object (one per market with --ladder: an array)", ""},
  };
}

RunConfig runConfigFrom(const Args& a) {
  RunConfig c;
  try {
    c = RunConfig::fromEnvironment();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (auto v = a.get("engine")) c.engine = *v;
  try {
    if (auto v = a.get("checkpoint")) c.checkpoint = Checkpoint::parse(*v, "--checkpoint");
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (a.has("ckpt-nodes")) {
    c.ckptNodes = a.getInt("ckpt-nodes", 768);
    if (c.ckptNodes < 1) throw UsageError("--ckpt-nodes: expected a positive integer");
  }
  if (auto v = a.get("strategy")) c.strategy = *v;
  if (a.has("seglen")) {
    c.segLen = a.getInt("seglen", 0);
    if (c.segLen < 1) throw UsageError("--seglen: expected a positive integer");
  }
  try {
    if (auto v = a.get("kernel")) c.kernel = parseKernelKind(*v, "--kernel");
    if (auto v = a.get("layout")) c.layout = parseLayout(*v, "--layout");
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (a.has("fp32") && a.has("fp64")) throw UsageError("--fp32 and --fp64 exclude each other");
  if (a.has("fp32")) c.precision = Precision::F32;
  if (a.has("fp64")) c.precision = Precision::F64;
  if (a.has("no-greeks")) c.greeks = false;
  if (auto v = a.get("dump")) c.dumpDir = *v;
  if (auto v = a.get("plan")) c.planFile = *v;
  if (a.has("budget")) {
    c.budget = a.getInt("budget", 0);
    if (c.budget < 1) throw UsageError("--budget: expected a positive integer");
  }
  if (a.has("inner")) {
    c.innerSegments = a.getInt("inner", 0);
    if (c.innerSegments < 1) throw UsageError("--inner: expected a positive integer");
  }
  return c;
}

namespace {
std::pair<std::string, std::string> splitAssign(const std::string& s, const std::string& flag) {
  const auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError(flag + ": expected NAME=VALUE, got '" + s + "'");
  return {s.substr(0, eq), s.substr(eq + 1)};
}
double parseValue(const std::string& v, const std::string& flag) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(d)) throw UsageError(flag + ": '" + v + "' is not a finite number");
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

std::vector<double> inputsFrom(const Args& a, const Tape& t) {
  std::vector<double> in = t.inputDefaults;
  for (const std::string& s : a.all("set")) {
    auto [name, value] = splitAssign(s, "--set");
    in[inputOf(t, name, "--set")] = parseValue(value, "--set " + name);
  }
  return in;
}

std::vector<std::vector<double>> ladderFrom(const Args& a, const Tape& t, const std::vector<double>& base,
                                            std::string* ladderInput) {
  std::vector<std::vector<double>> sets;
  auto v = a.get("ladder");
  if (!v) return sets;
  auto [name, list] = splitAssign(*v, "--ladder");
  const int k = inputOf(t, name, "--ladder");
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

Tape tapeFrom(const Args& a, bool allowFile, const std::string& defaultProduct) {
  const auto& pos = a.positional();
  if (pos.size() > 1) throw UsageError("expected at most one tape file, got " + std::to_string(pos.size()) + " arguments");
  if (!pos.empty()) {
    if (!allowFile) throw UsageError("unexpected argument '" + pos[0] + "'");
    if (a.has("product")) throw UsageError("give a tape file or --product, not both");
    Tape t = readTapeFile(pos[0]);  // TapeParseError: FILE:LINE: reason
    const std::string problem = validate(t);
    if (!problem.empty()) throw UsageError(pos[0] + ": " + problem);
    return t;
  }
  const std::string product = a.getString("product", defaultProduct);
  if (product.empty()) throw UsageError(allowFile ? "give a tape file or --product NAME" : "--product is required");
  const int steps = a.getInt("steps", 252);
  const int assets = a.getInt("assets", 5);
  if (steps < 1 || steps > 1000000) throw UsageError("--steps: expected 1..1000000, got " + std::to_string(steps));
  if (assets < 1 || assets > 1000) throw UsageError("--assets: expected 1..1000, got " + std::to_string(assets));
  if (a.has("assets") && product != "basket") throw UsageError("--assets applies to --product basket only");
  try {
    return products::byName(product, steps, assets);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--product: ") + e.what());
  }
}

std::string resultJson(const Result& r, size_t market, const KernelStats* stats) {
  const MarketResult& m = r.run.markets.at(market);
  Json g, ge, inputs;
  for (size_t i = 0; i < r.inputNames.size(); ++i) {
    g.number(r.inputNames[i], m.greeks.at(i));
    ge.number(r.inputNames[i], m.greeksStderr.at(i));
  }
  Json j;
  j.str("engine", r.engine)
      .str("kernel", r.kernel.kind == KernelKind::Plain ? "plain" : "checkpointed")
      .str("kernel_kind", toString(r.kernel.kind))
      .integer("segments", r.kernel.plan.segments())
      .str("strategy", r.kernel.plan.strategy)
      .str("precision", toString(r.kernel.precision))
      .integer("paths", static_cast<int64_t>(r.run.paths))
      .field("seed", std::to_string(r.run.seed))
      .number("seconds", r.run.seconds)
      .number("paths_per_second", r.pathsPerSecond())
      .number("value", m.value)
      .number("stderr", m.valueStderr);
  if (r.kernel.kind == KernelKind::Scratch) j.str("layout", toString(r.kernel.layout));
  if (r.kernel.greeks) {
    j.field("greeks", g.done()).field("greeks_stderr", ge.done());
  } else {
    j.field("greeks", "{}").field("greeks_stderr", "{}");
  }
  if (stats) {
    Json s;
    s.integer("registers", stats->registers)
        .integer("spill_bytes", stats->spillBytes)
        .number("compile_seconds", stats->compileSeconds)
        .boolean("cache_hit", stats->cacheHit);
    if (!stats->notes.empty()) s.str("notes", stats->notes);
    j.field("kernel_stats", s.done());
  }
  return j.done();
}

}  // namespace tapelab::cli
