// The one map from engine names to factories, and the one place that knows
// every backend. Every engine tapelab knows is listed, built in or not; caps()
// says whether it is usable here and why not. Factories take EngineSettings
// (engine/settings.h); front ends fill them from the environment (api/knobs.h).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/knobs.h"
#include "engine/engine.h"
#include "engine/settings.h"

namespace tapelab {

struct EngineEntry {
  std::string name;
  std::string summary;  // one line for `tapelab engines`
  // nullptr when the backend was not built (its dependency was missing at configure time).
  std::function<std::unique_ptr<Engine>(const EngineSettings&)> make;
  std::string notBuiltReason;
};

const std::vector<EngineEntry>& engineRegistry();

// Every registered engine's name, in the registry's order (built or not): what suites over engines run.
std::vector<std::string> engineNames();

// Throws std::invalid_argument for an unknown name (the message lists the known ones).
const EngineEntry& findEngine(const std::string& name);

// Usable or not, with the reason: built-in check first, then the engine's caps().
EngineCaps engineCaps(const EngineEntry& entry, const EngineSettings& settings = engineSettingsFromEnvironment());

// The error for an engine whose caps say it cannot run: EngineUnavailable "engine 'NAME' is not usable
// here: REASON" (exit 3), or, where the reason is memory (a driver that could not be loaded under
// `ulimit -v`: gpu/host/memory.h; the reason says "out of memory"), a std::runtime_error with the same words
// (exit 1, a failed run).
[[noreturn]] void throwUnusable(const std::string& name, const EngineCaps& caps);

// The engine `name` made with `settings`; throws std::invalid_argument for an
// unknown name and EngineUnavailable for one that was not built.
std::unique_ptr<Engine> makeEngine(const std::string& name,
                                   const EngineSettings& settings = engineSettingsFromEnvironment());

}  // namespace tapelab
