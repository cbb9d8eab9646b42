// The GPU emitter's storage pass (gpu/codegen/storage.h) on its own: where each value and adjoint
// lives, the scratch slots, the Kahan sums, and the config fields reported unused; then that the
// printer declares what the table placed.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/codegen/emit.h"
#include "gpu/codegen/storage.h"
#include "planner/plan.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tests/common/test_util.h"

using namespace tapelab;

namespace {

// The 24-step Asian's register kernel over 3 window segments, markets as a loop.
KernelOptions asianLoop(const Tape& t, int markets) {
  KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 3, 0, ScratchLayout::SoA, markets);
  o.config.markets = MarketCode::Loop;
  return o;
}

int startingWith(const std::vector<std::string>& unused, const std::string& prefix) {
  return int(std::count_if(unused.begin(), unused.end(), [&](const std::string& u) { return u.rfind(prefix, 0) == 0; }));
}

}  // namespace

// markets=loop, 3 markets: the persistent values an input reaches are market arrays; those no draw
// reaches (the inputs, the drift and the volatility step) are shared by the workgroup in CUDA and
// HIP, which declare __shared__ in a body, and per lane in GLSL and OpenCL C; the rest are scalars.
TEST(CodegenStorage, MarketLoopArraysAreSharedWhereLaneInvariantAndTheDialectCan) {
  const Tape t = products::asianCall(24);
  const KernelOptions o = asianLoop(t, 3);
  const std::vector<uint8_t> input = dependsOnInput(t), draw = dependsOnDraw(t);
  for (const char* name : {"cuda", "hip", "glsl", "opencl"}) {
    const bool canShare = std::string(name) == "cuda" || std::string(name) == "hip";
    const StoragePlan s = planStorage(t, o, dialectByName(name), 64);
    ASSERT_TRUE(s.marketLoop) << name;
    EXPECT_EQ(s.sharedConstants, canShare) << name;
    EXPECT_EQ(startingWith(s.unused, "shared_constants"), 0) << name << ": in effect, or moot";
    int shared = 0, lane = 0;
    for (int32_t j = 0; j < t.size(); ++j) {
      const NodeStorage& n = s.nodes[j];
      if (!input[j]) {
        EXPECT_EQ(n.value, ValuePlace::Scalar) << name << ", node " << j;
        continue;
      }
      if (!o.plan.isPersistent[j]) {
        EXPECT_EQ(n.value, ValuePlace::MarketScalars) << name << ", node " << j;
        continue;
      }
      const ValuePlace expected = canShare && !draw[j] ? ValuePlace::SharedArray : ValuePlace::LaneArray;
      EXPECT_EQ(n.value, expected) << name << ", node " << j << (draw[j] ? " (a draw reaches it)" : "");
      (n.value == ValuePlace::SharedArray ? shared : lane) += 1;
    }
    EXPECT_EQ(shared, canShare ? t.numInputs() + 2 : 0) << name << ": the inputs, the drift and the volatility step";
    EXPECT_GE(lane, canShare ? 2 : t.numInputs() + 4) << name << ": the bookmarks";
  }
}

