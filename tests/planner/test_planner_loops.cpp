// planner/loops.h: the time loop a product's tape unrolled, found from its nodes alone; nothing found in a
// tape without one; the loop shortened until what follows it reads only its last iteration.
#include <gtest/gtest.h>

#include "planner/loops.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tape/recorder.h"

using namespace tapelab;

TEST(PlannerLoops, FindsEachProductsTimeStep) {
  const TapeLoop asian = findLoop(products::asianCall(252));
  EXPECT_EQ(asian.begin, 15);
  EXPECT_EQ(asian.period, 6);  // randn, mul, add, exp, mul (the spot), add (the running sum)
  EXPECT_EQ(asian.count, 252);
  EXPECT_EQ(asian.drawStride, 1);
  EXPECT_EQ(asian.body[4].kind[0], TapeLoop::Arg::Carried);  // s_k = s_{k-1} * e_k
  EXPECT_EQ(asian.initOf[4], 0);                            // s_0 is the spot, node 0
  EXPECT_EQ(asian.body[1].kind[0], TapeLoop::Arg::Invariant);
  const TapeLoop heston = findLoop(products::byName("heston", products::ProductParams{{"steps", 40}}));
  EXPECT_EQ(heston.count, 40);
  EXPECT_EQ(heston.drawStride, 2);
  const TapeLoop basket = findLoop(products::byName("basket", products::ProductParams{{"steps", 30}, {"assets", 4}}));
  EXPECT_EQ(basket.count, 30);
  EXPECT_EQ(basket.drawStride, 4);
  EXPECT_NE(toText(asian, products::asianCall(252)).find("period 6, count 252"), std::string::npos);
}

TEST(PlannerLoops, NoneInATapeWithoutOne) {
  RandomTapeOptions o;
  o.nodes = 400;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Tape t = randomTape(seed, o);
    const TapeLoop L = findLoop(t);
    if (!L.found()) continue;
    // A loop found in a random tape must still be one: every iteration follows the body.
    for (int32_t k = 1; k < L.count; ++k)
      for (int32_t o2 = 0; o2 < L.period; ++o2) EXPECT_EQ(t.op[L.node(k, o2)], t.op[L.node(0, o2)]) << seed;
  }
}

TEST(PlannerLoops, WhatFollowsReadsOnlyTheLastIteration) {
  Recorder rec;
  Var s = rec.input("s", 1.0);
  std::vector<Var> steps;
  for (int k = 0; k < 12; ++k) {
    s = s * exp(rec.randn(k) * 0.1);
    steps.push_back(s);
  }
  rec.output(s + steps[6]);  // reads iteration 6: the loop keeps iterations 0..6 at most
  const Tape t = rec.finish();
  const TapeLoop L = findLoop(t);
  ASSERT_TRUE(L.found());
  EXPECT_LE(L.count, 7);
  for (int32_t i = L.end(); i < t.size(); ++i)
    forEachArg(t, i, [&](int32_t j) { EXPECT_FALSE(L.contains(j) && j < L.node(L.count - 1, 0)) << i << " reads " << j; });
}
