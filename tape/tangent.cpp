#include "tape/tangent.h"

#include <algorithm>
#include <bit>
#include <iterator>

namespace tapelab {

int64_t TangentSlots::total() const {
  int64_t n = 0;
  for (const auto& s : of) n += static_cast<int64_t>(s.size());
  return n;
}

TangentSlots tangentSlots(const Tape& tape, const std::vector<int>& inputs) {
  TangentSlots t;
  t.inputs = inputs;
  t.slotOfInput.assign(static_cast<size_t>(tape.numInputs()), -1);
  for (size_t s = 0; s < inputs.size(); ++s) t.slotOfInput[static_cast<size_t>(inputs[s])] = static_cast<int32_t>(s);
  t.of.resize(static_cast<size_t>(tape.size()));
  for (int32_t i = 0; i < tape.size(); ++i) {
    auto& mine = t.of[i];
    if (tape.op[i] == Op::Input) {
      const int32_t s = t.slotOfInput[static_cast<size_t>(tape.imm[i])];
      if (s >= 0) mine.push_back(s);
      continue;
    }
    const int ar = arity(tape.op[i]);
    if (ar >= 1) mine = t.of[tape.a[i]];
    for (int k = 1; k < ar; ++k) {
      const auto& other = t.of[tape.arg(i, k)];
      std::vector<int32_t> merged;
      merged.reserve(mine.size() + other.size());
      std::set_union(mine.begin(), mine.end(), other.begin(), other.end(), std::back_inserter(merged));
      mine = std::move(merged);
    }
  }
  return t;
}

int64_t tangentTermCount(const Tape& tape, const std::vector<int>& inputs, int32_t skipBegin, int32_t skipEnd,
                         const std::vector<uint8_t>* perMarket, int markets) {
  const size_t words = (inputs.size() + 63) / 64;
  std::vector<int32_t> slotOf(static_cast<size_t>(tape.numInputs()), -1);
  for (size_t s = 0; s < inputs.size(); ++s) slotOf[static_cast<size_t>(inputs[s])] = static_cast<int32_t>(s);
  std::vector<uint64_t> bits(static_cast<size_t>(tape.size()) * words, 0);
  std::vector<int32_t> count(static_cast<size_t>(tape.size()), 0);
  int64_t terms = 0;
  for (int32_t i = 0; i < tape.size(); ++i) {
    uint64_t* mine = bits.data() + static_cast<size_t>(i) * words;
    const Op op = tape.op[i];
    if (op == Op::Input) {
      const int32_t s = slotOf[static_cast<size_t>(tape.imm[i])];
      if (s >= 0) mine[s / 64] |= uint64_t{1} << (s % 64), count[i] = 1;
      continue;
    }
    for (int k = 0; k < arity(op); ++k) {
      const int32_t arg = tape.arg(i, k);
      if (contributes(info(op).adjoint(k)) && (i < skipBegin || i >= skipEnd))
        terms += count[arg] * (perMarket && (*perMarket)[static_cast<size_t>(i)] ? markets : 1);
      const uint64_t* theirs = bits.data() + static_cast<size_t>(arg) * words;
      for (size_t w = 0; w < words; ++w) mine[w] |= theirs[w];
    }
    for (size_t w = 0; w < words; ++w) count[i] += std::popcount(mine[w]);
  }
  return terms;
}

}  // namespace tapelab
