#include "gpu/host/dispatch.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "util/process.h"

namespace tapelab {

std::vector<Dispatch> planDispatches(const EmittedKernel& k, uint64_t firstPath, uint64_t paths, uint64_t seed,
                                     uint32_t maxGroups) {
  const uint64_t block = k.pathsPerGroup();
  // Keep a dispatch's path count and group index products inside 32 bits.
  const uint64_t cap = std::max<uint64_t>(1, std::min<uint64_t>(maxGroups, (uint64_t{1} << 31) / block));
  std::vector<Dispatch> out;
  for (uint64_t done = 0; done < paths;) {
    const uint64_t blocksLeft = (paths - done + block - 1) / block;
    const uint64_t groups = std::min(blocksLeft, cap);
    const uint64_t count = std::min(paths - done, groups * block);
    const uint64_t first = firstPath + done;
    Dispatch d;
    d.groups = static_cast<uint32_t>(groups);
    d.params.seedLo = static_cast<uint32_t>(seed);
    d.params.seedHi = static_cast<uint32_t>(seed >> 32);
    d.params.pathLo = static_cast<uint32_t>(first);
    d.params.pathHi = static_cast<uint32_t>(first >> 32);
    d.params.count = static_cast<uint32_t>(count);
    d.params.zero = 0;
    d.params.invocations = static_cast<uint32_t>(groups * k.workgroupSize);
    out.push_back(d);
    done += count;
  }
  return out;
}

uint32_t dispatchGroupCap(uint32_t engineLimit, uint32_t requested) {
  return requested == 0 ? engineLimit : std::min(engineLimit, requested);
}

uint32_t scratchGroupCap(const EmittedKernel& k, uint32_t engineLimit, uint64_t budget, const std::string& engine,
                         const std::string& where) {
  const uint64_t perGroup = k.scratchBytes(1);
  if (perGroup == 0) return engineLimit;
  if (perGroup > budget)
    throw std::runtime_error(engine + ": one workgroup's scratch (" + std::to_string(perGroup) +
                             " bytes) exceeds the scratch budget of " + std::to_string(budget) + " bytes" + where);
  // The kernel indexes scratch with 32-bit unsigned arithmetic (slot * invocations + tid).
  const uint64_t indexCap = (uint64_t{1} << 32) / (uint64_t(k.workgroupSize) * k.scratchSlots);
  return static_cast<uint32_t>(std::max<uint64_t>(1, std::min({uint64_t{engineLimit}, budget / perGroup, indexCap})));
}

std::vector<unsigned char> packInputs(const EmittedKernel& k, const std::vector<std::vector<double>>& inputs) {
  if (inputs.size() != static_cast<size_t>(k.markets))
    throw std::invalid_argument("kernel prices " + std::to_string(k.markets) + " market(s) per dispatch, got " +
                                std::to_string(inputs.size()));
  for (size_t i = 0; i < k.sharedInputs.size(); ++i) {
    const size_t input = static_cast<size_t>(k.sharedInputs[i]);
    for (size_t m = 1; m < inputs.size(); ++m)
      if (input < inputs[m].size() && input < inputs[0].size() &&
          std::memcmp(&inputs[m][input], &inputs[0][input], sizeof(double)) != 0)
        throw std::invalid_argument("input '" + k.sharedInputNames[i] + "' differs between the markets of one dispatch (" +
                                    std::to_string(inputs[0][input]) + " in market 0, " +
                                    std::to_string(inputs[m][input]) + " in market " + std::to_string(m) +
                                    "), but the kernel shares it (built with KernelOptions::sharedInputs)");
  }
  std::vector<unsigned char> bytes(std::max<size_t>(1, inputs.size() * k.numInputs) * k.scalarBytes(), 0);
  size_t at = 0;
  for (const auto& m : inputs) {
    if (m.size() != static_cast<size_t>(k.numInputs))
      throw std::invalid_argument("market has " + std::to_string(m.size()) + " inputs, the tape " +
                                  std::to_string(k.numInputs));
    for (double x : m) {
      if (k.precision == Precision::F32) {
        const float f = static_cast<float>(x);
        std::memcpy(&bytes[at], &f, 4);
        at += 4;
      } else {
        std::memcpy(&bytes[at], &x, 8);
        at += 8;
      }
    }
  }
  return bytes;
}

PartialSums::PartialSums(const EmittedKernel& k, BlockSink* sink) : shape_(k), sink_(sink) {
  shape_.source.clear();
  sums_.assign(static_cast<size_t>(k.partialsPerGroup()), 0.0);
}

double PartialSums::secondsSinceStart() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void PartialSums::markSetupDone() { setupSeconds_ = secondsSinceStart(); }

void PartialSums::addedOnDevice(uint32_t groups) {
  DispatchTiming t;
  t.groups = groups;
  t.readySeconds = secondsSinceStart();
  timeline_.push_back(t);
}

void PartialSums::setTotals(const std::vector<double>& totals) {
  if (totals.size() != sums_.size())
    throw std::logic_error("PartialSums::setTotals: " + std::to_string(totals.size()) + " sums for " +
                           std::to_string(sums_.size()) + " columns");
  sums_ = totals;
}

void PartialSums::add(const void* partials, uint32_t groups) {
  DispatchTiming t;
  t.groups = groups;
  t.readySeconds = secondsSinceStart();
  addNow(partials, groups);
  t.sumSeconds = secondsSinceStart() - t.readySeconds;
  timeline_.push_back(t);
}

void PartialSums::addNow(const void* partials, uint32_t groups) {
  const size_t per = sums_.size();
  if (sink_) {  // the same values the sums below would add, converted the same way
    converted_.resize(size_t{groups} * per);
    for (size_t at = 0; at < converted_.size(); ++at) {
      if (shape_.precision == Precision::F32) {
        float f;
        std::memcpy(&f, static_cast<const unsigned char*>(partials) + at * 4, 4);
        converted_[at] = static_cast<double>(f);
      } else {
        std::memcpy(&converted_[at], static_cast<const unsigned char*>(partials) + at * 8, 8);
      }
    }
    sink_->add(converted_.data(), groups, per);
    return;
  }
  addColumns(partials, groups, sums_.data(), per, shape_.precision);
}

void PartialSums::addColumns(const void* partials, uint32_t groups, double* sums, size_t per, Precision precision,
                             size_t threads) {
  if (per == 0) return;
  // Large blocks of partials (one path per lane makes 4x the groups: config lanes=1; 7
  // markets at 4M paths are 5M values) are split by columns over threads: each sum is still added
  // group after group, in the same order, so the bits do not change.
  if (threads == 0) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    threads = size_t{groups} * per >= kParallelValues ? std::min<size_t>({cores, per, 8}) : 1;
  }
  threads = std::min(threads, per);
  // Thread t adds columns [bound[t], bound[t + 1]) into its own accumulators (no false sharing), all
  // allocated before any thread starts, so a worker allocates nothing.
  std::vector<size_t> bound(threads + 1);
  for (size_t t = 0; t <= threads; ++t) bound[t] = per * t / threads;
  std::vector<std::vector<double>> accs(threads);
  for (size_t t = 0; t < threads; ++t) accs[t].assign(sums + bound[t], sums + bound[t + 1]);
  auto run = [&](size_t t) noexcept {
    std::vector<double>& acc = accs[t];
    const size_t lo = bound[t], n = bound[t + 1] - lo;
    const auto* bytes = static_cast<const unsigned char*>(partials);
    if (precision == Precision::F32) {
      bytes += lo * 4;
      for (uint32_t g = 0; g < groups; ++g, bytes += per * 4)
        for (size_t i = 0; i < n; ++i) {  // no dependence across i: vectorised
          float f;
          std::memcpy(&f, bytes + i * 4, 4);
          acc[i] += static_cast<double>(f);
        }
    } else {
      bytes += lo * 8;
      for (uint32_t g = 0; g < groups; ++g, bytes += per * 8)
        for (size_t i = 0; i < n; ++i) {
          double x;
          std::memcpy(&x, bytes + i * 8, 8);
          acc[i] += x;
        }
    }
    std::copy(acc.begin(), acc.end(), sums + lo);
  };
  size_t started = 1;  // ranges 1 .. started-1 run on threads; the rest here
  {
    std::vector<std::jthread> pool;  // joined on every exit
    pool.reserve(threads);
    try {
      for (; started < threads; ++started) pool.emplace_back(run, started);
    } catch (const std::system_error&) {
      // No thread to be had: the ranges not started are added here, one after another (same bits).
    }
    run(0);
    for (size_t t = started; t < threads; ++t) run(t);
  }
}

