#include "cli/options.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "api/ranks.h"
#include "engine/compile_watch.h"
#include "engine/engine.h"
#include "tape/textformat.h"
#include "util/text.h"

namespace tapelab::cli {

// ------------------------------------------------------------ registration

CLI::Option* Flags::add(const std::string& name, CLI::Option* option) {
  options_[name] = option;
  return option;
}

CLI::Option* Flags::value(const std::string& name, const std::string& metavar, const std::string& help,
                          const std::string& defaultText) {
  return add(name, app_->add_option("--" + name)->description(help)->type_name(metavar)->default_str(defaultText));
}

CLI::Option* Flags::knob(const std::string& name, const std::string& metavar, const std::string& defaultText,
                         const std::string& note) {
  for (const Knob& k : knobTable()) {
    if ("--" + name != k.flag) continue;
    const std::string help = note.empty() ? k.meaning : std::string(k.meaning) + "; " + note;
    return value(name, metavar, help, defaultText)->envname(k.variable);
  }
  throw std::logic_error("--" + name + " is not a flag of api/knobs.cpp's table");
}

CLI::Option* Flags::repeatable(const std::string& name, const std::string& metavar, const std::string& help) {
  return add(name, app_->add_option("--" + name)->description(help)->type_name(metavar)->multi_option_policy(
                       CLI::MultiOptionPolicy::TakeAll));
}

CLI::Option* Flags::flag(const std::string& name, const std::string& help) {
  // --json=1 is a mistake, not a way to say yes.
  return add(name, app_->add_flag("--" + name)->description(help)->disable_flag_override());
}

CLI::Option* Flags::positional(const std::string& name, const std::string& metavar, const std::string& help,
                               bool many) {
  CLI::Option* o = app_->add_option(name)->description(help)->type_name(metavar);
  if (many) o->expected(0, CLI::detail::expected_max_vector_size)->allow_extra_args()->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return add(name, o);
}

// ------------------------------------------------------------ reading

const CLI::Option* Flags::find(const std::string& name) const {
  auto it = options_.find(name);
  return it == options_.end() ? nullptr : it->second;
}

CLI::Option* Flags::option(const std::string& name) const {
  auto it = options_.find(name);
  if (it == options_.end()) throw std::logic_error("--" + name + " is not registered");
  return it->second;
}

bool Flags::onCommandLine(const std::string& name) const {
  const CLI::Option* o = find(name);
  const auto& order = app_->parse_order();  // the command line's options; a variable's value is not in it
  return o && std::find(order.begin(), order.end(), o) != order.end();
}

bool Flags::given(const std::string& name) const {
  const CLI::Option* o = find(name);
  return o && o->count() > 0;
}

std::optional<std::string> Flags::text(const std::string& name) const {
  const CLI::Option* o = find(name);
  if (!o || o->results().empty()) return std::nullopt;
  return o->results().back();
}

std::optional<std::string> Flags::textOrDefault(const std::string& name) const {
  if (auto t = text(name)) return t;
  const CLI::Option* o = find(name);
  if (!o || o->get_default_str().empty()) return std::nullopt;
  return o->get_default_str();
}

std::vector<std::string> Flags::all(const std::string& name) const {
  const CLI::Option* o = find(name);
  return o ? o->results() : std::vector<std::string>{};
}

std::string Flags::label(const std::string& name) const {
  const CLI::Option* o = find(name);
  if (o && !onCommandLine(name) && given(name) && !o->get_envname().empty()) return o->get_envname();
  return "--" + name;
}

std::string Flags::need(const std::string& name) const {
  if (auto t = textOrDefault(name)) return *t;
  throw std::logic_error("--" + name + " has no value and no default");
}

uint64_t Flags::count(const std::string& name) const {
  const std::string v = need(name);
  uint64_t out = 0;
  const bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');  // a seed as Python takes it too
  auto [p, ec] = std::from_chars(v.data() + (hex ? 2 : 0), v.data() + v.size(), out, hex ? 16 : 10);
  if (ec == std::errc() && p == v.data() + v.size()) return out;
  // 1e6-style counts too, when they are whole numbers (docs/cli.md's grammar: no sign, no spaces).
  double d = -1;
  auto [q, dec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc::result_out_of_range && !v.empty() && v[0] != '-' && dec == std::errc() &&
      q == v.data() + v.size() && d >= 0 && d < 1.8e19 && d == std::floor(d))
    return static_cast<uint64_t>(d);
  throw UsageError(label(name) + ": expected a non-negative integer, got '" + v + "'");
}

uint64_t Flags::paths(const std::string& name) const {
  try {
    return parsePathCount(need(name), label(name));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

int Flags::integer(const std::string& name) const {
  const std::string v = need(name);
  int out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size())
    throw UsageError(label(name) + ": expected an integer, got '" + v + "'");
  return out;
}

int Flags::integerIn(const std::string& name, int lo, int hi) const {
  const std::string v = need(name);
  int out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size() || out < lo || out > hi)
    throw UsageError(label(name) + ": expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                     ", got '" + v + "'");
  return out;
}

int Flags::positive(const std::string& name) const {
  try {
    return parsePositiveInt(need(name), label(name));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// ------------------------------------------------------------ RunConfig

void addRunConfigFlags(Flags& f, const std::vector<std::string>& skip) {
  const RunConfig defaults;
  auto wanted = [&](const char* name) { return std::find(skip.begin(), skip.end(), name) == skip.end(); };
  if (wanted("checkpoint"))
    f.knob("checkpoint", "off|auto|SEGMENTS", defaults.checkpoint.text(),
           "auto: " + std::to_string(defaults.segments) +
               " segments on tapes of at least --ckpt-nodes nodes (cpu-jit: off, its plain kernel is faster); a GPU "
               "register kernel that rolls its segments at one market: about 64 nodes a segment, up to 256");
  // ^ the engines named off are those whose caps say so (EngineCaps::autoCheckpoint): scripts/check-help.py
  //   (CTest docs_help) checks the list against `tapelab engines --json`.
  if (wanted("ckpt-nodes")) f.knob("ckpt-nodes", "N", std::to_string(defaults.ckptNodes));
  if (wanted("strategy")) f.knob("strategy", "NAME", "", "default window, uniform for scratch kernels");
  if (wanted("plan"))
    f.knob("plan", "FILE", "", wanted("strategy") && wanted("checkpoint") ? "replaces --strategy and --checkpoint" : "");
  if (wanted("budget")) f.knob("budget", "B", "", "default for register kernels: min(212, 400/markets), from the sm_90 calibration (runs); else window's peak_live at that segment count");
  if (wanted("inner")) f.knob("inner", "N");
  if (wanted("strategy-cmd")) f.knob("strategy-cmd", "COMMAND", "");
  if (wanted("solve-seconds")) f.knob("solve-seconds", "S", "60");
  if (wanted("solve-clock")) f.knob("solve-clock", "wall|cpu", "wall");
  if (wanted("seglen")) f.knob("seglen", "N", "", "default max(48, round(sqrt(nodes)))");
  if (wanted("kernel"))
    f.knob("kernel", "auto|plain|register|scratch|tangent", "auto",
           "auto: with no --checkpoint, --strategy or --plan, the tangent kernel or the checkpointed adjoint (register "
           "when checkpointing, else plain), whichever planner/kind_model.h predicts faster, said in the result; "
           "tangent carries d/d inputs forward, no plan");
  if (wanted("wrt"))
    f.knob("wrt", "NAME,...", "", wanted("kernel") ? "with --kernel tangent; Greeks of other inputs are not computed"
                                                   : "the tangent rows' inputs; Greeks of other inputs are not computed");
  if (wanted("fp32")) f.flag("fp32", "single precision (default on GPU engines)");
  if (wanted("fp64")) {
    CLI::Option* fp64 = f.flag("fp64", "double precision (default on CPU engines)");
    if (f.registered("fp32")) fp64->excludes(f.option("fp32"));
  }
  if (wanted("no-greeks")) f.flag("no-greeks", "value only: no reverse sweep");
  if (wanted("dump")) f.knob("dump", "DIR");
  if (wanted("config")) f.knob("config", "NAME=VALUE,...", "", "the engine's defaults otherwise");
  if (wanted("compile-timeout")) f.knob("compile-timeout", "SECONDS", "900");
  if (wanted("untuned"))
    f.flag("untuned", "the engine's defaults even where the tuning cache holds a winner for this job (tapelab tune)");
}

RunConfig runConfigFrom(const Flags& f) {
  try {
    RunConfig c = RunConfig::fromEnvironmentWithoutRunKnobs();
    for (const Knob& k : knobTable()) {  // every knob with a flag (a Run knob, or an engine's: --compile-timeout)
      if (!k.apply || !*k.flag) continue;
      const std::string name = std::string(k.flag).substr(2);
      if (auto v = f.textOrDefault(name)) k.apply(c, *v, f.label(name).c_str());
    }
    if (f.given("fp32")) c.precision = Precision::F32;
    if (f.given("fp64")) c.precision = Precision::F64;
    if (f.given("no-greeks")) c.greeks = false;
    if (f.registered("untuned") && f.given("untuned")) c.useTuned = false;
    preferFlagsOverVariables(c, [&](const char* variable) {  // a plan given one way, its makers the other
      for (const Knob& k : knobTable())
        if (std::string(k.variable) == variable && *k.flag) return f.onCommandLine(std::string(k.flag).substr(2));
      return false;
    });
    return c;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

uint64_t maxNodesFrom(const Flags& f) {
  try {
    RunConfig c;
    for (const Knob& k : knobTable()) {
      if (std::string(k.variable) != "TAPELAB_MAX_NODES") continue;
      if (f.registered("max-nodes")) {
        if (auto v = f.text("max-nodes")) k.apply(c, *v, f.label("max-nodes").c_str());
      } else if (auto v = knobValue(k.variable)) {
        k.apply(c, *v, k.variable);
      }
    }
    return c.maxNodes;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// ------------------------------------------------------------ help

namespace {

std::string commandPath(const CLI::App* app) {
  std::string path = app->get_name();
  for (const CLI::App* p = app->get_parent(); p; p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}

std::vector<const CLI::App*> visibleCommands(const CLI::App* app) {
  return app->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
}

std::string optionLeft(const CLI::Option* o) {
  if (o->get_positional()) return o->get_type_name();
  std::string names;
  for (const auto& s : o->get_snames()) names += (names.empty() ? "-" : ", -") + s;
  for (const auto& l : o->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  return o->get_expected_max() == 0 ? names : names + " " + o->get_type_name();
}

std::string optionRight(const CLI::Option* o) {
  std::string out = o->get_description();
  if (!o->get_default_str().empty()) out += " (default " + o->get_default_str() + ")";
  if (o->get_required()) out += " (required)";
  for (const CLI::Option* other : o->get_excludes()) out += " (not with " + optionLeft(other) + ")";
  if (o->nonpositional() && o->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll) out += " (repeatable)";
  if (!o->get_envname().empty()) out += " [" + o->get_envname() + "]";
  return out;
}

std::string aligned(const std::vector<std::pair<std::string, std::string>>& rows) {
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.first.size());
  std::string out;
  for (const auto& [left, right] : rows) out += "  " + left + std::string(width - left.size() + 2, ' ') + right + "\n";
  return out;
}

class HelpFormatter : public CLI::FormatterBase {
 public:
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    const auto commands = visibleCommands(app);
    std::vector<std::pair<std::string, std::string>> positionals, flags;
    std::string usage = "usage: " + commandPath(app) + (commands.empty() ? "" : " <command>");
    for (const CLI::Option* o : app->get_options()) {
      (o->get_positional() ? positionals : flags).push_back({optionLeft(o), optionRight(o)});
      if (o->get_positional()) usage += " " + o->get_type_name();
      else if (o->get_required()) usage += " " + optionLeft(o);
    }
    usage += " [flags]";
    std::string out = usage + "\n";
    if (!app->get_description().empty()) out += "\n" + app->get_description() + "\n";
    if (!commands.empty()) {
      std::vector<std::pair<std::string, std::string>> rows;
      for (const CLI::App* c : commands) rows.push_back({c->get_name(), c->get_description()});
      out += "\ncommands:\n" + aligned(rows);
    }
    if (!positionals.empty()) out += "\narguments:\n" + aligned(positionals);
    out += "\nflags:\n" + aligned(flags);
    if (!app->get_footer().empty()) out += "\n" + app->get_footer() + "\n";
    return out;
  }
};

// The command the line asked for: the deepest subcommand parsed.
const CLI::App* selected(const CLI::App& app) {
  const CLI::App* a = &app;
  while (!a->get_subcommands().empty()) a = a->get_subcommands().front();
  return a;
}

std::string seeHelp(const CLI::App* app) { return " (see " + commandPath(app) + " --help)"; }

// CLI11's parse errors as tapelab words: the flag or argument, and the command.
std::string parseErrorLine(const CLI::ParseError& e, const CLI::App& top) {
  const CLI::App* app = selected(top);
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    for (const CLI::App* a = app; a; a = a->get_parent()) {
      const std::vector<std::string> left = a->remaining();
      if (left.empty()) continue;
      const std::string& arg = left.front();
      const std::string where = a->get_parent() ? " for '" + a->get_name() + "'" : "";
      if (arg.size() > 1 && arg[0] == '-') {
        const std::string flag = arg.substr(0, arg.find('='));
        const std::string value = flag != arg ? arg.substr(flag.size() + 1) : left.size() > 1 ? left[1] : "";
        if (const auto retired = retiredFlag(flag, value)) return *retired;  // --layout: a field of --config now
        return "unknown flag " + flag + where + seeHelp(a);
      }
      if (!visibleCommands(a).empty()) {
        std::string list;
        for (const CLI::App* c : visibleCommands(a)) list += (list.empty() ? "" : ", ") + c->get_name();
        return "unknown command '" + arg + "' (commands: " + list + ")";
      }
      return "unexpected argument '" + arg + "'" + where + seeHelp(a);
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    // "--paths: 1 required N missing", "--paths: At Most 1 ...", "json was given a disallowed flag override"
    const std::string what = e.what();
    std::string name = what.substr(0, what.find_first_of(": "));
    if (name.rfind("-", 0) != 0) name = "--" + name;
    if (const CLI::Option* o = app->get_option_no_throw(name)) {
      if (o->get_expected_max() == 0) return name + " takes no value";
      if (what.find(" missing") != std::string::npos) return name + " needs a value (" + o->get_type_name() + ")";
      return name + " given twice";
    }
  }
  return e.what();  // "--product is required", "--fp64 excludes --fp32"
}

// After a device missed TAPELAB_DEVICE_TIMEOUT (a failed run, or a failed row of compare) its work
// may never finish, and a driver's exit handlers (its queue threads joined, its context torn down)
// could wait for it: the process leaves without them (and, under mpirun, without MPI_Finalize:
// the other ranks have agreed on the exit code already).
void leaveAfterDeviceTimeout(int code) {
  if (!deviceTimedOutInProcess() && !compileAbandonedInProcess()) return;
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace

void useTapelabHelp(CLI::App& app) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_help_flag("-h,--help", "this text");
}

std::string helpText(const CLI::App& app) { return app.get_formatter()->make_help(&app, "", CLI::AppFormatMode::Normal); }

int runCommandLine(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body) {
  const std::string program = app.get_name();
  // Under mpirun (api/ranks.h) every rank runs the command; rank 0 alone prints.
  ranks::start();
  if (ranks::rank() != 0 && !std::freopen("/dev/null", "w", stdout)) return kExitFailure;
  const bool printer = ranks::rank() == 0;
  // `--flag=` is `--flag ''` (CLI11 would take the next argument as the value): one grammar for both.
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {  // CLI11 takes them in reverse
    const std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && a.size() > 3 && a.find('=') == a.size() - 1) {
      args.push_back("");
      args.push_back(a.substr(0, a.size() - 1));
    } else {
      args.push_back(a);
    }
  }
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    std::fputs(helpText(*selected(app)).c_str(), stdout);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    std::printf("%s\n", e.what());
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (printer) std::fprintf(stderr, "%s: %s\n", program.c_str(), escapeControls(parseErrorLine(e, app)).c_str());
    return kExitInvalid;
  }
  // A misspelt TAPELAB_* variable is said, never silently a default (api/knobs.h unknownVariables).
  if (printer)
    for (const std::string& w : unknownVariables())
      std::fprintf(stderr, "%s: warning: %s\n", program.c_str(), escapeControls(w).c_str());
  std::string message;
  int code = kExitOk;
  try {
    code = body();
    // A rank that failed after the run's last agreement stops the others here, not in a hang.
    if (ranks::size() > 1) ranks::agree();
    leaveAfterDeviceTimeout(code);
    return code;
  } catch (const std::exception& e) {  // UsageError, PlanFileError, TapeParseError, EngineUnavailable, ...
    message = e.what();
    code = ranks::exitCodeOf(e);
    // The readers and the engines name what they allocate; anything else says which command ran out.
    if (dynamic_cast<const std::bad_alloc*>(&e))
      message = "out of memory in '" + commandPath(selected(app)) + "' (" + message + ")";
    if (ranks::size() > 1 && !dynamic_cast<const ranks::RankFailure*>(&e)) {
      try {
        ranks::agree(code, message);  // the others are at their next agreement: they stop with this
      } catch (const ranks::RankFailure& f) {
        message = f.what();
        code = f.exitCode;
      }
    }
  }
  // One line whatever the message echoes (a flag's value, a file's bytes): control characters written out.
  if (printer) std::fprintf(stderr, "%s: %s\n", program.c_str(), escapeControls(message).c_str());
  leaveAfterDeviceTimeout(code);
  return code;
}

}  // namespace tapelab::cli
