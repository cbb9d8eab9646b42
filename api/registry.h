// The one map from engine names to factories. Every engine tapelab knows is
// listed, built in or not; caps() says whether it is usable here and why not.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/engine.h"

namespace tapelab {

struct EngineEntry {
  std::string name;
  std::string summary;  // one line for `tapelab engines`
  // nullptr when the backend was not built (its dependency was missing at configure time).
  std::function<std::unique_ptr<Engine>()> make;
  std::string notBuiltReason;
};

const std::vector<EngineEntry>& engineRegistry();

// Throws std::invalid_argument for an unknown name (the message lists the known ones).
const EngineEntry& findEngine(const std::string& name);

// Usable or not, with the reason: built-in check first, then the engine's caps().
EngineCaps engineCaps(const EngineEntry& entry);

}  // namespace tapelab
