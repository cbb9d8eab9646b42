// Shared pieces of the tapelab command: flag parsing, JSON and table output,
// exit codes. Each subcommand lives in cli/cmd_<name>.cpp as
// `int cmd<Name>(const std::vector<std::string>& args)` and is listed once in
// main.cpp's table.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/montecarlo.h"

namespace tapelab::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // a run failed (driver error, ...)
inline constexpr int kExitInvalid = 2;      // invalid input: tape, flag, value
inline constexpr int kExitUnavailable = 3;  // engine not available here

// Invalid flag or value: main prints "tapelab: <what>" and exits 2.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Flag {
  std::string name;     // without dashes: "paths"
  std::string metavar;  // "" for a boolean flag
  std::string help;
  std::string env;      // TAPELAB_* variable with the same meaning, "" if none
  bool repeatable = false;
};

class Args {
 public:
  // Parses argv (after the subcommand) against `flags`; "--help"/"-h" sets help().
  // Throws UsageError naming the flag for unknown flags or missing values.
  Args(std::string command, const std::vector<std::string>& argv, std::vector<Flag> flags);

  bool help() const { return help_; }
  bool has(const std::string& flag) const;
  std::optional<std::string> get(const std::string& flag) const;
  std::vector<std::string> all(const std::string& flag) const;  // repeatable flags
  const std::vector<std::string>& positional() const { return positional_; }

  // Typed getters: value of the flag, else its env variable, else fallback; UsageError on junk.
  uint64_t getU64(const std::string& flag, uint64_t fallback) const;
  int getInt(const std::string& flag, int fallback) const;
  double getDouble(const std::string& flag, double fallback) const;
  std::string getString(const std::string& flag, const std::string& fallback) const;

  // "usage: tapelab <command> <synopsis>" + description + one line per flag.
  std::string usage(const std::string& synopsis, const std::string& description) const;

 private:
  std::optional<std::string> valueOrEnv(const std::string& flag) const;
  std::string command_;
  std::vector<Flag> flags_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

// Numbers as the CLI prints them: 17 significant digits.
std::string num(double v);

// Minimal JSON writer: objects and arrays built as strings in order.
class Json {
 public:
  Json& field(const std::string& key, const std::string& raw);  // raw JSON value
  Json& str(const std::string& key, const std::string& value);
  Json& number(const std::string& key, double value);
  Json& integer(const std::string& key, int64_t value);
  Json& boolean(const std::string& key, bool value);
  std::string done() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};
std::string jsonString(const std::string& s);
std::string jsonArray(const std::vector<std::string>& rawItems);

// An aligned text table: header row, then rows; numbers right-aligned.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// --- shared by run, price, compare ---------------------------------------

// The flags every pricing subcommand takes.
std::vector<Flag> pricingFlags();
// RunConfig from the environment (api/knobs.h), then the flags.
RunConfig runConfigFrom(const Args& args);
// The input values: the tape's defaults, overridden by --set NAME=VALUE (repeatable).
std::vector<double> inputsFrom(const Args& args, const Tape& tape);
// --ladder NAME=V1,V2,...: one input set per value, starting from `base`. Empty when absent.
std::vector<std::vector<double>> ladderFrom(const Args& args, const Tape& tape, const std::vector<double>& base,
                                            std::string* ladderInput = nullptr);
// The tape a pricing command works on: FILE.tape positional or --product/--steps/--assets.
Tape tapeFrom(const Args& args, bool allowFile, const std::string& defaultProduct = "");

// The result of one run as --json prints it.
std::string resultJson(const Result& r, size_t market, const KernelStats* stats = nullptr);

}  // namespace tapelab::cli
