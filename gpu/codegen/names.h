// How a kernel names what its storage plan placed; internal to gpu/codegen (the build pass).
//
// Names turns a place of the StoragePlan (storage.h) into an IR expression: a value or adjoint in one
// market (v17, v17_3, v17[tl_m], d17_3, ds2[tl_m]), a scratch slot's address, a Kahan cell. It decides
// nothing: each branch below follows a place the plan chose.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/codegen/ir.h"
#include "gpu/codegen/storage.h"

namespace tapelab {

// Which markets' copies a builder handles: every copy, only the values no market owns (one copy:
// draws, constants), market `market`'s, or the market loop's current one (tl_m, config markets=loop).
// A name is always of one copy: Kind::One or Kind::Loop.
struct Markets {
  enum class Kind { All, SharedOnly, One, Loop };
  Kind kind = Kind::All;
  int market = 0;  // Kind::One

  static Markets all() { return {Kind::All, 0}; }
  static Markets sharedOnly() { return {Kind::SharedOnly, 0}; }
  static Markets one(int m) { return {Kind::One, m}; }
  static Markets loop() { return {Kind::Loop, 0}; }
  bool single() const { return kind == Kind::One || kind == Kind::Loop; }
};

class Names {
 public:
  Names(const StoragePlan& plan, const KernelOptions& options, int workgroupSize)
      : plan_(plan), layout_(options.config.layout), opaque_(options.config.opaque), workgroupSize_(workgroupSize) {}

  // The opaque identity's key: the run-time `zero`, or a literal 0 when the experiment switches the
  // trick off (the compiler may then merge).
  ir::E zeroKey() const { return opaque_ ? ir::param("zero") : ir::ulit(0); }

  // The copies of value j that `which` selects, each as the one market it names (or the loop's).
  std::vector<Markets> copiesIn(int32_t j, Markets which) const {
    if (which.single()) return {which};
    std::vector<Markets> copies;
    for (int m = 0; m < plan_.nodes[j].copies; ++m) copies.push_back(Markets::one(m));
    return copies;
  }
  // The adjoint copies `which` selects: one per market (a value the markets share has one copy, its
  // adjoint one per market: the markets' outputs differ).
  std::vector<Markets> adjointCopiesIn(Markets which) const {
    if (which.single()) return {which};
    std::vector<Markets> copies;
    for (int m = 0; m < plan_.markets; ++m) copies.push_back(Markets::one(m));
    return copies;
  }
  bool perMarket(int32_t j) const { return plan_.nodes[j].copies > 1; }
  bool hasAdjoint(int32_t j) const { return plan_.nodes[j].adjoint != AdjointPlace::None; }
  static bool inArray(ValuePlace p) { return p == ValuePlace::LaneArray || p == ValuePlace::SharedArray; }

  // Copy m of value j under `prefix` ("v": the forward sweep's; "w", "w2_": a block's recompute; "k2_": a
  // block's bookmarks): v17, v17_3; the forward sweep's market arrays are indexed, v17[3] or v17[tl_m]; in
  // the market loop's body the other copies have no suffix (w17: this iteration's).
  std::string valueName(const std::string& prefix, int32_t j, Markets m) const {
    std::string s = baseName(prefix, j);
    if (!perMarket(j) || m.kind == Markets::Kind::Loop) return s;
    return s + "_" + std::to_string(m.market);
  }
  ir::E value(const std::string& prefix, int32_t j, Markets m) const {
    if (prefix == "v")
      if (const auto it = valueAt_.find(j); it != valueAt_.end()) return it->second(m);
    if (perMarket(j) && prefix == "v" && inArray(plan_.nodes[j].value))
      return ir::index(ir::var(baseName(prefix, j)), marketIndex(m));
    return ir::var(valueName(prefix, j, m));
  }
  ir::E adjoint(int32_t j, Markets m) const {
    if (const auto it = adjointAt_.find(j); it != adjointAt_.end()) return it->second(m);
    const std::string s = "d" + std::to_string(j);
    switch (plan_.nodes[j].adjoint) {
      case AdjointPlace::SharedArray:
        return ir::index(ir::var("ds" + std::to_string(plan_.nodes[j].adjointArray)), marketIndex(m));
      case AdjointPlace::LaneArray: return ir::index(ir::var(s), marketIndex(m));
      case AdjointPlace::MarketScalars:
        return ir::var(m.kind == Markets::Kind::Loop ? s : s + "_" + std::to_string(m.market));
      default: return ir::var(s);
    }
  }
  // The forward sweep's name of node j ("v17"), or the name a rolled loop gives it (its carried variable).
  std::string baseName(const std::string& prefix, int32_t j) const {
    if (prefix == "v")
      if (const auto it = renamed_.find(j); it != renamed_.end()) return it->second;
    return prefix + std::to_string(j);
  }
  // A rolled loop (rolling.h) reads node j, in the forward sweep, as the variable `name`.
  void rename(int32_t j, std::string name) { renamed_[j] = std::move(name); }
  // Rolled segments (rolling.h): node j's value in the forward sweep, and its adjoint, read as `at`, or as
  // `at(m)` for market m's copy (several markets: an element of the bookmarks' arrays).
  using At = std::function<ir::E(Markets)>;
  void readValueAt(int32_t j, ir::E at) {
    valueAt_[j] = [at](Markets) { return at; };
  }
  void readAdjointAt(int32_t j, ir::E at) {
    adjointAt_[j] = [at](Markets) { return at; };
  }
  void readValueAt(int32_t j, At at) { valueAt_[j] = std::move(at); }
  void readAdjointAt(int32_t j, At at) { adjointAt_[j] = std::move(at); }
  void clearRenames() {
    renamed_.clear();
    valueAt_.clear();
    adjointAt_.clear();
  }

