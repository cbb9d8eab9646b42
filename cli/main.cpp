// tapelab: the command line. Exit codes: 0 success, 1 run failure, 2 invalid
// input (tape, flag, value), 3 engine not available here. Errors are one line
// on stderr starting "tapelab: " (cli/options.h).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "util/files.h"
#include "util/process.h"

using namespace tapelab::cli;

namespace {

struct Command {
  const char* name;
  Runner (*setup)(CLI::App&);
  const char* summary;
};

const Command kCommands[] = {
    {"compare", setupCompare, "the main job: plain vs checkpointed on every engine, timed spot ladders"},
    {"price", setupPrice, "price a product (--product NAME: tapelab tape --help lists them) with its Greeks"},
    {"run", setupRun, "price a .tape file with its Greeks"},
    {"engines", setupEngines, "list every engine, usable here or not, and why"},
    {"tape", setupTape, "write a product's tape in the .tape text format, or summarize a tape (--summary)"},
    {"plan", setupPlan, "where a cut strategy cuts a tape and what the plan costs (--all compares them)"},
    {"tune", setupTune, "search plans x kernel configurations for one job, keep the fastest exact one"},
    {"config", setupConfig, "the kernel configuration's fields, values and defaults (--list), or one engine's"},
    {"philox", setupPhilox, "print Philox4x32-10 output words for a counter and key"},
};

}  // namespace

int tapelab::cli::tapelabMain(int argc, const char* const* argv, bool (*mayRun)(const std::string& command)) {
  CLI::App tapelab("tapelab: adjoint Monte-Carlo tapes on CPUs and GPUs, plain and checkpointed.", "tapelab");
  useTapelabHelp(tapelab);
  tapelab.set_version_flag("--version", std::string("tapelab 0.1 (commit ") + commitId() + ")",
                           "print the version and the commit it was built from");
  tapelab.require_subcommand(0, 1);
  tapelab.footer("'tapelab <command> --help' describes a command's flags.");
  std::vector<std::pair<CLI::App*, Runner>> runners;
  for (const Command& c : kCommands) {
    CLI::App* sub = tapelab.add_subcommand(c.name, c.summary);
    runners.emplace_back(sub, c.setup(*sub));
  }
  // `tapelab help [COMMAND]`: the same as --help, kept out of the list.
  CLI::App* help = tapelab.add_subcommand("help", "")->group("");
  std::string helpFor;
  help->add_option("command", helpFor);
  return runCommandLine(tapelab, argc, argv, [&] {
    for (const auto& [sub, run] : runners)
      if (sub->parsed()) return !mayRun || mayRun(sub->get_name()) ? run() : kExitOk;
    if (help->parsed()) {
      const CLI::App* about = &tapelab;
      if (!helpFor.empty()) {
        about = nullptr;
        for (const auto& [sub, run] : runners)
          if (sub->get_name() == helpFor) about = sub;
        if (!about) throw UsageError("help: unknown command '" + helpFor + "' (see tapelab --help)");
      }
      std::fputs(helpText(*about).c_str(), stdout);
      return kExitOk;
    }
    std::fputs(helpText(tapelab).c_str(), stderr);  // no command
    return kExitInvalid;
  });
}

#ifndef TAPELAB_CLI_NO_MAIN  // fuzz/fuzz_cli.cpp brings its own
int main(int argc, char** argv) {
  // SIGINT, SIGTERM, SIGHUP: end the compilers this process started and remove its temporary
  // files (util/process.h), then die of the signal.
  tapelab::installStopHandlers();
  // Every file the command reads (util/files.h InputFile) is refused as an output: a --dump, a plan, a
  // shortlist never replaces its tape or plan, whatever name or link reaches it.
  tapelab::guardRunInputs();
  return tapelabMain(argc, argv, nullptr);
}
#endif
