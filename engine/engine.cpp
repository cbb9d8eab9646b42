#include "engine/engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>

namespace tapelab {

const char* toString(Precision p) { return p == Precision::F32 ? "fp32" : "fp64"; }
const char* toString(KernelKind k) {
  switch (k) {
    case KernelKind::Plain: return "plain";
    case KernelKind::Register: return "register";
    case KernelKind::Scratch: return "scratch";
    case KernelKind::Tangent: return "tangent";
  }
  return "?";
}
const char* toString(ScratchLayout l) { return l == ScratchLayout::AoS ? "aos" : "soa"; }
bool sequentialMarkets(const KernelOptions& o) {
  return (o.kind == KernelKind::Register || o.kind == KernelKind::Scratch) && o.greeks && o.markets > 1 &&
         o.marketOrder == MarketOrder::Sequential;
}

const char* toString(MarketOrder o) { return o == MarketOrder::Joint ? "joint" : "sequential"; }

std::vector<int> differentiatedInputs(const KernelOptions& options, int numInputs) {
  std::vector<int> out;
  if (!options.greeks) return out;
  if (options.kind != KernelKind::Tangent || options.wrt.empty()) {
    for (int k = 0; k < numInputs; ++k) out.push_back(k);
    return out;
  }
  std::vector<uint8_t> seen(static_cast<size_t>(std::max(0, numInputs)), 0);
  for (int k : options.wrt) {
    if (k < 0 || k >= numInputs)
      throw std::invalid_argument("--wrt: input ordinal " + std::to_string(k) + " is not one of the tape's " +
                                  std::to_string(numInputs) + " inputs");
    if (seen[k]++) throw std::invalid_argument("--wrt: input ordinal " + std::to_string(k) + " given twice");
  }
  for (int k = 0; k < numInputs; ++k)
    if (seen[k]) out.push_back(k);
  return out;
}

void markUncomputedGreeks(RunResult& result, const KernelOptions& options, int numInputs) {
  if (options.kind != KernelKind::Tangent || options.wrt.empty() || !options.greeks) return;
  std::vector<uint8_t> computed(static_cast<size_t>(numInputs), 0);
  for (int k : differentiatedInputs(options, numInputs)) computed[k] = 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (MarketResult& m : result.markets)
    for (size_t k = 0; k < m.greeks.size() && k < computed.size(); ++k)
      if (!computed[k]) m.greeks[k] = m.greeksStderr[k] = nan;
}

namespace {
std::atomic<bool> deviceTimedOut{false};
}  // namespace

bool deviceTimedOutInProcess() { return deviceTimedOut.load(); }
void markDeviceTimedOutInProcess() { deviceTimedOut.store(true); }

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

unsigned workerThreads(unsigned threads) {
  return threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

void runOnThreads(uint64_t blocks, unsigned threads, const std::function<void()>& worker) {
  const unsigned nt =
      static_cast<unsigned>(std::min<uint64_t>(workerThreads(threads), std::max<uint64_t>(1, blocks)));
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

double Kernel::runBlocks(const std::vector<std::vector<double>>&, uint64_t, uint64_t, uint64_t, BlockSink&) {
  throw std::runtime_error("this engine's kernels cannot run part of a run (no path blocks to split over processes)");
}

void BlockReduction::add(const double* partials, uint64_t blocks, size_t blockSize) {
  if (sums_.empty()) sums_.assign(blockSize, 0.0);
  if (blockSize != sums_.size()) throw std::logic_error("BlockReduction: blocks of different sizes");
  for (uint64_t b = 0; b < blocks; ++b)
    for (size_t i = 0; i < blockSize; ++i) sums_[i] += partials[b * blockSize + i];
}

RunResult BlockReduction::finish(size_t markets, size_t numInputs, uint64_t paths, uint64_t seed) const {
  RunResult r;
  r.paths = paths;
  r.seed = seed;
  const size_t width = sums_.size() / (2 * markets);
  for (size_t m = 0; m < markets; ++m) {
    const double* base = &sums_[m * 2 * width];
    MarketResult mr = finishMoments(std::vector<double>(base, base + width),
                                    std::vector<double>(base + width, base + 2 * width), paths);
    mr.greeks.resize(numInputs, 0.0);
    mr.greeksStderr.resize(numInputs, 0.0);
    r.markets.push_back(std::move(mr));
  }
  return r;
}

}  // namespace tapelab
