// Factory for the reference interpreter engines.
#pragma once
#include <memory>

#include "engine/engine.h"
#include "engine/settings.h"
#include "reference/interpreter.h"

namespace tapelab {

// Uses settings.threads only.
std::unique_ptr<Engine> makeReferenceEngine(ReferenceScalar scalar, const EngineSettings& settings);

}  // namespace tapelab
