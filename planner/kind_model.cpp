#include "planner/kind_model.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <numeric>

#include "planner/closed_forms.h"
#include "planner/metrics.h"
#include "tape/tangent.h"

namespace tapelab {

namespace {

// Issue efficiency (instructions issued per cycle, as a share of one per cycle) of each kind on the H100,
// Nsight Compute at commit 230a5b6 (issue 46): the straight-line register kernel of the 252-step Asian at
// 53.5% (one market) and 44% (seven), its straight-line tangent kernel 764 Mpath/s at 24,138 instructions
// a path = 55%; the expert's rolled loop (experiments/peers/handwritten_asian.cu) 1,235 Mpath/s at about
// 22,300 = 82%, the prior for tapelab's rolled loops until they are measured.
constexpr double kStraightLine = 0.5, kRolled = 0.8;

double addCost(const CostModel& c) { return c.of(Op::Add); }

}  // namespace

double ruleCost(const std::string& rule, const CostModel& c) {
  double cost = 0;
  bool operand = false;  // the last token ended an operand: a following '-' is binary
  for (size_t i = 0; i < rule.size();) {
    const char ch = rule[i];
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      size_t j = i;
      while (j < rule.size() && (std::isalnum(static_cast<unsigned char>(rule[j])) || rule[j] == '_')) ++j;
      const std::string id = rule.substr(i, j - i);
      if (id == "exp") cost += c.of(Op::Exp);
      else if (id == "log") cost += c.of(Op::Log);
      else if (id == "sqrt") cost += c.of(Op::Sqrt);
      else if (id == "pow") cost += c.of(Op::Pow);
      else if (id == "tanh") cost += c.of(Op::Tanh);
      else if (id == "sel") cost += c.of(Op::Select);
      operand = id != "exp" && id != "log" && id != "sqrt" && id != "pow" && id != "tanh" && id != "sel";
      i = j;
      continue;
    }
    if (ch == '*') cost += c.of(Op::Mul);
    if (ch == '/') cost += c.of(Op::Div);
    if (ch == '+' || (ch == '-' && operand)) cost += c.of(Op::Add);
    if (ch == ')') operand = true;
    else if (ch != ' ') operand = false;
    ++i;
  }
  return cost;
}

KindPrediction predictKinds(const Tape& tape, const KindJob& job, const CostModel& c) {
  KindPrediction p;
  const int32_t n = tape.size();
  const std::vector<uint8_t> varying =
      job.markets > 1 && !job.sharedInputs.empty() ? dependsOnInputOtherThan(tape, job.sharedInputs) : dependsOnInput(tape);
  auto copies = [&](int32_t i) { return varying[i] ? job.markets : 1; };
  double forward = 0;
  for (int32_t i = 0; i < n; ++i) forward += copies(i) * c.of(tape.op[i]);

  std::vector<int> wrt = job.wrt;
  if (wrt.empty()) {
    wrt.resize(tape.numInputs());
    std::iota(wrt.begin(), wrt.end(), 0);
  }
  const TangentSlots slots = tangentSlots(tape, wrt);
  const ClosedForms closed = closedForms(tape, slots, job.closedForms);
  const size_t chunk = job.tangentChunk > 0 ? static_cast<size_t>(job.tangentChunk) : std::max<size_t>(1, wrt.size());
  double tangent = forward * static_cast<double>(std::max<size_t>(1, (wrt.size() + chunk - 1) / chunk));
  for (int32_t i = 0; i < n; ++i) {
    if (tape.op[i] == Op::Input || arity(tape.op[i]) == 0) continue;
    const OpInfo& op = info(tape.op[i]);
    // A partial is computed once a kernel that uses it: once, or once a chunk whose slots use it (slots ascend,
    // chunk c being slots c * chunk .. c * chunk + chunk - 1).
    int partialKernels[3] = {0, 0, 0};
    int64_t partialChunk[3] = {-1, -1, -1};
    for (int32_t slot : slots.of[i]) {
      if (closed.isClosed(i, slot)) continue;
      double rule = 0;
      int terms = 0;
      for (int k = 0; k < op.arity; ++k) {
        const auto& of = slots.of[tape.arg(i, k)];
        if (!contributes(op.adjoint(k)) || !std::binary_search(of.begin(), of.end(), slot)) continue;
        const std::string r(op.adjoint(k));
        // A rule d * (partial) is one multiplication a slot: the partial is the same expression in every slot,
        // computed once (the compiler's common subexpression: pow's b * pow(a, b - 1) once a node, not once a
        // slot). A fused product saves its addition; a closed-form argument costs a multiplication by 1 / x.
        const bool product = r.rfind("d * ", 0) == 0;
        const bool fused = terms > 0 && job.tangentFma && product;
        rule += (product ? c.of(Op::Mul) : ruleCost(r, c)) + (closed.isClosed(tape.arg(i, k), slot) ? c.of(Op::Mul) : 0) -
                (fused ? addCost(c) : 0);
        if (product && partialChunk[k] != static_cast<int64_t>(static_cast<size_t>(slot) / chunk)) {
          partialChunk[k] = static_cast<int64_t>(static_cast<size_t>(slot) / chunk);
          ++partialKernels[k];
        }
        ++terms;
      }
      tangent += copies(i) * (rule + std::max(terms - 1, 0) * addCost(c));
    }
    for (int k = 0; k < op.arity; ++k)
      if (partialKernels[k] > 0) tangent += copies(i) * partialKernels[k] * ruleCost(std::string(op.adjoint(k)).substr(4), c);
  }

  const std::vector<uint8_t> fromInput = dependsOnInput(tape);
  double reverse = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (!fromInput[i] || arity(tape.op[i]) == 0) continue;
    const OpInfo& op = info(tape.op[i]);
    for (int k = 0; k < op.arity; ++k)
      if (contributes(op.adjoint(k)) && fromInput[tape.arg(i, k)])
        reverse += job.markets * (ruleCost(std::string(op.adjoint(k)), c) + addCost(c));
  }
  double recompute = 0;
  if (job.adjointPlan.segments() > 1 || job.adjointPlan.perValue) {
    // What the plan recomputes, a stored draw read back instead of drawn (~2 instructions: a load).
    CostModel stored = c;
    stored.weight[static_cast<size_t>(Op::Randn)] = 2;
    recompute = planMetrics(tape, job.adjointPlan, stored).recomputeCost * (forward / std::max(1.0, [&] {
                  double one = 0;
                  for (int32_t i = 0; i < n; ++i) one += c.of(tape.op[i]);
                  return one;
                }()));
  }
  p.tangentInstructions = tangent;
  p.adjointInstructions = forward + recompute + reverse;
  if (job.gpu) {
    p.tangentEfficiency = job.tangentRolls ? kRolled : kStraightLine;
    p.adjointEfficiency = job.adjointRolls ? kRolled : kStraightLine;
  }
  return p;
}

std::string KindPrediction::why() const {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s: %.0f against %.0f instructions a path, at %.2f and %.2f of the issue rate",
                tangentWins() ? "tangent" : "adjoint", tangentWins() ? tangentInstructions : adjointInstructions,
                tangentWins() ? adjointInstructions : tangentInstructions, tangentWins() ? tangentEfficiency : adjointEfficiency,
                tangentWins() ? adjointEfficiency : tangentEfficiency);
  return buf;
}

}  // namespace tapelab
