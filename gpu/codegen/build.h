// The build pass: the kernel IR (ir.h) from the tape, the kernel's options and what the earlier passes
// decided (storage.h, planner/schedule.h, recompute.h, draw_keys.h). Internal to gpu/codegen.
//
// It writes the kernel's statements in the order they run: the lane loop and its path guard, the sweeps
// of the kernel's kind (build_forward.cpp: plain, tangent, a checkpointed kernel's forward sweep and the
// prefill loop; build_reverse.cpp: the reverse sweep's blocks), the Kahan sums and the workgroup's
// reduction (build_kernel.cpp). Names come from names.h, which follows the storage plan; draws are read
// through names the draws pass (draws.h) declares afterwards.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "planner/closed_forms.h"
#include "gpu/codegen/dialect.h"
#include "gpu/codegen/draw_keys.h"
#include "gpu/codegen/ir.h"
#include "gpu/codegen/names.h"
#include "gpu/codegen/recompute.h"
#include "gpu/codegen/rolling.h"
#include "gpu/codegen/storage.h"
#include "planner/schedule.h"
#include "tape/tape.h"

namespace tapelab {

// What the passes before the build decided.
struct KernelAnalyses {
  const StoragePlan* storage = nullptr;
  const Schedule* schedule = nullptr;        // checkpointed kinds with Greeks
  const RecomputeLists* recompute = nullptr;  // likewise
  const DrawLoadKeys* drawKeys = nullptr;
  const RolledLoop* rolling = nullptr;
  const ClosedForms* closed = nullptr;       // tangent kernels: the tangents spelled value / x
  const RolledSegments* segments = nullptr;  // register kernels: the segments written once and run
  std::vector<std::string> unused;  // the config fields that had no effect, each with why (the header's)
};

ir::KernelIR buildKernel(const Tape& tape, const KernelOptions& options, const Dialect& dialect,
                         const KernelAnalyses& analyses);

namespace build {

using Stmts = std::vector<ir::Stmt>;

// The builder's state and the helpers its three files share.
class Builder : public Names {
 public:
  Builder(const Tape& tape, const KernelOptions& options, const Dialect& dialect, const KernelAnalyses& a);

  ir::KernelIR build();

 private:
  // ---- build_kernel.cpp: the frame, the lane loop, the sums and the reduction
  std::vector<std::string> header() const;
  Stmts body();
  void addToKahanSums(Stmts& out) const;
  void reduceWorkgroup(Stmts& out) const;

  // ---- build_forward.cpp
  void plainPath(Stmts& out);
  void tangentPath(Stmts& out);
  // Nodes [from, to) of a forward-only sweep, each followed by its tangents where `tangents`.
  void forwardNodes(int32_t from, int32_t to, bool tangents, Stmts& out) const;
  // The forward-only sweep with its time loop rolled (rolling.h).
  void rolledForward(bool tangents, Stmts& out);
  std::string carriedName(int32_t offset, int market, int32_t slot = -1) const;
  void checkpointedForward(Stmts& out);
  ir::Stmt forwardSegment(int s) const;
  ir::Stmt forwardSegment(int s, int32_t begin, int32_t end) const;
  void prefillDraws(Stmts& out) const;
  ir::E prefillKey(int segment, Stmts& out) const;
  ir::E tangentExpr(int32_t i, int32_t slot, int market) const;
  std::string tangentName(int32_t j, int32_t slot, int market) const;
  // The tangent slots node i carries in a variable (its slots less the closed forms, planner/closed_forms.h).
  std::vector<int32_t> carriedSlots(int32_t i) const;
  // Node j's tangent in `slot`, market m: its variable, or value * (1 / x) where it has a closed form.
  ir::E tangentRef(int32_t j, int32_t slot, int market) const;
  std::string inverseName(int32_t slot, int market) const;  // 1 / x of the slot's input, per market
  void declareInverses(Stmts& out) const;

