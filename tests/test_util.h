// Helpers shared by the engine tests (tests/test_*.cpp).
#pragma once
#include <cstdio>
#include <string>

#include "api/engine.h"
#include "planner/plan.h"
#include "planner/strategies.h"

namespace tapelab::testutil {

// 17 significant digits: enough to tell any two doubles apart in a failure message.
inline std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Kernel options of one kind for a tape: plain; register with `registerSegments`
// segments, window strategy; scratch with uniform segments of `segLen` nodes.
inline KernelOptions kindOptions(const Tape& tape, KernelKind kind, int registerSegments, int segLen = 0,
                                 ScratchLayout layout = ScratchLayout::SoA, int markets = 1,
                                 Precision precision = Precision::F32) {
  KernelOptions o;
  o.precision = precision;
  o.kind = kind;
  o.layout = layout;
  o.markets = markets;
  PlanOptions po;
  if (kind == KernelKind::Plain) {
    o.plan = plainPlan(tape);
  } else if (kind == KernelKind::Register) {
    po.segments = registerSegments;
    o.plan = makeStrategyPlan("window", tape, po);
  } else {
    po.segLen = segLen;
    o.plan = makeStrategyPlan("uniform", tape, po);
  }
  return o;
}

}  // namespace tapelab::testutil