// The market loop over a flat plan: the persistent adjoints live in arrays shared where their lives
// do not overlap (fewer arrays than adjoints), each set by a segment; over a nested plan each keeps
// its own array.
TEST(CodegenStorage, MarketLoopAdjointsShareArraysOverAFlatPlanOnly) {
  const Tape t = products::asianCall(24);
  const std::vector<uint8_t> input = dependsOnInput(t);
  const KernelOptions flat = asianLoop(t, 3);
  const StoragePlan s = planStorage(t, flat, cudaDialect(), 64);
  int persistentAdjoints = 0;
  std::vector<int> setBy(t.size(), 0);
  for (const auto& set : s.adjointArraysSetIn)
    for (int32_t j : set) ++setBy[j];
  ASSERT_EQ(s.adjointArraysSetIn.size(), size_t(flat.plan.segments()));
  for (int32_t j : flat.plan.persistent) {
    if (!input[j]) continue;
    ++persistentAdjoints;
    EXPECT_EQ(s.nodes[j].adjoint, AdjointPlace::SharedArray) << "node " << j;
    EXPECT_GE(s.nodes[j].adjointArray, 0);
    EXPECT_LT(s.nodes[j].adjointArray, s.sharedAdjointArrays);
    EXPECT_EQ(setBy[j], 1) << "node " << j << ": set by exactly one segment";
  }
  EXPECT_LT(s.sharedAdjointArrays, persistentAdjoints) << "bookmarks should share";
  EXPECT_GT(s.sharedAdjointArrays, t.numInputs()) << "each input keeps its own array";

  KernelOptions nested = flat;
  PlanOptions po;
  po.segments = 3;
  nested.plan = makeStrategyPlan("two-level", t, po);
  ASSERT_TRUE(nested.plan.nested());
  const StoragePlan n = planStorage(t, nested, cudaDialect(), 64);
  EXPECT_EQ(n.sharedAdjointArrays, 0);
  EXPECT_TRUE(n.adjointArraysSetIn.empty());
  for (int32_t j : nested.plan.persistent)
    EXPECT_EQ(n.nodes[j].adjoint, input[j] ? AdjointPlace::LaneArray : AdjointPlace::None) << "node " << j;
}

// A plain kernel keeps everything in scalars: no arrays, no slots, no market loop (reported unused).
TEST(CodegenStorage, PlainKernelHasOnlyScalars) {
  const Tape t = products::asianCall(24);
  const std::vector<uint8_t> input = dependsOnInput(t);
  for (int markets : {1, 3}) {
    KernelOptions o = testutil::kindOptions(t, KernelKind::Plain, 1, 0, ScratchLayout::SoA, markets);
    o.config.markets = MarketCode::Loop;
    o.config.draws = DrawSource::Stored;
    const StoragePlan s = planStorage(t, o, cudaDialect(), 64);
    EXPECT_FALSE(s.marketLoop);
    EXPECT_FALSE(s.sharedConstants);
    EXPECT_EQ(s.laneSlots(), 0);
    EXPECT_EQ(s.sharedAdjointArrays, 0);
    for (int32_t j = 0; j < t.size(); ++j) {
      const NodeStorage& n = s.nodes[j];
      EXPECT_EQ(n.value, markets > 1 && input[j] ? ValuePlace::MarketScalars : ValuePlace::Scalar) << "node " << j;
      EXPECT_EQ(n.slot, -1);
      EXPECT_EQ(n.drawSlot, -1);
      const AdjointPlace adjoint = !input[j] ? AdjointPlace::None
                                   : markets > 1 ? AdjointPlace::MarketScalars
                                                 : AdjointPlace::Scalar;
      EXPECT_EQ(n.adjoint, adjoint) << "node " << j;
    }
    EXPECT_EQ(startingWith(s.unused, "markets=loop: not a register kernel"), 1) << markets << " market(s)";
    EXPECT_EQ(startingWith(s.unused, "draws=stored: not a checkpointed kernel"), 1) << markets << " market(s)";
  }
}

