// The tangent-against-adjoint cost model (planner/kind_cost.h): its terms counted by hand on small
// tapes, and its prediction on the wide products: one differentiated input makes the tangent kernel
// the cheaper kind, every input the adjoint.
#include <gtest/gtest.h>

#include "planner/kind_cost.h"
#include "tape/products/products.h"
#include "tape/recorder.h"

using namespace tapelab;

TEST(PlannerKindCost, TermsAreCountedPerArgumentAndTangentSlot) {
  Recorder rec;
  Var x = rec.input("x", 1), y = rec.input("y", 2);
  Var p = x * y;                   // 2 adjoint terms; tangent: x's slot, y's slot
  Var q = p + x;                   // 2; tangent: p's {x, y} and x's {x}
  Var c = q < y;                   // a comparison sends nothing
  rec.output(select(c, q, p));     // select: to b and c only (q {x,y}, p {x,y})
  const Tape t = rec.finish();
  const KindCosts all = kindCosts(t, {}, CostModel::unit());
  EXPECT_EQ(all.adjointTerms, 2 + 2 + 2);
  EXPECT_EQ(all.tangentTerms, 2 + 3 + 4);
  EXPECT_EQ(all.forward, 6);  // unit weights: 2 inputs and 4 ops
  const KindCosts onlyX = kindCosts(t, {0}, CostModel::unit());
  EXPECT_EQ(onlyX.adjointTerms, all.adjointTerms);  // the adjoint computes every Greek anyway
  EXPECT_EQ(onlyX.tangentTerms, 1 + 2 + 2);
  EXPECT_DOUBLE_EQ(onlyX.tangent, onlyX.forward + kTermCost * 5);
}

TEST(PlannerKindCost, TheWideProductsCrossOver) {
  for (const char* name : {"bucketed", "hestonbasket", "lmm"}) {
    const Tape t = products::byName(name, products::ProductParams{});
    EXPECT_LT(kindCosts(t, {0}).tangentOverAdjoint(), 1) << name;
    EXPECT_GT(kindCosts(t, {}).tangentOverAdjoint(), 2) << name;  // every input: the adjoint's day
  }
}
