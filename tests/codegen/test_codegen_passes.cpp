// The GPU compiler's middle (issue 46): the passes run in order and each result is printable; the draws
// pass declares a Philox call and a Box-Muller pair once per scope, before its first reader; the liveness
// pass recomputes what the adjoint rules read; the printer spells a hand-built IR by its rules, and its
// files read no configuration, kernel kind or storage decision; no gpu/codegen file passes 450 lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/codegen/draws.h"
#include "gpu/codegen/first_terms.h"
#include "gpu/codegen/loads_ahead.h"
#include "gpu/codegen/emit.h"
#include "gpu/codegen/print.h"
#include "gpu/codegen/recompute.h"
#include "gpu/codegen/storage.h"
#include "gpu/codegen/workgroup_rows.h"
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
  EXPECT_EQ(passNames(k), (std::vector<std::string>{"storage", "schedule", "recompute", "first terms"}));
  for (const auto& [name, text] : k.passes) EXPECT_FALSE(text.empty()) << name;
  EXPECT_NE(passesText(k).find("== schedule\ndepth 1"), std::string::npos) << passesText(k);
  o.config.draws = DrawSource::Prefill;
  k = emitKernel(t, o, cudaDialect());
  EXPECT_EQ(passNames(k), (std::vector<std::string>{"storage", "schedule", "recompute", "draw keys", "first terms"}));
  o.kind = KernelKind::Plain;
  EXPECT_EQ(passNames(emitKernel(t, o, cudaDialect())), (std::vector<std::string>{"storage", "first terms"}));
  o.greeks = false;
  const EmittedKernel valueOnly = emitKernel(t, o, cudaDialect());
  EXPECT_EQ(passNames(valueOnly), (std::vector<std::string>{"storage"}));
  // A rewrite with nothing to rewrite says so, in the kernel's stats and its header.
  auto says = [](const EmittedKernel& k, const std::string& what) {
    const bool listed = std::any_of(k.configUnused.begin(), k.configUnused.end(),
                                    [&](const std::string& u) { return u.rfind(what, 0) == 0; });
    return listed && k.source.find("// config unused: " + what) != std::string::npos;
  };
  EXPECT_TRUE(says(valueOnly, "first_terms=set: no adjoints"));
  o = registerKernel(t, 4);
  o.config.loadsAhead = AheadLoads::Markets;  // one market: no market loop
  const EmittedKernel oneMarket = emitKernel(t, o, cudaDialect());
  EXPECT_TRUE(says(oneMarket, "loads_ahead=on: no rolled loop reads an array it does not write"));
  EXPECT_FALSE(says(oneMarket, "first_terms")) << "a register kernel with Greeks has adjoints";
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

// The first-terms pass: a zero adjoint whose next mention in its list is `d += t` is declared with t there;
// one read first, one whose first term is in a nested block, one added to itself and a forward value keep zero.
TEST(CodegenPasses, FirstTermsDeclareAnAdjointWithItsFirstTerm) {
  using namespace ir;
  auto zeroAdjoint = [](const std::string& name) {
    Stmt s = declareT(name, lit(0));
    s.adjoint = true;
    return s;
  };
  KernelIR k;
  k.body = {zeroAdjoint("d1"), zeroAdjoint("d2"), zeroAdjoint("d3"), zeroAdjoint("d4"), declareT("v5", lit(0)),
            comment("between"),
            addAssign(var("d1"), bin(var("x"), "*", var("y"))),   // set: d1 = x * y
            addAssign(var("d1"), var("z")),                       // a second term stays an addition
            assign(var("u"), var("d2")),                          // d2 read before any term: kept
            addAssign(var("d2"), var("z")),
            block("nested", {addAssign(var("d3"), var("z"))}),  // d3's first term in a nested block: kept
            addAssign(var("d4"), bin(var("d4"), "*", var("z"))),  // reads itself: kept
            addAssign(var("v5"), var("z"))};                      // not an adjoint: kept
  const FirstTerms n = setFirstTerms(k);
  EXPECT_EQ(n.set, 1);
  EXPECT_EQ(n.kept, 3);
  std::vector<std::string> shape;
  for (const Stmt& s : k.body) shape.push_back(std::to_string(static_cast<int>(s.kind)) + ":" + s.text);
  const std::string declare = std::to_string(static_cast<int>(Stmt::Kind::Declare)) + ":";
  EXPECT_EQ(shape[0], declare + "d2") << "d1's zero declaration is gone";
  ASSERT_EQ(k.body.size(), 12u);
  const Stmt& d1 = k.body[5];
  EXPECT_EQ(d1.kind, Stmt::Kind::Declare);
  EXPECT_EQ(d1.text, "d1");
  EXPECT_TRUE(d1.adjoint && d1.precise);
  ASSERT_TRUE(d1.init && d1.init->kind == Expr::Kind::Binary);
  EXPECT_EQ(k.body[6].kind, Stmt::Kind::AddAssign);
  EXPECT_EQ(toText(n), "1 adjoints declared with their first term, 3 kept at zero (a first term in a nested block, or none)\n");
}

