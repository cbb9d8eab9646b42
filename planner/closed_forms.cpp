#include "planner/closed_forms.h"

#include <algorithm>

namespace tapelab {

bool ClosedForms::any() const {
  for (const auto& c : closed)
    if (!c.empty()) return true;
  return false;
}

bool ClosedForms::isClosed(int32_t node, int32_t slot) const {
  if (closed.empty()) return false;
  const auto& c = closed[node];
  return std::binary_search(c.begin(), c.end(), slot);
}

namespace {

// Per node: homogeneous of degree one in input node `x` (see closed_forms.h); `reached`: x reaches it.
std::vector<uint8_t> homogeneous(const Tape& t, int32_t x, const std::vector<uint8_t>& reached) {
  std::vector<uint8_t> h(t.size(), 0);
  for (int32_t i = 0; i < t.size(); ++i) {
    auto H = [&](int k) { return h[t.arg(i, k)] != 0; };
    auto free = [&](int k) { return reached[t.arg(i, k)] == 0; };
    switch (t.op[i]) {
      case Op::Input: h[i] = i == x; break;
      case Op::Const: h[i] = t.imm[i] == 0.0; break;
      case Op::Mul: h[i] = (H(0) && free(1)) || (H(1) && free(0)); break;
      case Op::Div: h[i] = H(0) && free(1); break;
      case Op::Add:
      case Op::Sub: h[i] = H(0) && H(1); break;
      case Op::Neg: h[i] = H(0); break;
      case Op::Select: h[i] = free(0) && H(1) && H(2); break;
      default: h[i] = 0;
    }
  }
  return h;
}

}  // namespace

ClosedForms closedForms(const Tape& tape, const TangentSlots& slots, bool on) {
  ClosedForms f;
  f.inputOfSlot = slots.inputs;
  if (!on || slots.of.empty()) return f;
  f.closed.assign(tape.size(), {});
  for (size_t slot = 0; slot < slots.inputs.size(); ++slot) {
    const int32_t x = tape.inputNodes[slots.inputs[slot]];
    std::vector<uint8_t> reached(tape.size(), 0);
    for (int32_t i = 0; i < tape.size(); ++i)
      reached[i] = std::binary_search(slots.of[i].begin(), slots.of[i].end(), static_cast<int32_t>(slot));
    const std::vector<uint8_t> h = homogeneous(tape, x, reached);
    for (int32_t i = 0; i < tape.size(); ++i)
      if (h[i] && reached[i] && tape.op[i] != Op::Input) f.closed[i].push_back(static_cast<int32_t>(slot));
  }
  return f;
}

std::string toText(const ClosedForms& f, const Tape& tape) {
  if (!f.any()) return "no closed-form tangents\n";
  std::string s;
  for (size_t slot = 0; slot < f.inputOfSlot.size(); ++slot) {
    int count = 0;
    for (const auto& c : f.closed) count += std::binary_search(c.begin(), c.end(), static_cast<int32_t>(slot));
    if (count > 0)
      s += "d/d " + tape.inputNames[f.inputOfSlot[slot]] + ": " + std::to_string(count) + " values carry none (value / " +
           tape.inputNames[f.inputOfSlot[slot]] + ")\n";
  }
  return s;
}

}  // namespace tapelab
