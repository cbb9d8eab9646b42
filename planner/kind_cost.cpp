#include "planner/kind_cost.h"

#include "tape/op.h"
#include "tape/tangent.h"

namespace tapelab {

KindCosts kindCosts(const Tape& tape, const std::vector<int>& wrt, const CostModel& model) {
  std::vector<int> inputs = wrt;
  if (inputs.empty())
    for (int k = 0; k < tape.numInputs(); ++k) inputs.push_back(k);
  KindCosts c;
  for (int32_t i = 0; i < tape.size(); ++i) {
    const Op op = tape.op[i];
    c.forward += model.of(op);
    for (int k = 0; k < arity(op); ++k) c.adjointTerms += contributes(info(op).adjoint(k)) ? 1 : 0;
  }
  c.tangentTerms = tangentTermCount(tape, inputs);
  c.adjoint = c.forward + kTermCost * static_cast<double>(c.adjointTerms);
  c.tangent = c.forward + kTermCost * static_cast<double>(c.tangentTerms);
  return c;
}

}  // namespace tapelab
