// A Tape: one Monte-Carlo path's arithmetic as a flat list of nodes, in
// evaluation order, structure of arrays. Node i reads nodes a[i], b[i], c[i] < i
// (as many as its op's arity; select is the one op with a third).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tape/op.h"

namespace tapelab {

struct Tape {
  std::vector<Op> op;
  std::vector<int32_t> a;     // first argument, -1 when the op has none
  std::vector<int32_t> b;     // second argument, -1 when the op has none
  std::vector<int32_t> c;     // third argument (select), -1 when the op has none
  std::vector<double> imm;    // const: its value; randn: draw index k; input: input ordinal

  std::vector<std::string> inputNames;  // in input order (ordinal = position)
  std::vector<double> inputDefaults;
  std::vector<int32_t> inputNodes;      // node of each input
  int32_t output = -1;                  // node whose value is priced; Greeks = adjoints of inputs

  std::string name;  // free text ("asian-252"), not part of the semantics

  int32_t size() const { return static_cast<int32_t>(op.size()); }
  int numInputs() const { return static_cast<int>(inputNames.size()); }
  int32_t push(Op o, int32_t x = -1, int32_t y = -1, double v = 0.0);
  int32_t push3(Op o, int32_t x, int32_t y, int32_t z);  // a three-argument op (select)
  // Argument k (0: a, 1: b, 2: c) of node i.
  int32_t arg(int32_t i, int k) const { return k == 0 ? a[i] : k == 1 ? b[i] : c[i]; }
  int32_t addInput(const std::string& inputName, double defaultValue);
  // Ordinal of the input called `inputName`, or -1.
  int inputIndex(const std::string& inputName) const;
  // The largest draw index + 1 (0 when none): 64-bit, as k = 2^32-1 is a valid index.
  uint64_t drawCount() const;
};

// Calls f(j) for each argument j of node i, in order a, b, c (repeats included).
template <class F>
void forEachArg(const Tape& t, int32_t i, F&& f) {
  const int ar = arity(t.op[i]);
  if (ar >= 1) f(t.a[i]);
  if (ar >= 2) f(t.b[i]);
  if (ar >= 3) f(t.c[i]);
}

// Checks the structural rules (argument order, arities, a single output, draw
// indices, unique input names, finite constants); returns "" or the first problem.
std::string validate(const Tape& tape);

// Per node: 1 where its value is computed from an input (it has an adjoint that reaches a Greek).
std::vector<uint8_t> dependsOnInput(const Tape& tape);
// Per node: 1 where an input other than those of `shared` (input ordinals) reaches it. With several
// markets per dispatch whose `shared` inputs are equal, such a value differs from market to market
// and the others do not (their adjoints still do).
std::vector<uint8_t> dependsOnInputOtherThan(const Tape& tape, const std::vector<int>& shared);
// Per node: 1 where its value is computed from a draw (it differs from path to path).
std::vector<uint8_t> dependsOnDraw(const Tape& tape);

}  // namespace tapelab
