#include "planner/liveness.h"

#include <algorithm>

namespace tapelab {

std::vector<int32_t> lastUse(const Tape& t) {
  const int32_t n = t.size();
  std::vector<int32_t> last(n);
  for (int32_t i = 0; i < n; ++i) last[i] = i;
  for (int32_t i = 0; i < n; ++i) forEachArg(t, i, [&](int32_t j) { last[j] = i; });
  if (t.output >= 0 && t.output < n) last[t.output] = n;
  return last;
}

std::vector<int32_t> liveAcross(const Tape& t, const std::vector<int32_t>& last) {
  const int32_t n = t.size();
  // A value j is live across every c in (j, last[j]]: add +1 at j+1 and -1 at last[j]+1.
  std::vector<int32_t> delta(static_cast<size_t>(n) + 2, 0), live(static_cast<size_t>(n) + 1, 0);
  for (int32_t j = 0; j < n; ++j) {
    if (last[j] > j) {
      ++delta[j + 1];
      --delta[last[j] + 1];
    }
  }
  int32_t run = 0;
  for (int32_t c = 0; c <= n; ++c) live[c] = (run += delta[c]);
  return live;
}

std::vector<int32_t> firstReverseRead(const Tape& t) {
  const int32_t n = t.size();
  std::vector<int32_t> first(n, -1);
  // Descending, so the last write for each value is its smallest reader.
  for (int32_t i = n - 1; i >= 0; --i) {
    const Op op = t.op[i];
    const int ar = arity(op);
    if (ar == 0) continue;
    const AdjointReads reads = adjointReads(op);
    for (int k = ar - 1; k >= 0; --k)
      if (reads.arg(k)) first[t.arg(i, k)] = i;
    if (reads.r) first[i] = i;
  }
  return first;
}

std::vector<int32_t> adjointsLive(const Tape& t, const std::vector<int32_t>& last) {
  const int32_t n = t.size();
  std::vector<int32_t> delta(static_cast<size_t>(n) + 2, 0), live(static_cast<size_t>(n) + 1, 0);
  for (int32_t j = 0; j < n; ++j) {
    if (last[j] <= j) continue;  // nobody reads it and it is not the output: no contribution
    const Op op = t.op[j];
    if (op == Op::Const || op == Op::Randn) continue;
    const int32_t lo = op == Op::Input ? 0 : j + 1;  // live on [lo, last[j]]
    ++delta[lo];
    --delta[last[j] + 1];
  }
  int32_t run = 0;
  for (int32_t i = 0; i <= n; ++i) live[i] = (run += delta[i]);
  return live;
}

int32_t pipeWidth(const Tape& t) {
  const std::vector<int32_t> live = liveAcross(t, lastUse(t));
  const int32_t n = t.size();
  int32_t best = live[static_cast<size_t>(n / 4)];
  for (int32_t c = n / 4; c <= 3 * n / 4; ++c) best = std::min(best, live[static_cast<size_t>(c)]);
  return best;
}

}  // namespace tapelab
