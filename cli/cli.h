// Shared pieces of the tapelab command: JSON and table output, the tape and
// input flags. Flags, exit codes and errors: cli/options.h. Each subcommand
// lives in cli/cmd_<name>.cpp as a setup function (cli/commands.h) and is
// listed once in main.cpp's table.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "api/montecarlo.h"
#include "cli/options.h"

namespace tapelab::cli {

// The commit the binary was built from: `git describe --always --dirty` at build time (cmake/Commit.cmake).
const char* commitId();

// Numbers as the CLI prints them: 17 significant digits.
std::string num(double v);
// For reading, beside them: an estimate at its standard error's precision ("5.123 +- 0.012": the error
// to two significant digits, the estimate to the same decimal place), and a time or a rate at 3
// significant digits ("1.23", "0.0456", "12,300").
std::string rounded(double estimate, double stderror);
std::string sig3(double v);

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

// --- shared by run, price, compare, plan, tape ------------------------------

// Where a command's tape comes from: a FILE.tape argument, --product NAME with
// --steps and --assets, or either (then `defaultProduct` when neither is given).
enum class TapeSource { File, Product, FileOrProduct };
void addTapeFlags(Flags& f, TapeSource source, const std::string& defaultProduct = "");
Tape tapeFrom(const Flags& f);
// The time steps of the tape the flags name: --steps or --param steps=, else the built-in product's
// default; -1 for a tape file or a product without steps (lmm). Peer rows are matched on it.
int productSteps(const Flags& f);

// --set NAME=VALUE (repeatable): the input values are the tape's defaults, overridden by it. One
// --set per input (a second for the same input is an error, as a second --seed is); a value that
// is not a finite double or underflows to zero is an error (the tape reader's rule).
void addSetFlag(Flags& f);
std::vector<double> inputsFrom(const Flags& f, const Tape& tape);
// --ladder NAME=V1,V2,...: one input set per value, starting from `base`. Empty when absent. An
// input that --set also sets is an error (which value would the ladder's points start from?).
std::vector<std::vector<double>> ladderFrom(const Flags& f, const Tape& tape, const std::vector<double>& base,
                                            std::string* ladderInput = nullptr);

// The result of one run as --json prints it.
std::string resultJson(const Result& r, size_t market, const KernelStats* stats = nullptr);
// One stderr line per config field the user set (--config, TAPELAB_CONFIG) that the kernel did not
// use, with why (KernelStats::configUnused): a request not honoured is never silent.
void warnUnusedConfig(const RunConfig& config, const KernelStats& stats);
// One stderr line "tapelab: warning: not finite: ..." when an estimate of `r` is not finite (NaN:
// a path's value, or a sum, overflowed or is undefined; engine.h finishMoments); the table and
// --json show it as "nan" and --json lists it under "non_finite". The exit status stays 0: the
// numbers printed are what the run computed. Returns whether it warned.
bool warnNonFinite(const Result& r);

}  // namespace tapelab::cli
