// tapelab: the command line. Exit codes: 0 success, 1 run failure, 2 invalid
// input (tape, flag, value), 3 engine not available here. Errors are one line
// on stderr starting "tapelab: ".
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/commands.h"
#include "tape/textformat.h"

using namespace tapelab;
using namespace tapelab::cli;

namespace {

struct Command {
  const char* name;
  int (*fn)(const Argv&);
  const char* summary;
};

const Command kCommands[] = {
    {"compare", cmdCompare, "the main job: plain vs checkpointed on every engine, timed spot ladders"},
    {"price", cmdPrice, "price a product (--product european|asian|basket) with its Greeks"},
    {"run", cmdRun, "price a .tape file with its Greeks"},
    {"engines", cmdEngines, "list every engine, usable here or not, and why"},
    {"tape", cmdTape, "write a product's tape in the .tape text format"},
    {"plan", cmdPlan, "where a cut strategy cuts a tape and what the plan costs (--all compares them)"},
    {"philox", cmdPhilox, "print Philox4x32-10 output words for a counter and key"},
};

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tapelab <command> [flags]\n\n"
               "tapelab: adjoint Monte-Carlo tapes on CPUs and GPUs, plain and checkpointed.\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-9s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'tapelab <command> --help' describes a command's flags.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    usage(stderr);
    return kExitInvalid;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(stdout);
    return kExitOk;
  }
  if (args[0] == "--version") {
    std::printf("tapelab 0.1\n");
    return kExitOk;
  }
  for (const Command& c : kCommands) {
    if (args[0] != c.name) continue;
    try {
      return c.fn(Argv(args.begin() + 1, args.end()));
    } catch (const TapeParseError& e) {
      std::fprintf(stderr, "tapelab: %s\n", e.what());
      return kExitInvalid;
    } catch (const EngineUnavailable& e) {
      std::fprintf(stderr, "tapelab: %s\n", e.what());
      return kExitUnavailable;
    } catch (const std::invalid_argument& e) {  // UsageError too
      std::fprintf(stderr, "tapelab: %s\n", e.what());
      return kExitInvalid;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tapelab: %s\n", e.what());
      return kExitFailure;
    }
  }
  std::fprintf(stderr, "tapelab: unknown command '%s' (see tapelab --help)\n", args[0].c_str());
  return kExitInvalid;
}
