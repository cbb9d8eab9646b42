#include "gpu/codegen/draw_keys.h"

#include "planner/plan.h"

namespace tapelab {

DrawLoadKeys drawLoadKeys(const Tape& tape, const KernelOptions& options, const StoragePlan& storage) {
  DrawLoadKeys keys;
  if (!storage.prefill) return keys;
  const Plan& plan = options.plan;
  const KernelConfig& config = options.config;
  for (int s = 0; s < plan.segments(); ++s) {
    int32_t key = -1;
    const int from = s - 1 - config.prefillAhead;
    if (from >= 0 && config.opaque)
      for (int32_t j = plan.end(from) - 1; j >= plan.begin(from) && key < 0; --j) {
        const ValuePlace place = storage.nodes[j].value;
        if (plan.isPersistent[j] && tape.op[j] != Op::Randn && tape.op[j] != Op::Input &&
            (place == ValuePlace::Scalar || place == ValuePlace::MarketScalars))
          key = j;
      }
    keys.keyNode.push_back(key);
  }
  return keys;
}

std::string toText(const DrawLoadKeys& keys) {
  std::string s;
  for (size_t k = 0; k < keys.keyNode.size(); ++k)
    s += "segment " + std::to_string(k) + ": " +
         (keys.keyNode[k] < 0 ? std::string("unkeyed") : "keyed by node " + std::to_string(keys.keyNode[k])) + "\n";
  return s;
}

}  // namespace tapelab
