#include <gtest/gtest.h>

#include "tape/op.h"
#include "tape/spell.h"

using namespace tapelab;

TEST(Spell, RenamesWholeIdentifiersOnly) {
  auto rename = [](std::string_view id) -> std::string {
    if (id == "a") return "v12";
    if (id == "b") return "v3";
    if (id == "d") return "d15";
    if (id == "zero") return "0.0f";
    if (id == "sel") return "tl_sel";
    return std::string(id);
  };
  EXPECT_EQ(spell(info(Op::Max).adjointA, rename), "tl_sel(v12 >= v3, d15, 0.0f)");
  EXPECT_EQ(spell(info(Op::Mul).adjointB, rename), "d15 * v12");
}

TEST(OpTable, AdjointReadsAreDerivedFromTheRules) {
  EXPECT_TRUE(adjointReads(Op::Mul).a && adjointReads(Op::Mul).b && !adjointReads(Op::Mul).r);
  EXPECT_TRUE(!adjointReads(Op::Add).a && !adjointReads(Op::Add).b && !adjointReads(Op::Add).r);
  EXPECT_TRUE(adjointReads(Op::Exp).r && !adjointReads(Op::Exp).a);
  EXPECT_TRUE(adjointReads(Op::Div).b && adjointReads(Op::Div).r && !adjointReads(Op::Div).a);
  EXPECT_TRUE(adjointReads(Op::Max).a && adjointReads(Op::Max).b);
  // Select reads its condition for both routes, and nothing of b or c; comparisons read nothing.
  EXPECT_TRUE(adjointReads(Op::Select).a && !adjointReads(Op::Select).b && !adjointReads(Op::Select).c);
  EXPECT_TRUE(!adjointReads(Op::Lt).a && !adjointReads(Op::Lt).b && !adjointReads(Op::Lt).r);
  EXPECT_TRUE(adjointReads(Op::Pow).a && adjointReads(Op::Pow).b && adjointReads(Op::Pow).r);
  EXPECT_TRUE(adjointReads(Op::Tanh).r && !adjointReads(Op::Tanh).a);
  EXPECT_EQ(kOpCount, 19);
  for (const OpInfo& o : kOps) EXPECT_EQ(opFromName(o.name), o.op) << o.name;
  EXPECT_FALSE(opFromName("erf").has_value());
}