// An adjoint array's element a market loop's body sets to zero (`A[own + m] = 0`, marked adjoint by the build)
// takes its first addition instead, past statements that mention the array at other indices (other elements
// there: the build's rows); a read of the element itself, a first addition in a nested block or one that reads
// the element keeps the zero, and an assignment the build did not mark is never touched.
TEST(CodegenPasses, FirstTermsSetAnAdjointArraysElementWithItsFirstTerm) {
  using namespace ir;
  const E m = castUint(var("m"));
  auto at = [&](const char* array, int64_t row) { return index(var(array), bin(ulit(row), "+", m)); };
  auto zero = [](E element, bool adjoint) {
    Stmt s = assign(std::move(element), lit(0));
    s.adjoint = adjoint;
    return s;
  };
  KernelIR k;
  k.body = {zero(at("A", 0), true), zero(at("A", 7), true), zero(at("B", 0), true), zero(at("C", 0), true),
            zero(at("D", 0), false),
            declareT("x", at("A", 14)),                        // the later row: another element
            addAssign(at("A", 14), var("x")),                  // written too: still another element
            addAssign(at("A", 0), bin(var("x"), "*", var("y"))),  // A[0 + m] = x * y, its zero gone
            addAssign(at("A", 0), var("z")),                   // a second term stays an addition
            declareT("u", at("A", 7)),                         // A[7 + m] read first: kept
            addAssign(at("A", 7), var("z")),
            block("nested", {addAssign(at("B", 0), var("z"))}),  // in a nested block: kept
            addAssign(at("C", 0), at("C", 0)),                 // reads itself: kept
            addAssign(at("D", 0), var("z"))};                  // not marked: kept
  const FirstTerms n = setFirstTerms(k);
  EXPECT_EQ(n.set, 1);
  EXPECT_EQ(n.kept, 3);
  ASSERT_EQ(k.body.size(), 13u);
  EXPECT_EQ(k.body[0].kind, Stmt::Kind::Assign);  // A[7 + m]'s zero, first now
  EXPECT_TRUE(k.body[0].adjoint);
  const Stmt& first = k.body[6];
  EXPECT_EQ(first.kind, Stmt::Kind::Assign) << "A[0 + m] += x * y became A[0 + m] = x * y";
  ASSERT_TRUE(first.value && first.value->kind == Expr::Kind::Binary);
  EXPECT_EQ(k.body[7].kind, Stmt::Kind::AddAssign);
  EXPECT_EQ(k.body[12].kind, Stmt::Kind::AddAssign) << "D's addition is not the build's: kept";
}

