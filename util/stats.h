// The one median of timed runs: the tuner's candidates, compare's ladders, the drivers' repeats.
#pragma once
#include <algorithm>
#include <vector>

namespace tapelab {

// The middle value of `v` (the mean of the two middle ones when their count is even); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace tapelab