RunResult PartialSums::finish(uint64_t paths, uint64_t seed) const {
  RunResult r;
  r.paths = paths;
  r.seed = seed;
  const size_t w = static_cast<size_t>(shape_.width);
  for (int m = 0; m < shape_.markets; ++m) {
    const double* base = &sums_[static_cast<size_t>(m) * 2 * w];
    std::vector<double> s(base, base + w), sq(base + w, base + 2 * w);
    MarketResult mr = finishMoments(s, sq, paths);
    mr.greeks.resize(static_cast<size_t>(shape_.numInputs), 0.0);
    mr.greeksStderr.resize(static_cast<size_t>(shape_.numInputs), 0.0);
    r.markets.push_back(std::move(mr));
  }
  KernelOptions shape;  // what markUncomputedGreeks reads: the tangent kind's inputs
  shape.kind = shape_.kind;
  shape.wrt = shape_.wrt;
  shape.greeks = shape_.width > 1;
  markUncomputedGreeks(r, shape, shape_.numInputs);
  return r;
}

namespace {

void launchAll(const EmittedKernel& k, const DispatchOptions& dispatch, uint32_t groupLimit,
               const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
               DispatchRunner& runner, PartialSums& sums) {
  checkPathRange(dispatch.pathOffset, first, paths);  // at least 1, at most kMaxPaths, no wrapping index
  const std::vector<unsigned char> in = packInputs(k, inputs);
  uint32_t cap = dispatchGroupCap(groupLimit, dispatch.maxGroups);
  const uint64_t block = std::max<uint64_t>(1, k.pathsPerGroup());
  if (dispatch.launchPaths > 0)  // a launch of at most launchPaths paths (at least one group): Ctrl-C comes soon
    cap = static_cast<uint32_t>(std::clamp<uint64_t>(dispatch.launchPaths / block, 1, cap));
  const std::vector<Dispatch> dispatches = planDispatches(k, dispatch.pathOffset + first, paths, seed, cap);
  uint32_t groups = 0;
  for (const Dispatch& d : dispatches) groups = std::max(groups, d.groups);
  runner.upload(in, groups, dispatches.size());
  sums.markSetupDone();
  size_t per = std::max<size_t>(1, runner.dispatchesPerLaunch());
  if (dispatch.launchPaths > 0) per = std::clamp<size_t>(dispatch.launchPaths / (uint64_t{cap} * block), 1, per);
  for (size_t lo = 0; lo < dispatches.size(); lo += per) {
    throwIfInterrupted();  // between launches: Ctrl-C in Python (util/process.h)
    runner.launch(std::span<const Dispatch>(dispatches).subspan(lo, std::min(per, dispatches.size() - lo)), sums);
  }
  runner.collect(sums);
}

}  // namespace

RunResult runDispatches(const EmittedKernel& k, const DispatchOptions& dispatch, uint32_t groupLimit,
                        const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed,
                        DispatchRunner& runner) {
  const auto t0 = std::chrono::steady_clock::now();
  PartialSums sums(k);
  launchAll(k, dispatch, groupLimit, inputs, 0, paths, seed, runner, sums);
  RunResult r = sums.finish(paths, seed);
  r.setupSeconds = sums.setupSeconds();
  r.dispatches = sums.timeline();
  runner.deviceTimes(r.dispatches);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

double runDispatchBlocks(const EmittedKernel& k, const DispatchOptions& dispatch, uint32_t groupLimit,
                         const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths,
                         uint64_t seed, DispatchRunner& runner, BlockSink& sink) {
  const auto t0 = std::chrono::steady_clock::now();
  if (first % k.pathsPerGroup()) throw std::invalid_argument("runBlocks: the first path is not at a block boundary");
  PartialSums sums(k, &sink);
  launchAll(k, dispatch, groupLimit, inputs, first, paths, seed, runner, sums);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tapelab