// draws=stored: one slot per draw, in draw-index order (the Asian draws 0, 1, 2, ... in node order), after the scratch kind's own slots (which hold
// each stored bookmark's copies contiguously, in the plan's storedAt order); a register kernel's
// draws start at slot 0; value-only kernels store nothing and say why.
TEST(CodegenStorage, StoredDrawsTakeOneSlotEachAfterTheScratchKindsSlots) {
  const Tape t = products::asianCall(24);
  int draws = 0;
  for (Op op : t.op) draws += op == Op::Randn;
  ASSERT_EQ(draws, 24);
  KernelOptions scratch = testutil::kindOptions(t, KernelKind::Scratch, 0, 30, ScratchLayout::SoA, 2);
  scratch.config.draws = DrawSource::Stored;
  const std::vector<uint8_t> input = dependsOnInput(t);
  const StoragePlan s = planStorage(t, scratch, openclDialect(), 64);
  int next = 0;
  for (const auto& stored : scratch.plan.storedAt)
    for (int32_t j : stored) {
      EXPECT_EQ(s.nodes[j].slot, next) << "node " << j;
      if (t.op[j] != Op::Randn) {
        EXPECT_EQ(s.nodes[j].value, ValuePlace::ScratchSlot) << "node " << j;
      }
      next += input[j] ? 2 : 1;
    }
  ASSERT_GT(next, 0);
  EXPECT_EQ(s.scratchSlots, next);
  EXPECT_EQ(s.drawSlots, draws);
  EXPECT_EQ(s.laneSlots(), next + draws);
  int drawSeen = 0;
  for (int32_t i = 0; i < t.size(); ++i) {
    if (t.op[i] != Op::Randn) {
      EXPECT_EQ(s.nodes[i].drawSlot, -1);
      continue;
    }
    EXPECT_EQ(s.nodes[i].value, ValuePlace::StoredDraw);
    EXPECT_EQ(s.nodes[i].drawSlot, next + drawSeen++) << "node " << i;
  }
  EXPECT_EQ(emitKernel(t, scratch, openclDialect()).scratchSlots, s.laneSlots());

  KernelOptions reg = testutil::kindOptions(t, KernelKind::Register, 3);
  reg.config.draws = DrawSource::Stored;
  const StoragePlan r = planStorage(t, reg, openclDialect(), 64);
  EXPECT_EQ(r.scratchSlots, 0);
  EXPECT_EQ(r.drawSlots, draws);
  EXPECT_EQ(r.nodes[std::find(t.op.begin(), t.op.end(), Op::Randn) - t.op.begin()].drawSlot, 0);

  reg.greeks = false;
  const StoragePlan v = planStorage(t, reg, openclDialect(), 64);
  EXPECT_EQ(v.drawSlots, 0);
  EXPECT_EQ(startingWith(v.unused, "draws=stored: value only"), 1);
}

// Draw indices that repeat and skip (a .tape file may draw any index, in any order): one slot per distinct
// index, in index order; nodes drawing the same index share it; draws=prefill in effect.
TEST(CodegenStorage, DrawSlotsArePerDrawIndexInIndexOrder) {
  Tape t = products::asianCall(8);
  const uint32_t indices[] = {3, 3, 0, 9, 9, 10, 11, 12};
  std::vector<int32_t> draws;
  for (int32_t i = 0; i < t.size(); ++i)
    if (t.op[i] == Op::Randn) draws.push_back(i);
  ASSERT_EQ(draws.size(), 8u);
  for (size_t k = 0; k < draws.size(); ++k) t.imm[draws[k]] = indices[k];
  KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 3);
  o.config.draws = DrawSource::Prefill;
  const StoragePlan s = planStorage(t, o, openclDialect(), 64);
  EXPECT_TRUE(s.prefill);
  EXPECT_EQ(s.drawSlots, 6);
  const std::vector<std::pair<uint32_t, int>> want{{0, 0}, {3, 1}, {9, 2}, {10, 3}, {11, 4}, {12, 5}};
  EXPECT_EQ(s.drawSlotOf, want);
  const int slotOfNode[] = {1, 1, 0, 2, 2, 3, 4, 5};
  for (size_t k = 0; k < draws.size(); ++k) EXPECT_EQ(s.nodes[draws[k]].drawSlot, slotOfNode[k]) << "draw " << k;
}

