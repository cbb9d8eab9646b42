#include "api/engine.h"

#include <cmath>

namespace tapelab {

const char* toString(Precision p) { return p == Precision::F32 ? "fp32" : "fp64"; }
const char* toString(KernelKind k) {
  switch (k) {
    case KernelKind::Plain: return "plain";
    case KernelKind::Register: return "register";
    case KernelKind::Scratch: return "scratch";
  }
  return "?";
}
const char* toString(ScratchLayout l) { return l == ScratchLayout::AoS ? "aos" : "soa"; }

MarketResult finishMoments(const std::vector<double>& sums, const std::vector<double>& sumSquares,
                           uint64_t paths) {
  MarketResult r;
  const double n = static_cast<double>(paths);
  auto moment = [&](size_t i, double& mean, double& err) {
    mean = sums[i] / n;
    const double var = paths > 1 ? std::max(0.0, (sumSquares[i] - n * mean * mean) / (n - 1)) : 0.0;
    err = std::sqrt(var / n);
  };
  moment(0, r.value, r.valueStderr);
  r.greeks.resize(sums.size() - 1);
  r.greeksStderr.resize(sums.size() - 1);
  for (size_t i = 1; i < sums.size(); ++i) moment(i, r.greeks[i - 1], r.greeksStderr[i - 1]);
  return r;
}

}  // namespace tapelab
