// Cut strategies: each is a free function (const Tape&, const PlanOptions&) -> Plan,
// registered by name, so a researcher adds one by writing one function.
#pragma once
#include <string>
#include <vector>

#include "planner/plan.h"

namespace tapelab {

struct PlanOptions {
  int segments = 16;  // requested segment count (strategies that choose it may ignore it)
  int segLen = 0;     // uniform: nodes per segment; 0 = derive (see planUniform)
};

using Strategy = Plan (*)(const Tape&, const PlanOptions&);

struct StrategyEntry {
  std::string name;
  Strategy fn;
  std::string summary;
};

// The anchor's default scratch segment length: max(48, round(sqrt(n))).
int32_t defaultSegLen(int32_t n);

// Fixed segment length: segLen if set, else n/segments rounded up.
Plan planUniform(const Tape& tape, const PlanOptions& o);
// The article's: targets s*n/segments, best cut within max(1, n/(4*segments))
// of the target by fewest live values, ties to the nearest target.
Plan planWindow(const Tape& tape, const PlanOptions& o);

const std::vector<StrategyEntry>& strategies();
// Throws std::invalid_argument for an unknown name or impossible options
// (segments < 1, more segments than nodes).
Plan makeStrategyPlan(const std::string& name, const Tape& tape, const PlanOptions& o);

}  // namespace tapelab
