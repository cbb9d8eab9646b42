#include "planner/costs.h"

#include <stdexcept>
#include <string_view>
#include <utility>

namespace tapelab {

const CostModel& CostModel::measured() {
  static const CostModel model = [] {
    CostModel m;
    m.source = "PTX instructions per op, sm_90 (experiments/op_costs)";
    const std::pair<std::string_view, double> table[] = {
#include "planner/op_costs.inc"
    };
    int seen = 0;
    for (const auto& [word, w] : table) {
      const auto op = opFromName(word);
      if (!op) throw std::logic_error("planner/op_costs.inc names an unknown op");
      m.weight[static_cast<size_t>(*op)] = w;
      ++seen;
    }
    if (seen != kOpCount) throw std::logic_error("planner/op_costs.inc does not cover every op: rerun experiments/op_costs");
    return m;
  }();
  return model;
}

CostModel CostModel::unit() {
  CostModel m;
  m.source = "unit (every op but const costs 1)";
  m.weight.fill(1.0);
  m.weight[static_cast<size_t>(Op::Const)] = 0.0;
  return m;
}

}  // namespace tapelab
