// The reference interpreter: the living definition of what a tape computes.
// Forward sweep, then reverse, over many paths, generic over the scalar type.
// Checkpointed interpretation follows a Plan's schedule (planner/schedule.h):
// after the forward sweep every non-persistent value is poisoned (NaN); each
// block recomputes its range from what enclosing blocks hold, keeps its
// bookmarks, runs its children or its adjoints, and poisons what it made. A
// plan (or a lowering) that forgot a needed value therefore shows up as a NaN,
// never as a silently right answer from a value that should have been forgotten.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "planner/plan.h"
#include "planner/schedule.h"
#include "tape/philox.h"
#include "tape/tangent.h"
#include "tape/tape.h"

namespace tapelab {

template <class T>
struct PathResult {
  T value;
  std::vector<T> adjoints;  // per input
};

// One path, plain (plan == nullptr or one segment) or checkpointed; or, given
// `tangents`, in vector forward mode (tape/tangent.h): the same forward sweep,
// each node's tangents beside its value, no reverse sweep. `inputs` has
// tape.numInputs() values. Scratch vectors are reused between calls.
template <class T>
class PathInterpreter {
 public:
  PathInterpreter(const Tape& tape, const Plan* plan, bool greeks, const TangentSlots* tangents = nullptr);
  void run(const std::vector<T>& inputs, uint64_t seed, uint64_t path, PathResult<T>& out);

 private:
  void forwardNode(int32_t i, const std::vector<T>& inputs, uint64_t seed, uint64_t path);
  void tangentNode(int32_t i);
  void reverseNode(int32_t i);
  void runBlock(const ScheduleBlock& b, const std::vector<T>& inputs, uint64_t seed, uint64_t path);
  void forget(int32_t lo, int32_t hi);
  const Tape& tape_;
  const Plan* plan_;
  Schedule schedule_;
  std::vector<int32_t> held_;  // per node: persistent, or a bookmark of a running block
  bool greeks_;
  std::vector<T> v_, d_;
  const TangentSlots* tangents_ = nullptr;
  std::vector<size_t> tangentAt_;  // node i's tangents at t_[tangentAt_[i] ...]
  std::vector<T> t_;
  // The last Box-Muller pair drawn (tape/philox.h): its partner is usually the next draw.
  struct DrawnPair {
    uint64_t seed = 0, path = 0;
    uint32_t pair = ~0u;
    NormalPair<T> z{};
  } drawn_;
  T draw(uint64_t seed, uint64_t path, uint32_t k);
};

// The reference engines: "reference" (double), "reference-f32" (float),
// "reference-mp" (Boost.Multiprecision cpp_bin_float_50).
enum class ReferenceScalar { Double, Float, Multiprecision };

}  // namespace tapelab