// loads_ahead=rows: an array the market loop writes only at its own elements (every index k + m, k a provable
// multiple of the markets: the build's rows) is read a market ahead too while this trip has not written it yet: a declaration
// reading an element, and an element's first addition (`A[i] += t` becomes `A[i] = ahead + (t)`); after the
// trip's first write to the array, a repeated element, an index whose offset is not a multiple (another
// market's element), and an offset of a name (not provably a multiple), the reads stay in place.
TEST(CodegenPasses, LoadsAheadRotateOwnElementsBeforeTheTripWritesThem) {
  using namespace ir;
  const E m = castUint(var("m"));
  auto at = [&](const char* array, E k) { return index(var(array), bin(std::move(k), "+", m)); };
  KernelIR k;
  k.body = {declare(Type::Uint, "par", ulit(1)), declare(Type::Uint, "row", ulit(14)),
            loop(Type::Int, "m", ilit(0), bin(var("m"), "<", ilit(7)), prefix("++", var("m")), true, "markets",
                 {declareT("p", at("acc", bin(paren(var("par")), "*", ulit(14)))),  // rotated
                  addAssign(at("acc", ulit(7)), var("p")),                          // rotated: = ahead + (p)
                  addAssign(at("acc", ulit(7)), var("q")),                          // after a write: in place
                  declareT("r", at("acc", ulit(21))),                               // after a write: in place
                  declareT("s", at("nxt", ulit(0))), assign(at("nxt", ulit(1)), var("s")),  // offset 1: not own
                  declareT("t", at("byrow", var("row"))), assign(at("byrow", var("row")), var("t"))})};  // a name
  KernelIR markets = k;
  EXPECT_EQ(loadAhead(markets, false).reads, 0) << "loads_ahead=on: arrays the loop writes are read in place";
  const LoadsAhead n = loadAhead(k, false, true);
  EXPECT_EQ(n.reads, 2);
  EXPECT_EQ(n.ownReads, 2);
  const std::vector<Stmt>& body = k.body.back().body;
  ASSERT_EQ(body.size(), 10u);
  EXPECT_EQ(body[0].init->kind, Expr::Kind::Var) << "p reads the element loaded a market ahead";
  EXPECT_EQ(body[1].kind, Stmt::Kind::Assign) << "its next market's element";
  EXPECT_EQ(body[2].kind, Stmt::Kind::Assign) << "acc[7 + m] += p became acc[7 + m] = ahead + (p)";
  ASSERT_EQ(body[2].value->kind, Expr::Kind::Binary);
  EXPECT_EQ(body[2].value->args[0]->kind, Expr::Kind::Var);
  EXPECT_EQ(body[4].kind, Stmt::Kind::AddAssign) << "the second addition, after the trip's write";
  EXPECT_EQ(body[5].init->kind, Expr::Kind::Index) << "a read after the trip wrote the array";
  EXPECT_EQ(body[6].init->kind, Expr::Kind::Index) << "nxt is written at another market's element";
  EXPECT_EQ(body[8].init->kind, Expr::Kind::Index) << "byrow's offset is a name, not provably a multiple";
}

