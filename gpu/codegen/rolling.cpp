#include "gpu/codegen/rolling.h"

#include <algorithm>
#include <numeric>

#include "tape/philox.h"

namespace tapelab {

bool RolledLoop::isExported(int32_t offset) const { return std::binary_search(exported.begin(), exported.end(), offset); }

namespace {

// Iteration k's shape: each offset's copies per market and tangent slots.
bool sameShape(const StoragePlan& s, const TapeLoop& L, int32_t k, int32_t k2) {
  for (int32_t o = 0; o < L.period; ++o) {
    const int32_t i = L.node(k, o), j = L.node(k2, o);
    if (s.nodes[i].copies != s.nodes[j].copies) return false;
    if (!s.tangents.of.empty() && s.tangents.of[i] != s.tangents.of[j]) return false;
  }
  return true;
}

std::string notRolled(const std::string& why) { return "loops=rolled: " + why + ", written out"; }

}  // namespace

RolledLoop planRolling(const Tape& tape, const KernelOptions& options, const StoragePlan& storage) {
  RolledLoop r;
  if (!options.config.loopsRolled) return r;
  const bool forwardOnly = options.kind == KernelKind::Tangent || (options.kind == KernelKind::Plain && !options.greeks);
  if (!forwardOnly) {
    r.whyNot = notRolled(options.kind == KernelKind::Plain ? "the plain kernel keeps every value for its reverse sweep"
                                                           : std::string("a ") + toString(options.kind) + " kernel");
    return r;
  }
  r.loop = findLoop(tape);
  const TapeLoop& L = r.loop;
  if (!L.found()) {
    r.whyNot = notRolled("no time loop in the tape (planner/loops.h)");
    return r;
  }
  // Whole Philox calls per trip: unroll * drawStride a multiple of 4.
  const int64_t stride = L.drawStride < 0 ? -L.drawStride : L.drawStride;
  r.unroll = stride == 0 ? 1 : static_cast<int32_t>(kDrawsPerCall / std::gcd<int64_t>(stride, kDrawsPerCall));
  // The shape is steady from the iteration `steady` on; the template reads iteration templateStart - 1.
  int32_t steady = L.count - 1;
  while (steady > 0 && sameShape(storage, L, steady - 1, L.count - 1)) --steady;
  r.templateStart = std::max(1, steady + 1);
  r.iterations = L.count / r.unroll * r.unroll;
  if (r.templateStart + r.unroll > L.count || r.iterations < r.unroll) {
    r.whyNot = notRolled("the loop's " + std::to_string(L.count) + " iterations settle too late for a body of " +
                         std::to_string(r.unroll));
    return r;
  }
  // Carried offsets, and those the nodes after the loop read from its last iteration.
  std::vector<uint8_t> exported(L.period, 0);
  for (const TapeLoop::BodyNode& b : L.body)
    for (int k = 0; k < 3; ++k)
      if (b.kind[k] == TapeLoop::Arg::Carried) exported[b.ref[k]] = 1;
  const int32_t after = L.node(r.iterations, 0), last = L.node(r.iterations - 1, 0);
  for (int32_t i = after; i < tape.size(); ++i)
    forEachArg(tape, i, [&](int32_t j) {
      if (j >= last && j < after) exported[j - last] = 1;
    });
  if (tape.output >= last && tape.output < after) exported[tape.output - last] = 1;
  for (int32_t o = 0; o < L.period; ++o)
    if (exported[o]) r.exported.push_back(o);
  r.rolled = true;
  return r;
}

std::string toText(const RolledLoop& r, const Tape& tape) {
  if (!r.rolled) return (r.whyNot.empty() ? std::string("not asked") : r.whyNot) + "\n";
  std::string s = toText(r.loop, tape);
  s += "rolled: " + std::to_string(r.trips()) + " trips of " + std::to_string(r.unroll) + " iteration(s), body from iteration " +
       std::to_string(r.templateStart) + ", " + std::to_string(r.loop.count - r.iterations) + " written out after; carried offsets";
  for (int32_t o : r.exported) s += " " + std::to_string(o);
  return s + "\n";
}

}  // namespace tapelab