// prefill_ahead past the plan's segments (3: at most 2 ahead) keys no segment's loads, the kernel of
// prefill_ahead=2: said, not silent; 2 is not reported, nor is any N without draws=prefill twice.
TEST(CodegenStorage, PrefillAheadPastTheSegmentsIsReported) {
  const Tape t = products::asianCall(8);
  KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 3);
  ASSERT_EQ(o.plan.segments(), 3);
  o.config.draws = DrawSource::Prefill;
  o.config.prefillAhead = 2;
  EXPECT_EQ(startingWith(planStorage(t, o, openclDialect(), 64).unused, "prefill_ahead"), 0);
  o.config.prefillAhead = 3;
  const StoragePlan past = planStorage(t, o, openclDialect(), 64);
  ASSERT_EQ(startingWith(past.unused, "prefill_ahead"), 1);
  EXPECT_EQ(startingWith(past.unused, "prefill_ahead=3: 3 segments, so no segment's loads are keyed (the kernel of prefill_ahead=2)"), 1);
  o.config.draws = DrawSource::Redraw;
  const StoragePlan redraw = planStorage(t, o, openclDialect(), 64);
  EXPECT_EQ(startingWith(redraw.unused, "prefill_ahead=3: draws=prefill not in effect"), 1);
  EXPECT_EQ(startingWith(redraw.unused, "prefill_ahead"), 1);
}

// 8 markets in fp32: the Kahan sums take all 48 KiB of workgroup memory, so the lane-invariant arrays
// stay per lane and shared_constants is reported unused; 4 markets leave room for them.
TEST(CodegenStorage, EightMarketsInFp32DoNotFitSharedConstants) {
  const Tape t = products::asianCall(24);
  const StoragePlan eight = planStorage(t, asianLoop(t, 8), cudaDialect(), 64);
  EXPECT_TRUE(eight.kahanInLocal);
  EXPECT_EQ(size_t(2 * eight.kahanSums * 64 * 4), kMaxKahanLocalBytes) << "the sums alone fill it";
  EXPECT_FALSE(eight.sharedConstants);
  for (const NodeStorage& n : eight.nodes) EXPECT_NE(n.value, ValuePlace::SharedArray);
  EXPECT_EQ(startingWith(eight.unused, "shared_constants=on: "), 1);

  const StoragePlan four = planStorage(t, asianLoop(t, 4), cudaDialect(), 64);
  EXPECT_TRUE(four.sharedConstants);
  EXPECT_EQ(startingWith(four.unused, "shared_constants"), 0);
}

// sums=local where 2 * sums * workgroup * scalar bytes exceed 48 KiB: kept in registers, reduced 16
// at a time at most, and reported with the size; where they fit, every sum is reduced at once.
TEST(CodegenStorage, LocalSumsThatDoNotFitAreReportedUnused) {
  const Tape t = products::asianCall(24);
  KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 3, 0, ScratchLayout::SoA, 8, Precision::F64);
  ASSERT_EQ(o.config.sums, KahanPlace::Local);
  const StoragePlan big = planStorage(t, o, cudaDialect(), 64);
  EXPECT_EQ(big.kahanSums, 8 * 2 * (1 + t.numInputs()));
  EXPECT_FALSE(big.kahanInLocal);
  EXPECT_EQ(big.reductionSums, 16);
  EXPECT_EQ(big.localRows, 16);
  EXPECT_EQ(startingWith(big.unused, "sums=local: 96 KiB of sums exceed the 48 KiB"), 1);

  o.markets = 2;
  const StoragePlan small = planStorage(t, o, cudaDialect(), 64);
  EXPECT_TRUE(small.kahanInLocal);
  EXPECT_EQ(small.reductionSums, small.kahanSums);
  EXPECT_EQ(small.localRows, 2 * small.kahanSums);
  EXPECT_EQ(startingWith(small.unused, "sums=local"), 0);

  o.config.sums = KahanPlace::Registers;
  const StoragePlan registers = planStorage(t, o, cudaDialect(), 64);
  EXPECT_FALSE(registers.kahanInLocal);
  EXPECT_EQ(startingWith(registers.unused, "sums=local"), 0) << "not asked for";
}

