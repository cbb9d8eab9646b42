#include "gpu/codegen/adjoint_arrays.h"

#include <algorithm>

namespace tapelab {

SharedAdjointArrays shareAdjointArrays(const Tape& tape, const Plan& plan, const std::vector<uint8_t>& dependsOnInput) {
  std::vector<int> segmentOf(tape.size());
  for (int s = 0; s < plan.segments(); ++s)
    for (int32_t i = plan.begin(s); i < plan.end(s); ++i) segmentOf[i] = s;
  // Each adjoint's span: the first segment of the reverse sweep that touches it (the highest) to the
  // last (the lowest: the value's own, where its rule reads it).
  std::vector<int> first(tape.size(), -1), last(tape.size(), plan.segments());
  auto touch = [&](int32_t j, int s) {
    first[j] = std::max(first[j], s);
    last[j] = std::min(last[j], s);
  };
  for (int32_t j : plan.persistent)
    if (dependsOnInput[j]) touch(j, segmentOf[j]);
  for (int32_t i = 0; i < tape.size(); ++i) {  // the segments whose rules add to a persistent adjoint
    if (!dependsOnInput[i] || arity(tape.op[i]) == 0) continue;
    forEachArg(tape, i, [&](int32_t arg) {
      if (dependsOnInput[arg] && plan.isPersistent[arg]) touch(arg, segmentOf[i]);
    });
  }
  SharedAdjointArrays out;
  out.arrayOf.assign(tape.size(), -1);
  out.firstWrittenIn.assign(plan.segments(), {});
  std::vector<int> free;
  for (int s = plan.segments() - 1; s >= 0; --s) {  // the reverse sweep's order
    for (int32_t j : plan.persistent) {
      if (!dependsOnInput[j] || first[j] != s) continue;
      if (free.empty()) free.push_back(out.arrays++);
      out.arrayOf[j] = free.back();
      free.pop_back();
      out.firstWrittenIn[s].push_back(j);
    }
    // Handed on after segment s (not within it); never an input's.
    for (int32_t j : plan.persistent)
      if (dependsOnInput[j] && last[j] == s && s > 0 && tape.op[j] != Op::Input) free.push_back(out.arrayOf[j]);
  }
  return out;
}

}  // namespace tapelab