  ir::E marketIndex(Markets m) const { return m.kind == Markets::Kind::Loop ? ir::var("tl_m") : ir::ilit(m.market); }

  // Scratch addresses of node j's copy for market m. A load's address is opaque (keyed by zero) so the
  // compiler cannot forward the stored value through a register. SoA addresses use tl_inv, `invocations`
  // made path-loop-variant: with the plain parameter every slot's address is loop-invariant, the compiler
  // hoists them all out of the path loop (one 64-bit address per slot, 191 at the 252-step Asian's seglen
  // 24) and spills them (nvcc sm_90: 96 registers + 2 KB stack; with tl_inv: 72 registers, no stack, as AoS).
  ir::E scratchStore(int32_t j, Markets m) const { return slotStore(copySlot(j, m)); }
  ir::E scratchLoad(int32_t j, Markets m) const { return slotLoad(copySlot(j, m)); }
  // Slot `slot` of this lane (SoA: through tl_inv, the invocations made loop-variant).
  ir::E slotStore(int slot) const { return slotStore(ir::ulit(slot)); }
  // The same for a slot given as a U expression (draws=prefill's loop: base + 4 * group + word).
  ir::E slotStore(const ir::E& slot) const {
    if (layout_ == ScratchLayout::AoS)
      return ir::bin(ir::bin(ir::var("tl_tid"), "*", ir::ulit(plan_.laneSlots())), "+", slot);
    return ir::bin(ir::bin(slot, "*", ir::var("tl_inv")), "+", ir::var("tl_tid"));
  }
  // `key`: a U that is 0 at run time (zeroKey(), or one the load must wait for: draws=prefill).
  ir::E slotLoad(int slot) const { return slotLoad(ir::ulit(slot), zeroKey()); }
  ir::E slotLoad(int slot, const ir::E& key) const { return slotLoad(ir::ulit(slot), key); }
  ir::E slotLoad(const ir::E& slot, const ir::E& key) const {
    if (layout_ == ScratchLayout::AoS)
      return ir::bin(ir::paren(ir::bin(ir::bin(ir::var("tl_tid"), "*", ir::ulit(plan_.laneSlots())), "+", slot)), "^", key);
    return ir::bin(ir::bin(slot, "*", ir::paren(ir::bin(ir::var("tl_inv"), "^", key))), "+", ir::var("tl_tid"));
  }
  ir::E scratchAt(const ir::E& address) const { return ir::index(ir::var("scratch"), address); }
  // Kahan cell i (sum i, at kahanSums + i its compensation) in local memory.
  ir::E kahanCell(int i) const {
    return ir::index(ir::var("tl_red"), ir::bin(ir::ulit(int64_t(i) * workgroupSize_), "+", ir::var("tl_lid")));
  }

 private:
  int copySlot(int32_t j, Markets m) const { return plan_.nodes[j].slot + (perMarket(j) ? m.market : 0); }

  const StoragePlan& plan_;
  std::unordered_map<int32_t, std::string> renamed_;
  std::unordered_map<int32_t, At> valueAt_, adjointAt_;
  ScratchLayout layout_;
  bool opaque_;
  int workgroupSize_;
};

}  // namespace tapelab
