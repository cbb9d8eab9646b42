// Command lines through CLI11, shared by the tapelab command and the experiment
// drivers. Flags are registered on a CLI::App; a flag that api/knobs.cpp's table
// lists is bound to its TAPELAB_* variable (CLI11's envname) and takes its help
// from the table. After the parse a value is the flag's text, else the
// variable's, else the registered default: flag beats variable beats default.
// Values are parsed with api/knobs.h's parsers, so a bad one is one UsageError
// naming the flag, or the variable when the text came from it.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/knobs.h"

namespace tapelab::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // a run failed (driver error, ...)
inline constexpr int kExitInvalid = 2;      // invalid input: tape, flag, value
inline constexpr int kExitUnavailable = 3;  // engine not available here

// Invalid flag or value: printed as "<program>: <what>", exit 2.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The flags of one CLI::App (a tapelab subcommand or a driver), by long name without dashes.
class Flags {
 public:
  explicit Flags(CLI::App& app) : app_(&app) {}
  CLI::App& app() const { return *app_; }

  // --NAME METAVAR with one value. `defaultText` is shown by --help and read when neither the
  // flag nor a variable gives one ("" when the default depends on other flags: say so in `help`).
  CLI::Option* value(const std::string& name, const std::string& metavar, const std::string& help,
                     const std::string& defaultText = "");
  // --NAME bound to the variable api/knobs.cpp's table lists with it; the table's meaning is
  // the help, `note` is added to it.
  CLI::Option* knob(const std::string& name, const std::string& metavar, const std::string& defaultText = "",
                    const std::string& note = "");
  CLI::Option* repeatable(const std::string& name, const std::string& metavar, const std::string& help);
  CLI::Option* flag(const std::string& name, const std::string& help);
  // A positional argument (`many`: any number of them); read under `name`.
  CLI::Option* positional(const std::string& name, const std::string& metavar, const std::string& help,
                          bool many = false);

  CLI::Option* option(const std::string& name) const;  // a registered one, to adjust its help
  bool registered(const std::string& name) const { return options_.count(name) > 0; }
  bool onCommandLine(const std::string& name) const;  // given as a flag
  bool given(const std::string& name) const;          // as a flag or through its variable
  // The flag's text, else its variable's; nullopt when neither (or not registered).
  std::optional<std::string> text(const std::string& name) const;
  // text(), else the registered default; nullopt when there is none.
  std::optional<std::string> textOrDefault(const std::string& name) const;
  std::vector<std::string> all(const std::string& name) const;  // repeatable flags and positionals
  // Who gave the value, for messages: "--name", or the variable when it came from there.
  std::string label(const std::string& name) const;

  // textOrDefault() parsed; UsageError naming label() on junk, std::logic_error without a value.
  uint64_t count(const std::string& name) const;  // non-negative integer (1e6 accepted when whole)
  uint64_t paths(const std::string& name) const;  // a path count: 1 to 2^48 (api/knobs.h parsePathCount)
  int integer(const std::string& name) const;
  int positive(const std::string& name) const;
  // An integer from lo to hi: "--name: expected an integer in lo..hi, got 'text'".
  int integerIn(const std::string& name, int lo, int hi) const;

 private:
  CLI::Option* add(const std::string& name, CLI::Option* option);
  const CLI::Option* find(const std::string& name) const;
  std::string need(const std::string& name) const;
  CLI::App* app_;
  std::map<std::string, CLI::Option*> options_;
};

// The RunConfig flags (engine, checkpoint, strategy, plan, kernel, precision, ...), each knob
// bound to its variable, minus those in `skip` (compare picks engines and kernels itself).
void addRunConfigFlags(Flags& f, const std::vector<std::string>& skip = {});
// RunConfig from the kernel- and engine-level variables, then every Run knob of the table whose
// flag `f` has (flag, variable or default, parsed by the table), then the precision flags.
RunConfig runConfigFrom(const Flags& f);

// --max-nodes where `f` has the flag (flag, else TAPELAB_MAX_NODES), else the variable, else the
// default: the largest built-in product a front end records (tape/products/products.h byName).
uint64_t maxNodesFrom(const Flags& f);

// tapelab's help layout on `app` and the Apps added to it later: the usage line, the
// description, one line per flag with its metavar, default and variable, then the footer.
void useTapelabHelp(CLI::App& app);
// The help of `app` itself (CLI::App::help() shows a parsed subcommand's instead).
std::string helpText(const CLI::App& app);

// Parses the command line into `app` (and its subcommands), then runs `body`. --help prints
// the help of the command asked for and returns 0; a parse error, a UsageError or another
// std::invalid_argument is one line "<app name>: <what>" on stderr and 2; EngineUnavailable 3;
// any other exception 1.
int runCommandLine(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body);

}  // namespace tapelab::cli
