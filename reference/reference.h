// Factory for the reference interpreter engines.
#pragma once
#include <memory>

#include "api/engine.h"
#include "reference/interpreter.h"

namespace tapelab {

std::unique_ptr<Engine> makeReferenceEngine(ReferenceScalar scalar);

}  // namespace tapelab
