// The subcommands; each in cli/cmd_<name>.cpp.
#pragma once
#include <string>
#include <vector>

namespace tapelab::cli {

using Argv = std::vector<std::string>;
int cmdEngines(const Argv& args);
int cmdRun(const Argv& args);    // tapelab run FILE.tape
int cmdPrice(const Argv& args);  // tapelab price --product ...
int cmdTape(const Argv& args);
int cmdPhilox(const Argv& args);
int cmdCompare(const Argv& args);
int cmdPlan(const Argv& args);

}  // namespace tapelab::cli