// workgroup_rows=N: the per-lane arrays indexed by a variable move to workgroup memory, a column a lane
// (`A[(i) * workgroup + tl_lid]`), the most read and written per element first (each use counted the trips of
// the loops around it), while a lane's elements stay within N and the workgroup's within 48 KiB; an array indexed
// only by literals (registers), one named whole, and one declared twice stay; one over either bound is said.
TEST(CodegenPasses, WorkgroupRowsMoveTheMostUsedIndexedArraysIntoAColumnALane) {
  using namespace ir;
  const E m = var("m");
  auto marketLoop = [](std::vector<Stmt> body) {
    return loop(Type::Int, "m", ilit(0), bin(var("m"), "<", ilit(7)), prefix("++", var("m")), true, "markets", std::move(body));
  };
  KernelIR k;
  k.workgroupSize = 32;
  k.body = {declareArray("hot", 7, false), declareArray("cold", 7, false), declareArray("big", 40, false),
            declareArray("lits", 7, false), declareArray("twice", 7, false), declareArray("twice", 7, false),
            declareArray("passed", 7, false),
            loop(Type::Uint, "t", ulit(0), bin(var("t"), "<", ulit(14)), prefix("++", var("t")), true, "trips",
                 {marketLoop({addAssign(index(var("hot"), m), lit(1)), addAssign(index(var("big"), bin(m, "+", ulit(7))), lit(1)),
                              addAssign(index(var("twice"), m), lit(1)), addAssign(index(var("passed"), m), lit(1))})}),
            marketLoop({assign(index(var("cold"), m), index(var("hot"), m))}),
            assign(index(var("lits"), ulit(3)), lit(2)), declareT("x", call("f", {var("passed")}))};
  KernelIR over = k;
  const WorkgroupRows rows = moveRowsToWorkgroup(k, 50, 4);
  ASSERT_EQ(rows.moved.size(), 2u) << toText(rows);
  EXPECT_EQ(rows.moved[0].first, "hot") << "14 x 7 + 7 uses of 7 elements before big's 14 x 7 of 40";
  EXPECT_EQ(rows.moved[1].first, "big");
  EXPECT_EQ(rows.elements, 47);
  EXPECT_EQ(rows.bytes, 47 * 32 * 4);
  ASSERT_EQ(rows.left.size(), 1u) << "cold: over 50 with the 47 before it";
  EXPECT_EQ(rows.left[0].rfind("cold (7 elements", 0), 0u) << rows.left[0];
  EXPECT_TRUE(k.body[0].shared);
  EXPECT_EQ(k.body[0].array, 7 * 32);
  EXPECT_TRUE(k.body[2].shared);
  for (size_t i : {1u, 3u, 4u, 6u}) EXPECT_FALSE(k.body[i].shared) << k.body[i].text;
  const std::string text = printKernel(k, cudaDialect());
  EXPECT_NE(text.find("__shared__ float hot[224];"), std::string::npos) << text;
  EXPECT_NE(text.find("hot[(m) * 32u + tl_lid] += 1.0f;"), std::string::npos) << text;
  EXPECT_NE(text.find("big[(m + 7u) * 32u + tl_lid] += 1.0f;"), std::string::npos) << text;
  EXPECT_NE(text.find("cold[m] = hot[(m) * 32u + tl_lid];"), std::string::npos) << text;
  EXPECT_NE(text.find("lits[3u] = 2.0f;"), std::string::npos) << text;
  EXPECT_NE(text.find("twice[m] += 1.0f;"), std::string::npos) << text;
  // N under every array's elements: none moves, each is said.
  KernelIR wide = over;
  const WorkgroupRows few = moveRowsToWorkgroup(over, 6, 4);
  EXPECT_TRUE(few.moved.empty()) << toText(few);
  EXPECT_EQ(few.left.size(), 3u) << toText(few);
  // Past the 48 KiB a kernel may declare (with tl_red's): big is left, the lighter cold after it still moves.
  wide.workgroupSize = 256;
  wide.reductionElements = 1024;
  const WorkgroupRows capped = moveRowsToWorkgroup(wide, 4096, 8);
  ASSERT_EQ(capped.moved.size(), 2u) << toText(capped);
  EXPECT_EQ(capped.moved[0].first, "hot");
  EXPECT_EQ(capped.moved[1].first, "cold");
  ASSERT_EQ(capped.left.size(), 1u) << toText(capped);
  EXPECT_NE(capped.left[0].find("big (40 elements: 104448 bytes of workgroup memory, over the 49152"), std::string::npos)
      << capped.left[0];
}