  // ---- build_rolled.cpp: a register kernel's rolled segments (rolling.h)
  void rolledSegmentsForward(Stmts& out);
  void rolledSegmentsReverse(Stmts& out);
  void rolledSegmentsForwardMarkets(Stmts& out);  // several markets: the bookmarks' rows
  void rolledSegmentsReverseMarkets(Stmts& out);
  // Row `trip` (or the constant row tripConst where trip is null) of the bookmarks (tl_bm) or of the crossing
  // adjoints (tl_dbm, by parity), carried value c, market m's element.
  ir::E rolledRow(const ir::E& trip, int64_t tripConst, size_t c, Markets m, bool adjoints) const;
  void rolledCrossingsAfter();   // the reverse sweep's blocks after the rolled ones: their crossing values and adjoints
  void rolledCrossingsBefore();  // the blocks before: the first trip's crossing adjoints as the loop left them
  // 0: j is no rolled crossing value; m >= 1: the crossing value into rolled trip m (m = trips: after the loop);
  // -1: into the first trip (the template's: a persistent value of the segment before).
  int rolledCrossing(int32_t j) const;
  ir::E drawSlot(int slot) const;  // a stored draw's slot, shifted by the trip in a rolled segment
  std::string carriedValue(size_t c) const { return "vc" + std::to_string(c); }
  std::string carriedAdjoint(size_t c) const { return "dc" + std::to_string(c); }

  // ---- build_reverse.cpp
  void reverseSweep(Stmts& out);
  void reverseBlock(const ScheduleBlock& b, const std::string& label, Stmts& out);
  void recompute(const ScheduleBlock& b, const std::vector<uint8_t>& needed, int32_t to, const std::string& prefix,
                 const ir::E& key, Markets which, Stmts& out) const;
  void declareAdjoints(const ScheduleBlock& b, Markets only, Stmts& out) const;
  std::vector<int32_t> adjointsFirstWrittenIn(const ScheduleBlock& b) const;

  // ---- shared (build_kernel.cpp)
  ir::E literal(double v) const { return ir::lit(v); }
  ir::E opq(ir::E x, ir::E key) const { return ir::call("tl_opq", {std::move(x), std::move(key)}); }
  ir::E fence(ir::E x, bool on) const { return on ? opq(std::move(x), zeroKey()) : x; }
  ir::E adjointSeed(int32_t j) const { return literal(j == tape_.output ? 1.0 : 0.0); }
  // ops.def's rule `text` for node i, market m: values under `prefix`, d the node's adjoint (or `d`).
  ir::E spellRule(std::string_view text, int32_t i, Markets m, const std::string& prefix, ir::E d = nullptr) const;
  ir::E forwardExpr(int32_t i, Markets m, const std::string& prefix) const;
  // Node i's copy m under `prefix`, declared (a T) or assigned (a persistent value the forward sweep sets).
  ir::Stmt define(bool declare, const std::string& prefix, int32_t i, Markets m, ir::E value) const;
  // Declares the scalar a name expression names (a Var).
  ir::Stmt declareAdjoint(const ir::E& name, ir::E init) const;  // a scalar, marked for the first-terms pass
  // The reverse rule of node i: its contributions to a, b, c's adjoints, every market or `only`.
  void reverseRule(int32_t i, const std::string& prefix, Markets only, Stmts& out) const;
  ir::Stmt marketLoop(Stmts body) const;
  bool tangent() const { return options_.kind == KernelKind::Tangent && options_.greeks; }
  bool prefilled(int32_t i) const { return s_.prefill && s_.nodes[i].drawSlot >= 0; }

  const Tape& tape_;
  const KernelOptions& options_;
  const Dialect& dialect_;
  const KernelConfig& config_;
  const StoragePlan& s_;
  const KernelAnalyses& a_;
  int workgroupSize_;
  int markets_;
  int sumsPerMarket_ = 1;   // the ABI's width: 1 + numInputs with Greeks, else 1
  bool checkpointed_ = false;
  bool sequential_ = false;  // MarketOrder::Sequential in effect: leaf blocks reverse one market at a time
  int blockKeys_ = 0;        // opaque keys of nested blocks made so far
  int64_t drawShift_ = 0;    // a rolled loop's body: subtracted from its template's draw indices
  bool stepDraws_ = false;   // a one-step trip's body (loop_trip=step): draws read by drawStepName
  ir::E drawBase_;           // a rolled segment's body: the Philox calls its draws are shifted by (null: none)
  ir::E slotBase_;           // a rolled segment's body: the stored-draw slots they are shifted by (null: none)
  size_t nextBlock_ = 0;     // the next entry of the recompute lists (forEachBlock order)
};

}  // namespace build
}  // namespace tapelab
