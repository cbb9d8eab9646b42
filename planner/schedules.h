// Interop with checkpoint_schedules (PyPI; Revolve, Multistage, H-Revolve, Mixed, two-level, ...): a
// schedule as a file of its actions, and the conversion between such a schedule and a tapelab plan over
// the tape's time steps (planner/nested.h stepStarts: step k covers nodes [s_k, s_k+1)).
//
// The schedule file ("tapelab-schedule 1", JSON; python/tapelab/schedules.py writes and reads it):
//   {"format": "tapelab-schedule 1", "steps": 10,
//    "actions": ["Forward(0, 4, True, False, StorageType.RAM)", "EndForward()", "Reverse(10, 9, True)",
//                "Copy(7, StorageType.RAM, StorageType.WORK)", "Move(7, StorageType.RAM, StorageType.NONE)",
//                ..., "EndReverse()"],
//    "tape": {"name": ..., "nodes": ..., "structure": ...}}     optional (export writes it; not checked)
// Each action is checkpoint_schedules's own text for it (its repr). A schedule fits a tape when its
// steps are the tape's.
//
// Import (planFromSchedule). The actions are replayed as checkpoint_schedules defines them (a Forward
// starts where the working state is; Copy/Move to WORK restores a stored state or loads stored adjoint
// dependencies; Reverse goes down one contiguous range below the last one; every step reversed once,
// EndReverse at step 0), and each stored forward state (write_ics) becomes a bookmark:
//   - the states the first forward sweep stores are the top-level cuts (tapelab's kernels run the whole
//     forward sweep first, so those are free);
//   - a state stored while advancing from bookmark p is a cut inside p's segment; the reversals done from
//     p (its own steps, without storing a state: one Reverse after one advance) are its chain's pieces;
//   - the CutTree of p's segment [p, e): pieces (cut segments or reversed ranges) in the order the
//     schedule made them; a single reversed range is a leaf, only reversed ranges a chain, otherwise a
//     segment cut again at every piece's start (the reversed ranges at p's end a leaf or chain of their
//     own, a reversed range above a cut a leaf reversed from a bookmark at its start).
//   Adjoint dependencies stored for later (Mixed's write_adj_deps to DISK) are reversed in tapelab as
//   part of the piece they were computed in: a register kernel recomputes every leaf before its adjoint.
//   A schedule whose first sweep stores only step 0 is lifted one level (a plan of one segment is the
//   plain kernel): its first cuts become the top-level ones.
// A schedule that is not well formed, does not fit the tape, or cannot be nested this way (a range
// reversed from outside the bookmark that holds it) is one PlanFileError line: "FILE: actions[K]: why".
//
// Export (scheduleOfPlan): the actions tapelab's kernel runs for a segment plan whose cuts all lie on
// step starts: the forward sweep storing each top-level bookmark (RAM), then each segment's reverse as
// planner/schedule.h lowers it (leaf: restore, advance keeping adjoint dependencies, Reverse; chain: per
// piece, last first, restore and advance; cut again: restore, advance storing each cut's state, the
// pieces last first), a bookmark's last restore a Move and a state no restore reads deleted
// (Move(n, RAM, NONE)). Import of an export gives the plan back.
#pragma once
#include <string>

#include "planner/plan.h"

namespace tapelab {

inline constexpr const char* kScheduleFormat = "tapelab-schedule 1";

// Parses `text` (a schedule file; `file` names it in errors) into the plan it runs on `tape`, strategy
// label `strategy`. Throws PlanFileError.
Plan planFromSchedule(const Tape& tape, const std::string& text, const std::string& file,
                      const std::string& strategy = "schedule");
// Reads FILE and converts it (PlanFileError also when it cannot be read).
Plan readScheduleFile(const std::string& path, const Tape& tape);

// The schedule file of `plan` on `tape`. Throws std::invalid_argument for a per-value plan or a cut that is
// not a step start (naming the node).
std::string scheduleOfPlan(const Tape& tape, const Plan& plan);

}  // namespace tapelab
