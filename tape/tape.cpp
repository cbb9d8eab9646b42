#include "tape/tape.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace tapelab {

int32_t Tape::push(Op o, int32_t x, int32_t y, double v) {
  op.push_back(o);
  a.push_back(x);
  b.push_back(y);
  c.push_back(-1);
  imm.push_back(v);
  return size() - 1;
}

int32_t Tape::push3(Op o, int32_t x, int32_t y, int32_t z) {
  const int32_t node = push(o, x, y);
  c.back() = z;
  return node;
}

int32_t Tape::addInput(const std::string& inputName, double defaultValue) {
  int32_t node = push(Op::Input, -1, -1, static_cast<double>(inputNames.size()));
  inputNames.push_back(inputName);
  inputDefaults.push_back(defaultValue);
  inputNodes.push_back(node);
  return node;
}

int Tape::inputIndex(const std::string& inputName) const {
  for (size_t i = 0; i < inputNames.size(); ++i)
    if (inputNames[i] == inputName) return static_cast<int>(i);
  return -1;
}

uint64_t Tape::drawCount() const {
  uint64_t n = 0;
  for (int32_t i = 0; i < size(); ++i)
    if (op[i] == Op::Randn) n = std::max<uint64_t>(n, static_cast<uint64_t>(imm[i]) + 1);
  return n;
}

namespace {
// Per node: 1 where a leaf of kind `leaf` reaches it through its arguments.
std::vector<uint8_t> dependsOnLeaf(const Tape& t, Op leaf) {
  std::vector<uint8_t> dep(t.size(), 0);
  for (int32_t i = 0; i < t.size(); ++i) {
    dep[i] = t.op[i] == leaf;
    forEachArg(t, i, [&](int32_t j) { dep[i] = dep[i] || dep[j]; });
  }
  return dep;
}
}  // namespace

std::vector<uint8_t> dependsOnInput(const Tape& t) { return dependsOnLeaf(t, Op::Input); }
std::vector<uint8_t> dependsOnDraw(const Tape& t) { return dependsOnLeaf(t, Op::Randn); }

std::vector<uint8_t> dependsOnInputOtherThan(const Tape& t, const std::vector<int>& shared) {
  std::vector<uint8_t> dep(t.size(), 0);
  for (int32_t i = 0; i < t.size(); ++i) {
    dep[i] = t.op[i] == Op::Input &&
             std::find(shared.begin(), shared.end(), static_cast<int>(t.imm[i])) == shared.end();
    forEachArg(t, i, [&](int32_t j) { dep[i] = dep[i] || dep[j]; });
  }
  return dep;
}

std::string validate(const Tape& t) {
  const int32_t n = t.size();
  if (n == 0) return "tape has no nodes";
  if (t.a.size() != t.op.size() || t.b.size() != t.op.size() || t.c.size() != t.op.size() ||
      t.imm.size() != t.op.size())
    return "tape arrays have different lengths";
  if (t.inputNames.size() != t.inputDefaults.size() || t.inputNames.size() != t.inputNodes.size())
    return "input arrays have different lengths";
  std::set<std::string> names;
  for (size_t k = 0; k < t.inputNames.size(); ++k) {
    if (!names.insert(t.inputNames[k]).second) return "duplicate input name '" + t.inputNames[k] + "'";
    int32_t node = t.inputNodes[k];
    if (node < 0 || node >= n || t.op[node] != Op::Input || t.imm[node] != static_cast<double>(k))
      return "input '" + t.inputNames[k] + "' does not name its input node";
  }
  int inputs = 0;
  for (int32_t i = 0; i < n; ++i) {
    const int ar = arity(t.op[i]);
    const int32_t args[kMaxArity] = {t.a[i], t.b[i], t.c[i]};
    for (int k = 0; k < kMaxArity; ++k) {
      if (k < ar && (args[k] < 0 || args[k] >= i))
        return "node " + std::to_string(i) + ": argument " + std::to_string(args[k]) +
               " is not an earlier node";
      if (k >= ar && args[k] != -1)
        return "node " + std::to_string(i) + ": unused argument slot is not -1";
    }
    switch (t.op[i]) {
      case Op::Const:
        if (!std::isfinite(t.imm[i])) return "node " + std::to_string(i) + ": constant is not finite";
        break;
      case Op::Randn:
        if (!(t.imm[i] >= 0 && t.imm[i] <= 4294967295.0) || t.imm[i] != std::floor(t.imm[i]))
          return "node " + std::to_string(i) + ": draw index is not an integer in [0, 2^32)";
        break;
      case Op::Input: ++inputs; break;
      default: break;
    }
  }
  if (inputs != t.numInputs()) return "input nodes and input names disagree";
  for (double d : t.inputDefaults)
    if (!std::isfinite(d)) return "input default is not finite";
  if (t.output < 0 || t.output >= n) return "output node out of range";
  return "";
}

}  // namespace tapelab