// A value no input reaches is the same in every market: one copy, a scalar, no adjoint; in every
// kind, on tapes with inputs anywhere.
TEST(CodegenStorage, ValuesThatDependOnNoInputHaveOneCopy) {
  RandomTapeOptions ro;
  ro.nodes = 120;
  ro.inputs = 3;
  ro.draws = 8;
  ro.scatterInputs = true;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Tape t = randomTape(seed, ro);
    const std::vector<uint8_t> input = dependsOnInput(t);
    ASSERT_GT(std::count(input.begin(), input.end(), 0), 0) << "seed " << seed;
    for (KernelKind kind : {KernelKind::Plain, KernelKind::Tangent, KernelKind::Register, KernelKind::Scratch}) {
      KernelOptions o = testutil::kindOptions(t, kind, 3, 40, ScratchLayout::SoA, 3);
      if (kind == KernelKind::Register) o.config.markets = MarketCode::Loop;
      const StoragePlan s = planStorage(t, o, cudaDialect(), 64);
      for (int32_t j = 0; j < t.size(); ++j) {
        const NodeStorage& n = s.nodes[j];
        EXPECT_EQ(n.copies, input[j] ? 3 : 1) << "seed " << seed << ", " << toString(kind) << ", node " << j;
        if (input[j]) continue;
        EXPECT_TRUE(n.value == ValuePlace::Scalar || n.value == ValuePlace::ScratchSlot) << "node " << j;
        EXPECT_EQ(n.adjoint, AdjointPlace::None) << "node " << j;
      }
      if (kind == KernelKind::Tangent) {
        EXPECT_FALSE(s.tangents.of.empty());
        for (const NodeStorage& n : s.nodes) EXPECT_EQ(n.adjoint, AdjointPlace::None) << "no reverse sweep";
      }
    }
  }
}

// The printer declares what the table placed: the market arrays (__shared__ where SharedArray), the
// shared adjoint arrays, the lane's slots, and the unused fields.
TEST(CodegenStorage, PrinterDeclaresWhatThePlanPlaced) {
  const Tape t = products::asianCall(24);
  const KernelOptions o = asianLoop(t, 3);
  const StoragePlan s = planStorage(t, o, cudaDialect(), 64);
  const EmittedKernel k = emitKernel(t, o, cudaDialect());
  for (int32_t j = 0; j < t.size(); ++j) {
    const std::string decl = "float v" + std::to_string(j) + "[3];";
    const bool shared = k.source.find("__shared__ " + decl) != std::string::npos;
    const bool array = k.source.find(decl) != std::string::npos;
    EXPECT_EQ(shared, s.nodes[j].value == ValuePlace::SharedArray) << "node " << j;
    EXPECT_EQ(array, s.nodes[j].value == ValuePlace::SharedArray || s.nodes[j].value == ValuePlace::LaneArray)
        << "node " << j;
  }
  for (int a = 0; a < s.sharedAdjointArrays; ++a)
    EXPECT_NE(k.source.find("float ds" + std::to_string(a) + "[3];"), std::string::npos) << "ds" << a;
  EXPECT_EQ(k.source.find("float ds" + std::to_string(s.sharedAdjointArrays) + "["), std::string::npos);
  EXPECT_EQ(k.scratchSlots, s.laneSlots());
  EXPECT_EQ(k.configUnused, s.unused);
}

