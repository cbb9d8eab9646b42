// A Plan: where one tape's checkpointed kernel cuts its tape, and what
// crosses the cuts. Strategies (planner/strategies.h) choose the bounds;
// makePlan derives everything else from them, so every strategy's plan is
// interpreted and emitted the same way.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tape/tape.h"

namespace tapelab {

struct Plan {
  std::string strategy;  // which strategy chose the bounds ("plain" for one segment)
  // Segment s covers nodes [bounds[s], bounds[s+1]); bounds.front() == 0, bounds.back() == n.
  std::vector<int32_t> bounds;
  // Values some node at or after a cut reads although they were computed before
  // it (plus the output when a cut follows it), sorted: the bookmarks.
  std::vector<int32_t> crossing;
  // crossing + inputs + output, sorted: held for the whole kernel.
  std::vector<int32_t> persistent;
  std::vector<uint8_t> isPersistent;  // per node
  // Scratch kernels: slot[j] is the scratch slot of crossing non-input value j
  // (-1 otherwise). Each value is stored once, at the first cut it crosses;
  // slots are numbered in that order. storedAt[s] lists the values stored at
  // the end of segment s (s < segments-1).
  std::vector<int32_t> slot;
  std::vector<std::vector<int32_t>> storedAt;
  int32_t scratchSlots = 0;

  int segments() const { return static_cast<int>(bounds.size()) - 1; }
  int32_t begin(int s) const { return bounds[s]; }
  int32_t end(int s) const { return bounds[s + 1]; }
};

// Builds the plan whose segments start at `bounds` (must start with 0, end
// with tape.size(), strictly increasing). Throws std::invalid_argument otherwise.
Plan makePlan(const Tape& tape, std::vector<int32_t> bounds, std::string strategy);

// The uncut plan: one segment, the plain kernel.
Plan plainPlan(const Tape& tape);

// Values computed before segment s that its nodes read (its bookmarks and
// inputs), sorted and distinct: what a recompute of segment s loads.
std::vector<int32_t> segmentImports(const Tape& tape, const Plan& plan, int s);

}  // namespace tapelab
