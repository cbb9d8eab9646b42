// How a kernel spells what its storage plan placed; internal to gpu/codegen (emit.cpp's printer).
//
// Names turns a place of the StoragePlan (storage.h) into text: a value or adjoint in one market
// (v17, v17_3, v17[tl_m], d17_3, ds2[tl_m]), a scratch slot's address, a Kahan cell. It decides
// nothing: each branch below follows a place the plan chose.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/codegen/emit.h"
#include "gpu/codegen/storage.h"

namespace tapelab {

// Which markets' copies the printer handles: every copy, only the values no market owns (one copy:
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
  Names(const StoragePlan& plan, const KernelOptions& options, const Dialect& dialect, int workgroupSize)
      : plan_(plan), layout_(options.layout), paramPrefix_(dialect.paramPrefix), opaque_(options.config.opaque),
        workgroupSize_(workgroupSize) {}

  static std::string uintLiteral(int64_t v) { return std::to_string(v) + "u"; }
  std::string param(const char* name) const { return paramPrefix_ + name; }
  // The opaque identity's key: the run-time `zero`, or a literal 0 when the
  // experiment switches the trick off (the compiler may then merge).
  std::string zeroKey() const { return opaque_ ? param("zero") : "0u"; }

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

  // Copy m of value j under `prefix` ("v": the forward sweep's; "w", "w2_": a block's recompute;
  // "k2_": a block's bookmarks): v17, v17_3; the forward sweep's market arrays are indexed, v17[3] or
  // v17[tl_m]; in the market loop's body the other copies have no suffix (w17: this iteration's).
  std::string value(const std::string& prefix, int32_t j, Markets m) const {
    std::string s = prefix + std::to_string(j);
    if (!perMarket(j)) return s;
    if (prefix == "v" && inArray(plan_.nodes[j].value)) return s + "[" + marketIndex(m) + "]";
    return m.kind == Markets::Kind::Loop ? s : s + "_" + std::to_string(m.market);
  }
  std::string adjoint(int32_t j, Markets m) const {
    const std::string s = "d" + std::to_string(j);
    switch (plan_.nodes[j].adjoint) {
      case AdjointPlace::SharedArray: return "ds" + std::to_string(plan_.nodes[j].adjointArray) + "[" + marketIndex(m) + "]";
      case AdjointPlace::LaneArray: return s + "[" + marketIndex(m) + "]";
      case AdjointPlace::MarketScalars: return m.kind == Markets::Kind::Loop ? s : s + "_" + std::to_string(m.market);
      default: return s;
    }
  }
  std::string marketIndex(Markets m) const { return m.kind == Markets::Kind::Loop ? "tl_m" : std::to_string(m.market); }

  // Scratch addresses of node j's copy for market m. A load's address is opaque (keyed by zero) so the
  // compiler cannot forward the stored value through a register. SoA
  // addresses use tl_inv, `invocations` made path-loop-variant: with the
  // plain parameter every slot's address is loop-invariant, the compiler
  // hoists them all out of the path loop (one 64-bit address per slot,
  // 191 at the 252-step Asian's seglen 24) and spills them (nvcc sm_90:
  // 96 registers + 2 KB stack; with tl_inv: 72 registers, no stack, as AoS).
  std::string scratchStore(int32_t j, Markets m) const { return slotStore(copySlot(j, m)); }
  std::string scratchLoad(int32_t j, Markets m) const { return slotLoad(copySlot(j, m)); }
  // Slot `slot` of this lane (SoA: through `inv`, the invocations; tl_inv in the path loop).
  std::string slotStore(int slot, const std::string& inv = "tl_inv") const { return slotStore(uintLiteral(slot), inv); }
  // The same for a slot given as a U expression (draws=prefill's loop: base + 4 * group + word).
  std::string slotStore(const std::string& slot, const std::string& inv = "tl_inv") const {
    if (layout_ == ScratchLayout::AoS) return "tl_tid * " + uintLiteral(plan_.laneSlots()) + " + " + slot;
    return slot + " * " + inv + " + tl_tid";
  }
  // `key`: a U that is 0 at run time (zeroKey(), or one the load must wait for: draws=prefill).
  std::string slotLoad(int slot) const { return slotLoad(slot, zeroKey()); }
  std::string slotLoad(int slot, const std::string& key) const {
    if (layout_ == ScratchLayout::AoS)
      return "(tl_tid * " + uintLiteral(plan_.laneSlots()) + " + " + uintLiteral(slot) + ") ^ " + key;
    return uintLiteral(slot) + " * (tl_inv ^ " + key + ") + tl_tid";
  }
  // Kahan cell i (sum i, at kahanSums + i its compensation) in local memory.
  std::string kahanCell(int i) const { return "tl_red[" + uintLiteral(int64_t(i) * workgroupSize_) + " + tl_lid]"; }

 private:
  int copySlot(int32_t j, Markets m) const { return plan_.nodes[j].slot + (perMarket(j) ? m.market : 0); }

  const StoragePlan& plan_;
  ScratchLayout layout_;
  std::string paramPrefix_;
  bool opaque_;
  int workgroupSize_;
};

}  // namespace tapelab
