// The GPU compiler's middle (issue 46): the passes run in order and each result is printable; the draws
// pass declares a Philox call and a Box-Muller pair once per scope, before its first reader; the liveness
// pass recomputes what the adjoint rules read; the printer spells a hand-built IR by its rules, and its
// files read no configuration, kernel kind or storage decision; no gpu/codegen file passes 450 lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/codegen/draws.h"
#include "gpu/codegen/emit.h"
#include "gpu/codegen/print.h"
#include "gpu/codegen/recompute.h"
#include "gpu/codegen/storage.h"
#include "planner/plan.h"
#include "planner/schedule.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/recorder.h"

using namespace tapelab;

namespace {

std::filesystem::path codegenDir() { return std::filesystem::path(TAPELAB_SOURCE_DIR) / "gpu" / "codegen"; }

std::string readText(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> passNames(const EmittedKernel& k) {
  std::vector<std::string> names;
  for (const auto& [name, text] : k.passes) names.push_back(name);
  return names;
}

KernelOptions registerKernel(const Tape& t, int segments) {
  KernelOptions o;
  o.precision = Precision::F32;
  o.kind = KernelKind::Register;
  PlanOptions po;
  po.segments = segments;
  o.plan = planWindow(t, po);
  return o;
}

}  // namespace

TEST(CodegenPasses, RunInOrderAndPrintWhatTheyDecided) {
  const Tape t = products::asianCall().record(16);
  KernelOptions o = registerKernel(t, 4);
  EmittedKernel k = emitKernel(t, o, cudaDialect());
  EXPECT_EQ(passNames(k), (std::vector<std::string>{"storage", "schedule", "recompute"}));
  for (const auto& [name, text] : k.passes) EXPECT_FALSE(text.empty()) << name;
  EXPECT_NE(passesText(k).find("== schedule\ndepth 1"), std::string::npos) << passesText(k);
  o.config.draws = DrawSource::Prefill;
  k = emitKernel(t, o, cudaDialect());
  EXPECT_EQ(passNames(k), (std::vector<std::string>{"storage", "schedule", "recompute", "draw keys"}));
  o.kind = KernelKind::Plain;
  EXPECT_EQ(passNames(emitKernel(t, o, cudaDialect())), (std::vector<std::string>{"storage"}));
}

TEST(CodegenPasses, DrawsAreDeclaredOncePerScopeBeforeTheirFirstReader) {
  ir::KernelIR k;
  std::vector<ir::Stmt> reads;
  for (int64_t draw : {1, 0, 5, 2}) reads.push_back(ir::readsDraw(ir::declareT("x" + std::to_string(draw), ir::lit(0)), draw));
  k.body.push_back(ir::drawScope("w", "tl_rk", reads));
  k.body.push_back(ir::drawScope("v", "tl_fk", {reads[3]}));
  scopeDraws(k);
  std::vector<std::string> names;
  for (const ir::Stmt& s : k.body[0].body) names.push_back(s.text);
  // Group 0 (draws 0..3) and its pair of draws 0, 1 before x1; draw 0 shares that pair; group 1 and the
  // pair of draws 4, 5 before x5; draw 2's pair (2, 3) of group 0 before x2.
  EXPECT_EQ(names, (std::vector<std::string>{"wg0", "wg0n0", "x1", "x0", "wg1", "wg1n0", "x5", "wg0n1", "x2"}));
  EXPECT_EQ(k.body[1].body.size(), 3u);  // a new scope computes its own
  EXPECT_EQ(drawPairName("w", 6), "wg1n1");
  ir::KernelIR outside;
  outside.body.push_back(ir::readsDraw(ir::declareT("x", ir::lit(0)), 0));
  EXPECT_THROW(scopeDraws(outside), std::logic_error);
}

TEST(CodegenPasses, LivenessRecomputesWhatTheAdjointRulesRead) {
  Recorder rec;
  Var x = rec.input("x", 2.0), y = rec.input("y", 3.0);
  Var a = x * y, b = a + y, c = exp(b), e = c * x;  // nodes 2..5
  rec.output(e + a);
  const Tape t = rec.finish();
  KernelOptions o;
  o.kind = KernelKind::Register;
  o.plan = makePlan(t, {0, 4, t.size()}, "test");
  const StoragePlan storage = planStorage(t, o, cudaDialect(), 64);
  const Schedule schedule = lowerPlan(t, o.plan);
  const RecomputeLists lists = recomputeLists(t, schedule, storage);
  ASSERT_EQ(lists.blocks.size(), 2u);
  const BlockRecompute& last = lists.blocks[0];  // [4, 7): exp's rule reads its result, mul reads c and x
  EXPECT_EQ(last.from, 4);
  EXPECT_TRUE(last.needed[4]);  // exp's r
  EXPECT_TRUE(last.needed[3]);  // what computing it reads (b, imported)
  EXPECT_FALSE(last.needed[6]);  // the output's add reads neither argument's value
  const BlockRecompute& first = lists.blocks[1];  // [0, 4): mul reads x and y, add reads nothing
  EXPECT_TRUE(first.needed[0] && first.needed[1]);
  EXPECT_FALSE(first.needed[3]);
  EXPECT_NE(toText(lists).find("block 0: [4, 7) recomputes"), std::string::npos) << toText(lists);
}

TEST(CodegenPrinter, SpellsEachNodeByItsRule) {
  ir::KernelIR k;
  k.body.push_back(ir::declareT("a", ir::lit(0.5)));
  k.body.push_back(ir::loop(ir::Type::Int, "i", ir::ilit(0), ir::bin(ir::var("i"), "<", ir::ilit(3)),
                            ir::prefix("++", ir::var("i")), true, "rolled",
                            {ir::addAssign(ir::var("a"), ir::fn("exp", {ir::var("a")}))}));
  k.body.push_back(ir::kahan(ir::var("s"), ir::var("c"), ir::var("a"), false));
  const std::string cuda = printKernel(k, cudaDialect()), glsl = printKernel(k, glslDialect());
  EXPECT_NE(cuda.find("  float a = 0.5f;\n  #pragma unroll 1\n  for (int i = 0; i < 3; ++i) {  // rolled\n    a += expf(a);\n  }\n"),
            std::string::npos) << cuda;
  EXPECT_NE(glsl.find("  precise float a = 0.5;\n  [[dont_unroll]] for (int i = 0; i < 3; ++i) {  // rolled\n    a += exp(a);\n"),
            std::string::npos) << glsl;
  EXPECT_NE(cuda.find("{ float y = a - c; float t = s + y; c = (t - s) - y; s = t; }"), std::string::npos) << cuda;
}

// The printer reads the IR and the dialect only: no configuration field, kernel kind or storage plan.
TEST(CodegenPrinter, ReadsNoConfigurationKindOrStorage) {
  for (const char* file : {"print.h", "print.cpp", "ir.h", "ir.cpp", "dialect.h"}) {
    const std::string text = readText(codegenDir() / file);
    ASSERT_FALSE(text.empty()) << file;
    for (const char* banned : {"KernelConfig", "KernelKind", "KernelOptions", "config.h", "storage.h", "StoragePlan", "config_"})
      EXPECT_EQ(text.find(banned), std::string::npos) << file << " mentions " << banned;
  }
}

TEST(CodegenPrinter, NoCodegenFileIsOver450Lines) {
  for (const auto& entry : std::filesystem::directory_iterator(codegenDir())) {
    const std::string text = readText(entry.path());
    const long lines = std::count(text.begin(), text.end(), '\n');
    EXPECT_LE(lines, 450) << entry.path().filename().string();
  }
}

// config loop_trip=step is either in effect (one step a trip) or said in the kernel's configUnused, never
// silently dropped: a register kernel, a loop whose trip of one step draws whole calls already (4 assets),
// and the Asian where it acts.
TEST(CodegenPasses, OneStepTripsAreInEffectOrSaid) {
  auto unused = [](const EmittedKernel& k) {
    std::string s;
    for (const std::string& u : k.configUnused) s += u + "\n";
    return s;
  };
  KernelOptions o;
  o.precision = Precision::F32;
  o.config.loopsRolled = o.config.loopTripStep = true;
  o.kind = KernelKind::Tangent;
  const Tape asian = products::byName("asian", {{"steps", 12}});
  const EmittedKernel stepped = emitKernel(asian, o, dialectByName("cuda"));
  EXPECT_NE(stepped.source.find("the time loop: 12 trips of 1 step(s)"), std::string::npos);
  EXPECT_EQ(unused(stepped).find("loop_trip"), std::string::npos) << unused(stepped);
  const Tape basket = products::byName("basket", {{"steps", 6}, {"assets", 4}});
  EXPECT_NE(unused(emitKernel(basket, o, dialectByName("cuda"))).find("loop_trip=step: a trip of one step draws whole"),
            std::string::npos);
  o.kind = KernelKind::Register;
  PlanOptions po;
  po.segments = 3;
  o.plan = makeStrategyPlan("window", asian, po);
  EXPECT_NE(unused(emitKernel(asian, o, dialectByName("cuda"))).find("loop_trip=step: the time loop of forward-only"),
            std::string::npos);
}