// A persistent value without a scratch slot (the output, not stored at a cut) is read from its
// register where a nested block of a scratch kernel imports it: here the output is read again later
// in its own segment. The printer once inferred "from the buffer" from the kernel kind and printed
// slot -1 (scratch[-1u * ...]: out of bounds, PoCL crashed).
TEST(CodegenStorage, ImportsWithoutAScratchSlotAreReadFromTheirRegister) {
  Tape t;
  const int32_t x = t.addInput("x", 1.5);
  const int32_t z = t.push(Op::Randn, -1, -1, 0);
  const int32_t a = t.push(Op::Mul, x, z);
  const int32_t out = t.push(Op::Add, a, x);
  const int32_t c = t.push(Op::Mul, out, x);  // reads the output, in the output's segment
  t.push(Op::Mul, t.push(Op::Add, c, a), out);
  t.output = out;
  CutTree tree;
  tree.cuts = {4};
  KernelOptions o;
  o.kind = KernelKind::Scratch;
  o.precision = Precision::F32;
  o.plan = makePlan(t, {0, 2, t.size()}, "edge", {CutTree{}, tree});
  const StoragePlan s = planStorage(t, o, openclDialect(), 64);
  EXPECT_EQ(s.nodes[out].slot, -1);
  EXPECT_EQ(s.nodes[z].value, ValuePlace::ScratchSlot) << "the draw crosses the cut";
  EXPECT_EQ(s.scratchSlots, 1);
  const std::string source = emitKernel(t, o, openclDialect()).source;
  EXPECT_EQ(source.find("-1u"), std::string::npos) << "a slot of -1";
  EXPECT_NE(source.find("w2_" + std::to_string(out) + " = tl_opq(v" + std::to_string(out) + ", "), std::string::npos);
}

// The pass checks what emitKernel documents, before it places anything.
TEST(CodegenStorage, RefusesWhatEmitKernelRefuses) {
  const Tape t = products::asianCall(4);
  KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 2);
  KernelOptions nine = o;
  nine.markets = 9;
  EXPECT_THROW(planStorage(t, nine, cudaDialect(), 64), std::invalid_argument);
  EXPECT_THROW(planStorage(t, o, cudaDialect(), 48), std::invalid_argument) << "not a power of two";
  KernelOptions fp64 = o;
  fp64.precision = Precision::F64;
  EXPECT_THROW(planStorage(t, fp64, glslDialect(), 64), std::invalid_argument);
  KernelOptions noPlan = o;
  noPlan.plan = Plan{};
  EXPECT_THROW(planStorage(t, noPlan, cudaDialect(), 64), std::invalid_argument);
}

// config workgroup: the kernel's workgroup in every dialect (its frame, the local reduction array, the
// block size) and in the storage plan's room for local sums: 8 markets of fp32 sums (96 sums and their
// compensations) fill 48 KiB exactly at 64 lanes a workgroup, and do not fit at 128.
TEST(CodegenStorage, WorkgroupFieldSizesTheKernelAndItsLocalSums) {
  const Tape t = products::asianCall(8);
  KernelOptions o = asianLoop(t, 8);
  o.precision = Precision::F32;
  o.config.sums = KahanPlace::Local;
  for (const char* name : {"glsl", "opencl", "cuda", "hip"}) {
    for (int wg : {32, 64, 128}) {
      o.config.workgroup = wg;
      const EmittedKernel k = emitKernel(t, o, dialectByName(name));
      EXPECT_EQ(k.workgroupSize, wg) << name;
      EXPECT_EQ(k.pathsPerGroup(), uint32_t(wg) * uint32_t(o.config.lanes)) << name;
      EXPECT_NE(k.source.find("workgroup=" + std::to_string(wg) + ","), std::string::npos) << name << ": the config line";
      const std::string frame = std::string(name) == "glsl" ? "local_size_x = " + std::to_string(wg)
                                : std::string(name) == "opencl" ? "reqd_work_group_size(" + std::to_string(wg)
                                                                 : "__launch_bounds__(" + std::to_string(wg);
      EXPECT_NE(k.source.find(frame), std::string::npos) << name << " " << wg << ": no '" << frame << "'";
    }
  }
  o.config.workgroup = 64;
  EXPECT_TRUE(planStorage(t, o, cudaDialect(), 64).kahanInLocal);
  o.config.workgroup = 128;
  EXPECT_FALSE(planStorage(t, o, cudaDialect(), 128).kahanInLocal);
  EXPECT_EQ(startingWith(emitKernel(t, o, cudaDialect()).configUnused, "sums=local: "), 1);
  KernelConfig c;
  EXPECT_THROW(findConfigField("workgroup")->set(c, "48", "workgroup"), std::invalid_argument);
  EXPECT_THROW(findConfigField("workgroup")->set(c, "512", "workgroup"), std::invalid_argument);
}

