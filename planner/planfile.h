// Plan files: a plan as data that any tool can write and every engine runs.
//
//   {
//     "format": "tapelab-plan 1",
//     "tape": {"name": "asian-252", "nodes": 1536, "structure": "<32 hex digits>"},
//     "strategy": "window",                      optional, free text
//     "cuts": [96, 192, ...],                    the top-level cuts: integers in (0, nodes), increasing
//     "inner": [null, {"cuts": [120, 150], "chain": false, "inner": [...]}, ...]
//                                                optional: one entry per segment, null (or {})
//                                                for a segment that is not cut again
//   }
// "structure" is structureHash(tape): the plan is checked against the tape it is
// run on (`tapelab plan ... --json` prints it). `tapelab plan --out` also writes
// "requested_segments", "metrics", "persistent_nodes" and "segment_list": what
// the cuts imply, for the reader's eye; the reader accepts them and derives
// them again. Any other key is an error.
#pragma once
#include <stdexcept>
#include <string>

#include "planner/metrics.h"
#include "planner/plan.h"

namespace tapelab {

inline constexpr const char* kPlanFormat = "tapelab-plan 1";

// A malformed plan file; what() is "FILE: field: reason" (one line).
struct PlanFileError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// XXH3-128 of the tape's structure (ops, arguments, output, input count) as 32
// hex digits: what a plan depends on. Constants and input values do not count.
std::string structureHash(const Tape& tape);

// The plan file text (pretty, one key per line at the top; `requested` is the
// strategy's requested segment count, 0 to leave it out).
std::string planFileText(const Tape& tape, const Plan& plan, int requested = 0);

// The "inner" array of a nested plan as compact JSON (the plan file's field).
std::string planInnerJson(const Plan& plan);

// Parses `text` as a plan for `tape`; `file` names it in errors. Throws PlanFileError.
Plan parsePlanFile(const std::string& text, const Tape& tape, const std::string& file);
// Reads FILE and parses it. Throws PlanFileError (also for a file that cannot be read).
Plan readPlanFile(const std::string& path, const Tape& tape);

}  // namespace tapelab
