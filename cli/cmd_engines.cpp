#include <cstdio>
#include <memory>

#include "api/registry.h"
#include "cli/cli.h"
#include "cli/commands.h"

namespace tapelab::cli {
namespace {

int engines(const Flags& f) {
  EngineSettings settings;
  try {
    settings = engineSettingsFromEnvironment();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::vector<std::string> items;
  std::vector<std::vector<std::string>> rows;
  for (const EngineEntry& e : engineRegistry()) {
    const EngineCaps c = engineCaps(e, settings);
    Json j;
    j.str("name", e.name).boolean("usable", c.usable).boolean("compile_only", c.compileOnly)
        .boolean("cpu_device", c.cpuDevice).boolean("auto_checkpoint", c.autoCheckpoint).str("reason", c.reason);
    items.push_back(j.done());
    rows.push_back({e.name, c.usable ? "yes" : c.compileOnly ? "compile-only" : "no", c.reason.empty() ? e.summary : c.reason});
  }
  if (f.given("json")) std::printf("%s\n", jsonArray(items).c_str());
  else std::printf("%s", table({"engine", "usable", "why / what"}, rows).c_str());
  return kExitOk;
}

}  // namespace

Runner setupEngines(CLI::App& app) {
  app.footer("Lists every engine tapelab knows, whether it runs here, and why not.");
  auto f = std::make_shared<Flags>(app);
  f->flag("json", "print a JSON list of {name, usable, compile_only, cpu_device, auto_checkpoint (whether "
                   "run's and price's --checkpoint auto cut long tapes there), reason}");
  return [f] { return engines(*f); };
}

}  // namespace tapelab::cli
