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
// Version 2 ("tapelab-plan 2") adds the per-value family (planner/plan.h) and a solver's word:
//     "family": "per-value",                    optional: "segment" (the default) or "per-value"
//     "keep": [12, 40, ...],                     per-value only, required there: the kept nodes, increasing
//                                                (inputs and the output are kept anyway)
//     "solver": {"status": "optimal", "objective": 812.5, "bound": 812.5, "gap": 0, "seconds": 3.2,
//                "name": "HiGHS 1.15.1"}          optional, any family: where the plan came from
// A per-value plan's "cuts" group its reverse sweep into blocks; it has no "inner". Version 1 files
// read as before; tapelab writes version 1 for a segment plan without solver, else version 2.
// "structure" is structureHash(tape): the plan is checked against the tape it is
// run on (`tapelab plan ... --json` prints it). `tapelab plan --out` also writes
// "requested_segments", "metrics", "persistent_nodes" and "segment_list": what
// the cuts imply, for the reader's eye; the reader checks that each is an object or an array,
// drops it while parsing (it is never held) and derives it again. Any other key is an error,
// and so is a key given twice in one object. "strategy" is a label, not an instruction: 1-64
// printable ASCII characters, no quotes or backslash (the cuts are the plan). A leading UTF-8 byte-order
// mark is skipped, as the tape reader does.
//
// Resources: the reader streams (readPlanFile reads 64 KiB at a time and hands it to the JSON
// parser, never holding the file), at most kMaxPlanBytes; JSON nests at most kMaxJsonDepth
// levels and inner cuts kMaxPlanDepth (a deeper file is one line, not a stack overflow); an
// object has at most kMaxObjectKeys keys. Time is linear in the bytes; memory is the parsed
// cuts and inner trees (the JSON values of "cuts" and "inner", about 16 bytes per number, then
// the Plan), bench/bench_readers.cpp measures it.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

#include "planner/metrics.h"
#include "planner/plan.h"

namespace tapelab {

inline constexpr const char* kPlanFormat = "tapelab-plan 1";
inline constexpr const char* kPlanFormat2 = "tapelab-plan 2";
inline constexpr uint64_t kMaxPlanBytes = uint64_t{256} << 20;  // 256 MiB: 10^6 cuts with every derived field
inline constexpr int kMaxPlanDepth = 256;                       // levels of cuts (Plan::depth); revolve reaches 90
inline constexpr int kMaxJsonDepth = 2 * kMaxPlanDepth + 8;     // JSON objects and arrays open at once
inline constexpr size_t kMaxObjectKeys = 64;                    // the format's objects have at most 9

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
// Reads FILE and parses it. Throws PlanFileError (also for a file that cannot be read: "FILE:
// (file): why", as the tape reader says it: no such file, a dangling link, a directory, ...).
Plan readPlanFile(const std::string& path, const Tape& tape);

}  // namespace tapelab
