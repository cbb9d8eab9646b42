// The subcommands, each in cli/cmd_<name>.cpp: its setup registers the flags
// and help on its CLI::App (a subcommand of tapelab, main.cpp) and returns what
// runs it once the command line is parsed.
#pragma once
#include <functional>
#include <string>

#include "cli/options.h"

namespace tapelab::cli {

using Runner = std::function<int()>;
Runner setupEngines(CLI::App& app);
Runner setupRun(CLI::App& app);    // tapelab run FILE.tape
Runner setupPrice(CLI::App& app);  // tapelab price --product ...
Runner setupTape(CLI::App& app);
Runner setupPhilox(CLI::App& app);
Runner setupCompare(CLI::App& app);
Runner setupPlan(CLI::App& app);
Runner setupConfig(CLI::App& app);
Runner setupTune(CLI::App& app);

// The tapelab command (main.cpp). `mayRun` (null: every one) says which parsed subcommands
// run; the others return 0 after the parse: fuzz/fuzz_cli.cpp parses all, runs the cheap ones.
int tapelabMain(int argc, const char* const* argv, bool (*mayRun)(const std::string& command));

}  // namespace tapelab::cli