// config shared_inputs over a spot ladder (every input but spot shared): the values spot does not
// reach have one copy, the market loop's arrays hold only what spot reaches, every value an input
// reaches keeps one adjoint per market; the source names the shared inputs; off (or one market, or
// nothing shared) places what it always did (moot there: not listed unused).
TEST(CodegenStorage, SharedInputsGiveOneCopyOfWhatNoOtherInputReachesAndAdjointsPerMarket) {
  const Tape t = products::asianCall(24);
  KernelOptions o = asianLoop(t, 3);
  o.sharedInputs = {1, 2, 3, 4};  // strike, vol, rate, maturity
  const std::vector<uint8_t> input = dependsOnInput(t), spot = dependsOnInputOtherThan(t, o.sharedInputs);
  int shared = 0;
  for (const char* name : {"cuda", "glsl", "opencl"}) {
    const StoragePlan s = planStorage(t, o, dialectByName(name), 64);
    EXPECT_EQ(s.sharedInputs, o.sharedInputs) << name;
    EXPECT_EQ(startingWith(s.unused, "shared_inputs"), 0) << name;
    shared = 0;
    for (int32_t j = 0; j < t.size(); ++j) {
      const NodeStorage& n = s.nodes[j];
      EXPECT_EQ(n.copies, spot[j] ? 3 : 1) << name << ", node " << j;
      if (!spot[j]) {
        EXPECT_EQ(n.value, ValuePlace::Scalar) << name << ", node " << j;
      }
      EXPECT_EQ(n.adjoint != AdjointPlace::None, bool(input[j])) << name << ", node " << j;
      shared += input[j] && !spot[j];
    }
    const std::string source = emitKernel(t, o, dialectByName(name)).source;
    EXPECT_NE(source.find("// inputs every market shares, read once: strike vol rate maturity\n"), std::string::npos)
        << name;
    EXPECT_EQ(source.find("tl_in1_2"), std::string::npos) << name << ": market 1's vol is never read";
    EXPECT_NE(source.find("tl_in1_0 = inputs"), std::string::npos) << name << ": market 1's spot is";
  }
  // The step's exponential and what it reads: 3 a step (volatility step x draw, + drift, exp) and the setup.
  EXPECT_GE(shared, 3 * 24) << "values the markets share";
  KernelOptions off = o;
  off.config.sharedInputs = false;
  KernelOptions one = testutil::kindOptions(t, KernelKind::Register, 3, 0, ScratchLayout::SoA, 1);
  one.sharedInputs = {1, 2, 3, 4};
  KernelOptions none = asianLoop(t, 3);
  for (const auto& [options, why] : {std::pair{&off, "off"}, std::pair{&one, "one market"}, std::pair{&none, "nothing shared"}}) {
    const StoragePlan s = planStorage(t, *options, dialectByName("cuda"), 64);
    EXPECT_TRUE(s.sharedInputs.empty()) << why;
    for (int32_t j = 0; j < t.size(); ++j) EXPECT_EQ(s.nodes[j].copies, input[j] ? options->markets : 1) << why << j;
    EXPECT_EQ(startingWith(s.unused, "shared_inputs"), 0) << why << ": moot, not unhonoured";
  }
  KernelOptions bad = o;
  bad.sharedInputs = {2, 1};
  EXPECT_THROW(planStorage(t, bad, dialectByName("cuda"), 64), std::invalid_argument);
  bad.sharedInputs = {5};
  EXPECT_THROW(planStorage(t, bad, dialectByName("cuda"), 64), std::invalid_argument);
}
