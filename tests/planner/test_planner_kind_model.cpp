// planner/kind_model.h: a rule's instructions by its operators and functions; the tangent kernel predicted
// cheaper on a narrow tape (5 inputs) and the adjoint on the wide ones (81 and 341 inputs), by the margins
// that make the choice matter.
#include <gtest/gtest.h>

#include "planner/kind_model.h"
#include "planner/strategies.h"
#include "tape/products/products.h"

using namespace tapelab;

TEST(PlannerKindModel, RuleCostCountsOperatorsAndFunctions) {
  const CostModel& c = CostModel::measured();
  EXPECT_DOUBLE_EQ(ruleCost("d", c), 0.0);
  EXPECT_DOUBLE_EQ(ruleCost("-d", c), 0.0);  // a negation is folded into its use
  EXPECT_DOUBLE_EQ(ruleCost("d * b", c), c.of(Op::Mul));
  EXPECT_DOUBLE_EQ(ruleCost("d / (r + r)", c), c.of(Op::Div) + c.of(Op::Add));
  EXPECT_DOUBLE_EQ(ruleCost("d * (r * log(a))", c), 2 * c.of(Op::Mul) + c.of(Op::Log));
  EXPECT_DOUBLE_EQ(ruleCost("-(d * r) / b", c), c.of(Op::Mul) + c.of(Op::Div));
}

TEST(PlannerKindModel, TangentOnNarrowTapesAdjointOnWideOnes) {
  auto predict = [](const Tape& t, bool rolls) {
    KindJob j;
    PlanOptions po;
    po.segments = 16;
    j.adjointPlan = planWindow(t, po);
    j.tangentRolls = rolls;
    return predictKinds(t, j);
  };
  const KindPrediction asian = predict(products::asianCall(252), true);
  EXPECT_TRUE(asian.tangentWins()) << asian.why();
  EXPECT_LT(asian.tangentInstructions, asian.adjointInstructions) << asian.why();
  const KindPrediction lmm = predict(products::byName("lmm", products::ProductParams{{"forwards", 40}}), false);
  EXPECT_FALSE(lmm.tangentWins()) << lmm.why();
  EXPECT_GT(lmm.tangentTime(), 5 * lmm.adjointTime()) << lmm.why();
  const KindPrediction neural = predict(products::byName("neural", products::ProductParams{}), false);
  EXPECT_GT(neural.tangentTime(), 5 * neural.adjointTime()) << neural.why();
  EXPECT_NE(neural.why().find("adjoint: "), std::string::npos);
}

// The wide products (issue 48) on a CPU engine's issue rate with the plain adjoint: one differentiated input
// makes the tangent kernel the cheaper kind, every input the adjoint by a wide margin (what
// experiments/tangent_crossover.cpp prints beside its measured crossover).
TEST(PlannerKindModel, TheWideProductsCrossOverByTheirDifferentiatedInputs) {
  for (const char* name : {"bucketed", "hestonbasket", "lmm"}) {
    const Tape t = products::byName(name, products::ProductParams{});
    KindJob one;
    one.gpu = false;
    one.wrt = {0};
    const KindPrediction p1 = predictKinds(t, one);
    EXPECT_LT(p1.tangentTime(), p1.adjointTime()) << name << ": " << p1.why();
    KindJob all = one;
    all.wrt = {};
    const KindPrediction pa = predictKinds(t, all);
    EXPECT_GT(pa.tangentTime(), 2 * pa.adjointTime()) << name << ": " << pa.why();  // every input: the adjoint's day
  }
}
