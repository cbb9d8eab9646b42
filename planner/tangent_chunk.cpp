#include "planner/tangent_chunk.h"

#include <algorithm>

#include "planner/loops.h"
#include "tape/tangent.h"

namespace tapelab {

namespace {

std::string grouped(int64_t n) {
  std::string s = std::to_string(n);
  for (int at = static_cast<int>(s.size()) - 3; at > 0; at -= 3) s.insert(static_cast<size_t>(at), ",");
  return s;
}

}  // namespace

std::string AutoTangentChunk::why() const {
  if (chunk == 0)
    return "tangent_chunk=0 (auto): one kernel of " + grouped(wholeTerms) + " written-out terms" +
           (wholeTerms > kTangentChunkTerms ? ", over " + grouped(kTangentChunkTerms) + " but more than " +
                                                  std::to_string(kTangentChunksMost) + " chunks would be needed"
                                            : "");
  return "tangent_chunk=" + std::to_string(chunk) + " (auto): " + std::to_string(kernels) + " kernels of at most " +
         grouped(chunkTerms) + " written-out terms, the whole kernel's " + grouped(wholeTerms) + " over " +
         grouped(kTangentChunkTerms) + " (planner/tangent_chunk.h)";
}

AutoTangentChunk autoTangentChunk(const Tape& tape, const std::vector<int>& inputs, bool rolls, int markets,
                                  const std::vector<int>& sharedInputs) {
  int32_t skipBegin = 0, skipEnd = 0;
  if (rolls) {  // the body a few iterations long, and leftover iterations after it: count those generously
    const TapeLoop loop = findLoop(tape);
    if (loop.found() && loop.count > 7) skipBegin = loop.begin + 4 * loop.period, skipEnd = loop.end() - 3 * loop.period;
  }
  const std::vector<uint8_t> perMarket =
      markets > 1 ? (sharedInputs.empty() ? dependsOnInput(tape) : dependsOnInputOtherThan(tape, sharedInputs))
                  : std::vector<uint8_t>{};
  const std::vector<uint8_t>* weights = markets > 1 ? &perMarket : nullptr;
  auto terms = [&](const std::vector<int>& in) { return tangentTermCount(tape, in, skipBegin, skipEnd, weights, markets); };
  AutoTangentChunk a;
  a.wholeTerms = a.chunkTerms = terms(inputs);
  if (a.wholeTerms <= kTangentChunkTerms || inputs.size() < 2) return a;
  const size_t n = inputs.size();
  for (size_t kernels = 2; kernels <= static_cast<size_t>(kTangentChunksMost) && kernels <= n; ++kernels) {
    const size_t chunk = (n + kernels - 1) / kernels;
    if ((n + chunk - 1) / chunk != kernels) continue;  // this chunk size was tried at fewer kernels
    int64_t largest = 0;
    for (size_t at = 0; at < n && largest <= kTangentChunkTerms; at += chunk) {
      const std::vector<int> part(inputs.begin() + static_cast<std::ptrdiff_t>(at),
                                  inputs.begin() + static_cast<std::ptrdiff_t>(std::min(n, at + chunk)));
      largest = std::max(largest, terms(part));
    }
    if (largest <= kTangentChunkTerms) {
      a.chunk = static_cast<int>(chunk);
      a.kernels = static_cast<int>(kernels);
      a.chunkTerms = largest;
      return a;
    }
  }
  return a;
}

}  // namespace tapelab
