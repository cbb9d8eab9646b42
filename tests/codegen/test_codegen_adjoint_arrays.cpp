// The market loop's shared adjoint arrays (gpu/codegen/adjoint_arrays.h): a pure function of the
// tape and a flat plan, checked against the reverse sweep's spans on random tapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "gpu/codegen/adjoint_arrays.h"
#include "planner/strategies.h"
#include "tape/random_tape.h"

using namespace tapelab;

// The market loop's shared adjoint arrays (adjoint_arrays.h), on random tapes with inputs anywhere and
// window plans of 2-8 segments: every persistent value with an adjoint gets an array and is set by
// the segment its span starts in; two values sharing an array have disjoint spans; an input's array
// is its own (its Greek is read after the sweep); and bookmarks do share (fewer arrays than adjoints).
TEST(CodegenAdjointArrays, SharedOnlyWhereSpansDoNotOverlap) {
  int sharedSomewhere = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RandomTapeOptions ro;
    ro.nodes = 120;
    ro.inputs = 3;
    ro.draws = 8;
    ro.scatterInputs = true;
    const Tape t = randomTape(seed, ro);
    const std::vector<uint8_t> dep = dependsOnInput(t);
    PlanOptions po;
    po.segments = 2 + static_cast<int>(seed % 7);
    const Plan plan = makeStrategyPlan("window", t, po);
    const SharedAdjointArrays shared = shareAdjointArrays(t, plan, dep);
    // Each adjoint's span of segments, as the reverse sweep meets it: set where firstWrittenIn says,
    // last read in the segment that computes the value (or its lowest reader).
    std::vector<int> segmentOf(t.size()), from(t.size(), -1), to(t.size(), plan.segments());
    for (int s = 0; s < plan.segments(); ++s)
      for (int32_t i = plan.begin(s); i < plan.end(s); ++i) segmentOf[i] = s;
    for (int s = 0; s < plan.segments(); ++s)
      for (int32_t j : shared.firstWrittenIn[s]) from[j] = s;
    int withAdjoint = 0;
    for (int32_t j : plan.persistent) {
      if (!dep[j]) continue;
      ++withAdjoint;
      ASSERT_GE(shared.arrayOf[j], 0) << "seed " << seed << ", node " << j;
      ASSERT_GE(from[j], segmentOf[j]) << "seed " << seed << ", node " << j << ": set after its own segment";
      to[j] = t.op[j] == Op::Input ? -1 : segmentOf[j];  // an input's array lives past the sweep
      for (int32_t i = 0; i < t.size(); ++i)
        if (dep[i] && ((arity(t.op[i]) >= 1 && t.a[i] == j) || (arity(t.op[i]) >= 2 && t.b[i] == j) ||
                        (arity(t.op[i]) >= 3 && t.c[i] == j))) {
          ASSERT_LE(segmentOf[i], from[j]) << "seed " << seed << ", node " << j << ": added to before it is set";
          if (t.op[j] != Op::Input) to[j] = std::min(to[j], segmentOf[i]);
        }
    }
    for (int32_t j : plan.persistent) {
      for (int32_t k : plan.persistent) {
        if (j < k && dep[j] && dep[k] && shared.arrayOf[j] == shared.arrayOf[k]) {
          EXPECT_TRUE(to[j] > from[k] || to[k] > from[j])
              << "seed " << seed << ": nodes " << j << " [" << from[j] << ".." << to[j] << "] and " << k << " ["
              << from[k] << ".." << to[k] << "] share array " << shared.arrayOf[j];
        }
      }
    }
    if (shared.arrays < withAdjoint) ++sharedSomewhere;
  }
  EXPECT_GT(sharedSomewhere, 20) << "bookmarks should share arrays on most tapes";
}
