#include "api/engine.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

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

uint64_t envUnsigned(const char* name, uint64_t fallback, uint64_t lo, uint64_t hi) {
  const char* s = std::getenv(name);
  if (!s || !*s) return fallback;
  std::string_view v(s);
  int base = 10;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    v.remove_prefix(2);
    base = 16;
  }
  uint64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x, base);
  if (ec != std::errc() || end != v.data() + v.size() || x < lo || x > hi) {
    std::string range = hi == UINT64_MAX ? (lo == 0 ? "an unsigned integer" : "an integer >= " + std::to_string(lo))
                                         : "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
    throw std::invalid_argument(std::string(name) + ": expected " + range + ", got '" + s + "'");
  }
  return x;
}

unsigned cpuThreads() {
  return static_cast<unsigned>(
      envUnsigned("TAPELAB_THREADS", std::max(1u, std::thread::hardware_concurrency()), 1, 100'000));
}

void runOnThreads(uint64_t blocks, const std::function<void()>& worker) {
  const unsigned nt = static_cast<unsigned>(std::min<uint64_t>(cpuThreads(), std::max<uint64_t>(1, blocks)));
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < nt; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

RunResult finishBlocks(const std::vector<double>& partial, uint64_t blocks, size_t markets, size_t width,
                       uint64_t paths, uint64_t seed) {
  RunResult r;
  r.paths = paths;
  r.seed = seed;
  for (size_t m = 0; m < markets; ++m) {
    std::vector<double> s(width, 0.0), sq(width, 0.0);
    for (uint64_t blk = 0; blk < blocks; ++blk) {
      const double* p = &partial[(blk * markets + m) * 2 * width];
      for (size_t k = 0; k < width; ++k) {
        s[k] += p[k];
        sq[k] += p[width + k];
      }
    }
    r.markets.push_back(finishMoments(s, sq, paths));
  }
  return r;
}

}  // namespace tapelab
