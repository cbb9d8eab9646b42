#include "engine/engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>

#include "util/process.h"
#include "util/threads.h"

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
bool sequentialMarkets(const KernelOptions& o) {
  return (o.kind == KernelKind::Register || o.kind == KernelKind::Scratch) && o.greeks && o.markets > 1 &&
         o.config.marketOrder == MarketOrder::Sequential;
}

std::string rolledSegmentsWhyNot(const Tape& tape, const KernelOptions& o) {
  if (!o.config.loopsRolled) return "loops=unrolled";
  if (o.kind != KernelKind::Register || !o.greeks) return "not a register kernel with Greeks";
  if (o.markets > 1 && !(o.config.markets == MarketCode::Loop && sequentialMarkets(o)))
    return "several markets per dispatch without the market loop (config markets=loop, market_order=sequential)";
  if (o.config.draws == DrawSource::Prefill)
    for (int32_t i = 0; i < tape.size(); ++i)
      if (tape.op[i] == Op::Randn) return "draws=prefill";
  return "";
}

bool bitsEqual(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

bool bitsEqual(const MarketResult& a, const MarketResult& b) {
  if (!bitsEqual(a.value, b.value) || !bitsEqual(a.valueStderr, b.valueStderr)) return false;
  if (a.greeks.size() != b.greeks.size() || a.greeksStderr.size() != b.greeksStderr.size()) return false;
  for (size_t i = 0; i < a.greeks.size(); ++i)
    if (!bitsEqual(a.greeks[i], b.greeks[i])) return false;
  for (size_t i = 0; i < a.greeksStderr.size(); ++i)
    if (!bitsEqual(a.greeksStderr[i], b.greeksStderr[i])) return false;
  return true;
}

bool bitsEqual(const RunResult& a, const RunResult& b) {
  if (a.markets.size() != b.markets.size()) return false;
  for (size_t m = 0; m < a.markets.size(); ++m)
    if (!bitsEqual(a.markets[m], b.markets[m])) return false;
  return true;
}

std::vector<int> sharedInputsOf(const std::vector<std::vector<double>>& sets, size_t perDispatch) {
  std::vector<int> shared;
  if (sets.empty() || perDispatch <= 1) return shared;
  const size_t inputs = sets.front().size();
  for (size_t k = 0; k < inputs; ++k) {
    bool same = true;
    for (size_t lo = 0; lo < sets.size() && same; lo += perDispatch)
      for (size_t i = lo + 1; i < std::min(sets.size(), lo + perDispatch) && same; ++i)
        same = sets[i].size() == inputs && bitsEqual(sets[i][k], sets[lo][k]);
    if (same) shared.push_back(static_cast<int>(k));
  }
  return shared;
}

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

std::string kernelSubject(const Tape& tape, const KernelOptions& options) {
  std::string by;  // a tangent kernel of some inputs (--wrt, a chunk of tangent_chunk): which
  if (options.kind == KernelKind::Tangent && !options.wrt.empty() && tape.numInputs() > 0) {
    const auto name = [&](int k) { return k >= 0 && k < tape.numInputs() ? tape.inputNames[static_cast<size_t>(k)] : "?"; };
    by = " by " + std::to_string(options.wrt.size()) + " of its " + std::to_string(tape.numInputs()) + " inputs (" +
         name(options.wrt.front()) + (options.wrt.size() > 1 ? ".." + name(options.wrt.back()) : "") + ")";
  }
  return std::string("the ") + toString(options.kind) + " kernel of " + (tape.name.empty() ? "a tape" : tape.name) + by +
         (options.markets > 1 ? ", " + std::to_string(options.markets) + " markets" : "");
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
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto moment = [&](size_t i, double& mean, double& err) {
    if (!std::isfinite(sums[i]) || !std::isfinite(sumSquares[i])) {  // finishMoments' rule (engine.h)
      mean = std::isfinite(sums[i]) ? sums[i] / n : nan;
      err = nan;
      return;
    }
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

std::string nonFiniteEstimates(const RunResult& r, const KernelOptions& options,
                               const std::vector<std::string>& inputNames) {
  std::vector<uint8_t> computed(inputNames.size(), options.greeks ? 1 : 0);
  if (options.greeks && options.kind == KernelKind::Tangent && !options.wrt.empty()) {
    std::fill(computed.begin(), computed.end(), 0);
    for (int k : options.wrt)
      if (k >= 0 && static_cast<size_t>(k) < computed.size()) computed[static_cast<size_t>(k)] = 1;
  }
  std::string out;
  for (size_t m = 0; m < r.markets.size(); ++m) {
    const MarketResult& mr = r.markets[m];
    std::string these;
    auto add = [&](const std::string& what, double v, double e) {
      if (!std::isfinite(v) || !std::isfinite(e)) these += (these.empty() ? "" : ", ") + what;
    };
    add("value", mr.value, mr.valueStderr);
    for (size_t k = 0; k < inputNames.size() && k < mr.greeks.size(); ++k)
      if (computed[k]) add("d/d " + inputNames[k], mr.greeks[k], mr.greeksStderr[k]);
    if (these.empty()) continue;
    out += (out.empty() ? "" : "; ") + (r.markets.size() > 1 ? "market " + std::to_string(m) + ": " : "") + these;
  }
  return out;
}

void checkPathRange(uint64_t offset, uint64_t first, uint64_t paths) {
  if (paths == 0) throw std::invalid_argument("--paths: a run needs at least 1 path");
  if (paths > kMaxPaths)
    throw std::invalid_argument("--paths: " + std::to_string(paths) + " paths; at most 2^48 (" + std::to_string(kMaxPaths) + ")");
  const uint64_t start = offset + first;
  if (start < offset || paths - 1 > UINT64_MAX - start)
    throw std::invalid_argument("TAPELAB_PATH_OFFSET: " + std::to_string(offset) + " + " + std::to_string(first + paths) +
                                " paths pass the last 64-bit path index (2^64 - 1); the path index would wrap");
}

void runBlockWindows(uint64_t offset, uint64_t first, uint64_t paths, uint64_t blockPaths, size_t blockSize,
                     BlockSink& sink, const std::function<std::vector<double>(uint64_t, uint64_t)>& partials) {
  checkPathRange(offset, first, paths);
  const uint64_t blocks = (paths - 1) / blockPaths + 1;
  const uint64_t byBytes = std::max<uint64_t>(1, (uint64_t{64} << 20) / (std::max<size_t>(1, blockSize) * sizeof(double)));
  const uint64_t window = std::min<uint64_t>(byBytes, 16384);
  for (uint64_t b = 0; b < blocks; b += window) {
    const uint64_t n = std::min(window, blocks - b);
    const uint64_t lo = b * blockPaths;
    const uint64_t count = std::min(paths - lo, n * blockPaths);
    const std::vector<double> part = partials(first + lo, count);
    throwIfInterrupted();  // a window cut short: its partials are not a result
    sink.add(part.data(), n, blockSize);
  }
}

unsigned workerThreads(unsigned threads) {
  return threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

void runOnThreads(uint64_t blocks, unsigned threads, const std::function<void()>& worker) {
  const unsigned nt =
      static_cast<unsigned>(std::min<uint64_t>(workerThreads(threads), std::max<uint64_t>(1, blocks)));
  runWorkers(nt, worker);  // a thread the system refuses is one fewer worker (util/threads.h)
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