// The loads-ahead pass: in a rolled loop over m, a declaration reading A[row + m] of an array the loop does not
// write reads a variable loaded for m = 0 as early as allowed before the loop and, right after each read, for
// the next m (the last m its own); an array the loop writes, an index of a name the loop assigns, and a loop
// with a barrier are left as they are.
TEST(CodegenPasses, LoadsAheadRotateAnUnwrittenArraysReads) {
  using namespace ir;
  auto marketLoop = [](std::vector<Stmt> body) {
    return loop(Type::Int, "m", ilit(0), bin(var("m"), "<", ilit(7)), prefix("++", var("m")), true, "markets", std::move(body));
  };
  const E row = bin(var("row"), "+", castUint(var("m")));
  KernelIR k;
  k.body = {declare(Type::Uint, "row", ulit(14)),
            declareT("x", lit(1)),  // reads nothing of the load: the load goes before it
            marketLoop({declareT("a", bin(index(var("bm"), row), "*", var("x"))),          // loaded ahead
                        declareT("b", index(var("dbm"), row)), assign(index(var("dbm"), row), lit(0)),  // written
                        assign(var("j"), var("m")),                                                     // j assigned
                        declareT("c", index(var("bm"), bin(castUint(var("m")), "+", var("j"))))})};
  k.body.push_back(marketLoop({barrier(), declareT("e", index(var("bm"), row))}));
  std::vector<Stmt> trips;  // a rolled segments' loop: unsigned, its trip a constant of the variable
  trips.push_back(declare(Type::Uint, "sg", bin(ulit(3), "-", var("sr")), true));
  trips.push_back(block("segment", {declareT("w", index(var("scratch"), bin(var("sg"), "*", ulit(4))))}));
  k.body.push_back(loop(Type::Uint, "sr", ulit(0), bin(var("sr"), "<", ulit(4)), prefix("++", var("sr")), true, "trips", trips));
  KernelIR every = k;
  const LoadsAhead n = loadAhead(k, false);
  EXPECT_EQ(n.reads, 1);
  EXPECT_EQ(n.loops, 1);
  ASSERT_EQ(k.body.size(), 6u);
  EXPECT_EQ(k.body[5].body[1].body[0].init->kind, Expr::Kind::Index) << "loads_ahead=markets: a trip loop as it is";
  EXPECT_EQ(k.body[0].text, "row");
  EXPECT_EQ(k.body[1].text, "tl_ahead0") << "loaded as early as its reads allow: after row, before x";
  EXPECT_EQ(k.body[2].text, "x");
  const std::vector<Stmt>& body = k.body[3].body;
  ASSERT_EQ(body.size(), 6u);
  EXPECT_EQ(body[0].text, "a");
  ASSERT_EQ(body[0].init->args[0]->kind, Expr::Kind::Var);
  EXPECT_EQ(body[0].init->args[0]->name, "tl_ahead0");
  EXPECT_EQ(body[1].kind, Stmt::Kind::Assign) << "the next market's element, right after the read";
  EXPECT_EQ(body[2].init->args[0]->kind, Expr::Kind::Var) << "dbm, written in the loop, read in place";
  EXPECT_EQ(body[5].init->kind, Expr::Kind::Index) << "an index of a name the loop assigns, read in place";
  EXPECT_EQ(k.body[4].body[1].init->kind, Expr::Kind::Index) << "a loop with a barrier is left as it is";
  EXPECT_EQ(toText(n), "1 reads loaded one trip ahead in 1 loops (0 of arrays the loop writes at its own elements)\n");
  // loads_ahead=loops: the trip's read too, the first trip's element before the loop (sg = 3 - 0), the next
  // trip's after the read (sr + 1, the last trip its own), both through the constant's value.
  const LoadsAhead all = loadAhead(every, true);
  EXPECT_EQ(all.reads, 2);
  ASSERT_EQ(every.body.size(), 7u);
  EXPECT_EQ(every.body[5].text, "tl_ahead1") << "as early as allowed: not above the loop with a barrier";
  const std::vector<Stmt>& seg = every.body[6].body[1].body;
  ASSERT_EQ(seg.size(), 2u);
  EXPECT_EQ(seg[0].init->kind, Expr::Kind::Var);
  EXPECT_EQ(seg[1].kind, Stmt::Kind::Assign);
  std::set<std::string> names;
  std::function<void(const E&)> collect = [&](const E& e) {
    if (!e) return;
    if (e->kind == Expr::Kind::Var) names.insert(e->name);
    for (const E& a : e->args) collect(a);
  };
  collect(every.body[5].init);
  EXPECT_EQ(names, (std::set<std::string>{"scratch"})) << "the first trip's address: constants only";
  names.clear();
  collect(seg[1].value);
  EXPECT_EQ(names, (std::set<std::string>{"scratch", "sr"})) << "the next trip's: sg by its value of sr";
  std::function<bool(const E&)> clamped = [&](const E& e) {  // sr + 1 < 4 ? sr + 1 : 3, never past the last trip
    if (!e) return false;
    if (e->kind == Expr::Kind::Select)
      return e->args[0]->kind == Expr::Kind::Binary && e->args[0]->name == "<" && e->args[0]->args[1]->integer == 4 &&
             e->args[2]->kind == Expr::Kind::Uint && e->args[2]->integer == 3;
    return std::any_of(e->args.begin(), e->args.end(), clamped);
  };
  EXPECT_TRUE(clamped(seg[1].value)) << "the next trip's index is clamped to the last trip";
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

// The 24-step Asian's register kernel at 3 markets, fp32, its 6 periodic segments rolled around the market
// loop: the kernel the market-loop passes act on.
KernelOptions rolledRegisterAt3Markets(const Tape& asian) {
  KernelOptions o;
  o.precision = Precision::F32;
  o.kind = KernelKind::Register;
  o.markets = 3;
  o.config.loopsRolled = true;
  o.config.markets = MarketCode::Loop;
  PlanOptions po;
  po.segments = 6;
  o.plan = makeStrategyPlan("periodic", asian, po);
  return o;
}

// workgroup_rows on a real kernel: the 24-step Asian's register kernel at 3 markets (segments rolled around the
// market loop) moves its market-indexed arrays into workgroup memory and logs the pass, and at 0 it does not; on
// a kernel without an array indexed by a variable (the plain one at one market) the field is said unused.
TEST(CodegenPasses, WorkgroupRowsMoveARegisterKernelsRows) {
  const Tape asian = products::asianCall(24);
  KernelOptions o = rolledRegisterAt3Markets(asian);
  o.config.workgroupRows = 48;
  const EmittedKernel k = emitKernel(asian, o, cudaDialect());
  const std::vector<std::string> names = passNames(k);
  EXPECT_NE(std::find(names.begin(), names.end(), "workgroup rows"), names.end()) << k.source;
  EXPECT_NE(k.source.find("a column a lane"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find(" * 64u + tl_lid]"), std::string::npos) << k.source;
  o.config.workgroupRows = 0;
  EXPECT_EQ(emitKernel(asian, o, cudaDialect()).source.find("a column a lane"), std::string::npos);
  o.config.workgroupRows = 48;
  o.kind = KernelKind::Plain;
  o.markets = 1;
  o.plan = plainPlan(asian);
  const EmittedKernel plain = emitKernel(asian, o, cudaDialect());
  EXPECT_NE(plain.source.find("// config unused: workgroup_rows=48: no per-lane array is indexed by a variable"),
            std::string::npos) << plain.source.substr(0, 2000);
}

// market_unroll: the 24-step Asian's register kernel at 3 markets asks the compiler to unroll its market loops
// (#pragma unroll N, at most the market count) and keeps them rolled at 1; a kernel with no market loop (the
// plain one at one market) says the field unused. The same bits: Regressions.BitKeepingRewritesKeepTheBits.
TEST(CodegenPasses, MarketUnrollAsksTheCompilerToUnrollTheMarketLoops) {
  const Tape asian = products::asianCall(24);
  KernelOptions o = rolledRegisterAt3Markets(asian);
  const std::string rolled = emitKernel(asian, o, cudaDialect()).source;
  const size_t market = rolled.find("for (int tl_m = 0; tl_m < 3; ++tl_m) {");
  ASSERT_NE(market, std::string::npos) << rolled;
  const size_t line = rolled.rfind('\n', market - 1), before = rolled.rfind('\n', line - 1);
  const std::string previous = rolled.substr(before + 1, line - before - 1);  // the line before the loop
  EXPECT_EQ(previous.substr(previous.find_first_not_of(' ')), "#pragma unroll 1") << rolled;
  o.config.marketUnroll = 2;
  const std::string two = emitKernel(asian, o, cudaDialect()).source;
  EXPECT_NE(two.find("#pragma unroll 2\n"), std::string::npos) << two;
  EXPECT_EQ(two.find("config unused: market_unroll"), std::string::npos);
  o.config.marketUnroll = 64;  // at most the market count
  const std::string whole = emitKernel(asian, o, cudaDialect()).source;
  EXPECT_NE(whole.find("#pragma unroll 3\n"), std::string::npos) << whole;
  EXPECT_EQ(whole.find("#pragma unroll 64"), std::string::npos);
  o.config.marketUnroll = kUnrollWhole;  // whole: the market count
  const std::string named = emitKernel(asian, o, cudaDialect()).source;
  EXPECT_NE(named.find("#pragma unroll 3\n"), std::string::npos) << named;
  EXPECT_NE(named.find("market_unroll=whole"), std::string::npos) << named.substr(0, 2000);
  o.kind = KernelKind::Plain;
  o.markets = 1;
  o.plan = plainPlan(asian);
  const std::string plain = emitKernel(asian, o, cudaDialect()).source;
  EXPECT_NE(plain.find("// config unused: market_unroll=whole: the kernel has no market loop"), std::string::npos)
      << plain.substr(0, 2000);
}

// rolled_adjoints=copy on the same kernel: the crossing adjoints' rows fixed (no index by the trip's parity) and
// the own row copied into the later one in a market loop at each reverse trip's end; parity, the default, indexes
// them by `& 1u`. The same bits: Regressions.BitKeepingRewritesKeepTheBits.
TEST(CodegenPasses, RolledAdjointsCopyFixesTheRows) {
  const Tape asian = products::asianCall(24);
  KernelOptions o = rolledRegisterAt3Markets(asian);
  o.greeks = true;
  const std::string parity = emitKernel(asian, o, cudaDialect()).source;
  EXPECT_NE(parity.find("tl_dbm[((tl_sg + 1u) & 1u)"), std::string::npos) << parity;
  EXPECT_EQ(parity.find("the trip's own adjoint row"), std::string::npos);
  o.config.rolledAdjointsCopy = true;
  const std::string copy = emitKernel(asian, o, cudaDialect()).source;
  EXPECT_EQ(copy.find("& 1u) *"), std::string::npos) << copy;
  EXPECT_NE(copy.find("// the trip's own adjoint row, the trip before's later row"), std::string::npos) << copy;
  o.markets = 1;  // no market loop for the rows to cross
  EXPECT_NE(emitKernel(asian, o, cudaDialect()).source.find("config unused: rolled_adjoints=copy"), std::string::npos);
}

// loads_ahead=prefetch: a rolled segments' loop (unsigned) that reads the global buffer without writing it
// prefetches, first in each trip after its constants, the element the next trip reads (sr + 1, clamped to the
// last trip, declared once, through the constant's value); a loop that writes the buffer and a market loop (int) are left
// alone. Elements that are consecutive slots of the SoA scratch are prefetched by one statement, a slot a lane.
// Printed by CUDA as PTX's prefetch.L2 of the element's address, by OpenCL C as prefetch().
TEST(CodegenPasses, PrefetchFetchesTheNextTripsStoredReads) {
  using namespace ir;
  auto trips = [](std::string var, std::vector<Stmt> body) {
    return loop(Type::Uint, var, ulit(0), bin(ir::var(var), "<", ulit(4)), prefix("++", ir::var(var)), true, "trips",
                std::move(body));
  };
  const E read = index(var("scratch"), bin(var("sg"), "*", ulit(4)));
  KernelIR k;
  k.body.push_back(trips("sf", {assign(index(var("scratch"), var("sf")), lit(1))}));  // writes: left alone
  k.body.push_back(trips("sr", {declare(Type::Uint, "sg", bin(ulit(3), "-", var("sr")), true),
                                block("segment", {declareT("w", read), declareT("u", bin(read, "+", read))})}));
  k.body.push_back(loop(Type::Int, "m", ilit(0), bin(var("m"), "<", ilit(3)), prefix("++", var("m")), true, "markets",
                        {declareT("x", index(var("scratch"), castUint(var("m"))))}));
  const Prefetches n = prefetchAhead(k, "scratch");
  EXPECT_EQ(n.loops, 1);
  EXPECT_EQ(n.reads, 1) << "one element however often the trip reads it";
  EXPECT_EQ(toText(n), "1 elements prefetched a trip ahead in 1 rolled segments' loops (0 by one prefetch a lane)\n");
  EXPECT_EQ(k.body[0].body.size(), 1u);
  EXPECT_EQ(k.body[2].body.size(), 1u);
  const std::vector<Stmt>& body = k.body[1].body;
  ASSERT_EQ(body.size(), 4u);
  EXPECT_EQ(body[0].text, "sg") << "after the trip's constants";
  EXPECT_EQ(body[1].text, "tl_next0") << "the next trip once";
  ASSERT_EQ(body[2].kind, Stmt::Kind::Prefetch);
  EXPECT_EQ(body[3].kind, Stmt::Kind::Block);
  const std::string cuda = printKernel(k, cudaDialect()), opencl = printKernel(k, openclDialect());
  EXPECT_NE(cuda.find("const unsigned int tl_next0 = sr + 1u < 4u ? sr + 1u : 3u;"), std::string::npos) << cuda;
  const std::string next = "scratch[(3u - tl_next0) * 4u]";
  EXPECT_NE(cuda.find("asm volatile(\"prefetch.L2 [%0];\" :: \"l\"(&" + next + "));"), std::string::npos) << cuda;
  EXPECT_NE(opencl.find("prefetch(&" + next + ", 1);"), std::string::npos) << opencl;
  // On a real kernel: the 24-step Asian's register kernel at 3 markets prefetches its reverse trips' stored
  // draws on CUDA and OpenCL; HIP has no prefetch here and says so, and a kernel that draws again has nothing
  // stored to prefetch.
  const Tape asian = products::asianCall(24);
  KernelOptions o = rolledRegisterAt3Markets(asian);
  o.greeks = true;
  o.config.loadsAhead = AheadLoads::Prefetch;
  o.config.draws = DrawSource::Stored;
  // Its reverse trip's stored draws are consecutive slots of the SoA scratch: one prefetch a lane, a slot a lane
  // at the warp's first path.
  const std::string real = emitKernel(asian, o, cudaDialect()).source;
  const size_t first = real.find("prefetch.L2");
  ASSERT_NE(first, std::string::npos) << real;
  EXPECT_EQ(real.find("prefetch.L2", first + 1), std::string::npos) << "one prefetch a trip, not one a draw";
  EXPECT_NE(real.find("((tl_tid & 31u) % 4u)"), std::string::npos) << real;
  EXPECT_NE(real.find("(tl_tid & 4294967264u)]));"), std::string::npos) << real;
  EXPECT_NE(emitKernel(asian, o, openclDialect()).source.find("prefetch(&scratch["), std::string::npos);
  EXPECT_NE(emitKernel(asian, o, hipDialect()).source.find("config unused: loads_ahead=prefetch: hip has no prefetch"),
            std::string::npos);
  o.config.draws = DrawSource::Redraw;
  EXPECT_NE(emitKernel(asian, o, cudaDialect()).source.find("config unused: loads_ahead=prefetch: no rolled segments'"),
            std::string::npos);
}
