#include "engine/tangent_chunks.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "util/threads.h"

namespace tapelab {

std::vector<std::vector<int>> tangentChunks(const KernelOptions& options, int numInputs) {
  const std::vector<int> inputs = differentiatedInputs(options, numInputs);
  const size_t n = static_cast<size_t>(options.config.tangentChunk);
  if (options.kind != KernelKind::Tangent || n == 0 || inputs.size() <= n) return {inputs};
  std::vector<std::vector<int>> chunks;
  for (size_t at = 0; at < inputs.size(); at += n)
    chunks.emplace_back(inputs.begin() + static_cast<std::ptrdiff_t>(at),
                        inputs.begin() + static_cast<std::ptrdiff_t>(std::min(inputs.size(), at + n)));
  return chunks;
}

namespace {

// The chunks' kernels as one: each runs in turn on the same inputs, paths and seed; the first's result
// takes each later chunk's Greeks. One kernel (the field set but not used) forwards everything to it.
class TangentChunks final : public Kernel {
 public:
  TangentChunks(std::vector<std::unique_ptr<Kernel>> kernels, std::vector<std::vector<int>> chunks, std::string note,
                double compileSeconds)
      : kernels_(std::move(kernels)), chunks_(std::move(chunks)), note_(std::move(note)), compileSeconds_(compileSeconds) {}

  RunResult run(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) override {
    RunResult out = kernels_[0]->run(inputs, paths, seed);
    for (size_t c = 1; c < kernels_.size(); ++c) {
      RunResult r = kernels_[c]->run(inputs, paths, seed);
      if (r.markets.size() != out.markets.size())
        throw std::logic_error("tangent_chunk: chunk " + std::to_string(c + 1) + " returned " +
                               std::to_string(r.markets.size()) + " markets, chunk 1 " + std::to_string(out.markets.size()));
      for (size_t m = 0; m < out.markets.size(); ++m) {
        MarketResult& to = out.markets[m];
        const MarketResult& from = r.markets[m];
        if (!bitsEqual(to.value, from.value) || !bitsEqual(to.valueStderr, from.valueStderr)) {
          char what[256];
          std::snprintf(what, sizeof what,
                        "tangent_chunk: chunk %zu of %zu priced market %zu at %.17g, chunk 1 at %.17g: their forward "
                        "sweeps differ, a defect (tangent_chunk=0 runs one kernel)",
                        c + 1, kernels_.size(), m + 1, from.value, to.value);
          throw std::runtime_error(what);
        }
        for (int k : chunks_[c]) {
          to.greeks.at(static_cast<size_t>(k)) = from.greeks.at(static_cast<size_t>(k));
          to.greeksStderr.at(static_cast<size_t>(k)) = from.greeksStderr.at(static_cast<size_t>(k));
        }
      }
      out.seconds += r.seconds;
      out.setupSeconds += r.setupSeconds;
      out.dispatches.insert(out.dispatches.end(), r.dispatches.begin(), r.dispatches.end());
    }
    return out;
  }

  // Registers and spill: the largest chunk's; source and instructions: every chunk's; compile: the wall time
  // of the side-by-side compiles.
  KernelStats stats() const override {
    KernelStats s = kernels_[0]->stats();
    for (size_t c = 1; c < kernels_.size(); ++c) {
      const KernelStats t = kernels_[c]->stats();
      s.registers = std::max(s.registers, t.registers);
      s.spillBytes = std::max(s.spillBytes, t.spillBytes);
      s.spillStoreBytes = std::max(s.spillStoreBytes, t.spillStoreBytes);
      s.scratchBytes = std::max(s.scratchBytes, t.scratchBytes);
      s.scratchBytesPerPath = std::max(s.scratchBytesPerPath, t.scratchBytesPerPath);
      s.sourceBytes = s.sourceBytes < 0 || t.sourceBytes < 0 ? -1 : s.sourceBytes + t.sourceBytes;
      s.instructions = s.instructions < 0 || t.instructions < 0 ? -1 : s.instructions + t.instructions;
      s.cacheHit = s.cacheHit && t.cacheHit;
      for (const std::string& u : t.configUnused)  // a field a later chunk could not honour is said too
        if (std::find(s.configUnused.begin(), s.configUnused.end(), u) == s.configUnused.end()) s.configUnused.push_back(u);
    }
    if (kernels_.size() > 1) {
      s.compileSeconds = compileSeconds_;
      s.notes = note_ + (s.notes.empty() ? "" : "; " + s.notes);
    } else if (!note_.empty()) {
      s.configUnused.push_back(note_);
    }
    return s;
  }

  uint64_t blockPaths() const override { return kernels_.size() == 1 ? kernels_[0]->blockPaths() : 0; }
  double runBlocks(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
                   BlockSink& sink) override {
    if (kernels_.size() != 1) return Kernel::runBlocks(inputs, first, paths, seed, sink);  // blockPaths() 0: refused
    return kernels_[0]->runBlocks(inputs, first, paths, seed, sink);
  }

 private:
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<std::vector<int>> chunks_;
  std::string note_;
  double compileSeconds_;
};

}  // namespace

std::unique_ptr<Kernel> compileKernel(Engine& engine, const Tape& tape, const KernelOptions& options, unsigned jobs) {
  const int n = options.config.tangentChunk;
  if (n == 0) return engine.compile(tape, options);
  const std::vector<std::vector<int>> chunks = tangentChunks(options, tape.numInputs());
  const size_t inputs = chunks.empty() ? 0 : chunks[0].size();
  if (chunks.size() == 1) {  // the field set, and not used: said in the kernel's stats
    std::vector<std::unique_ptr<Kernel>> one;
    one.push_back(engine.compile(tape, options));
    const std::string why = options.kind != KernelKind::Tangent ? "not a tangent kernel"
                            : !options.greeks                   ? "value only"
                                                                : "the kernel differentiates by " +
                                                                    std::to_string(inputs) + " inputs, no more than " +
                                                                    std::to_string(n) + ": one kernel";
    return std::make_unique<TangentChunks>(std::move(one), chunks, "tangent_chunk=" + std::to_string(n) + ": " + why, 0);
  }
  size_t total = 0;
  for (const std::vector<int>& c : chunks) total += c.size();
  std::vector<std::unique_ptr<Kernel>> kernels(chunks.size());
  std::vector<std::exception_ptr> failed(chunks.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  const auto start = std::chrono::steady_clock::now();
  const unsigned workers = static_cast<unsigned>(
      std::min<size_t>(jobs ? jobs : std::max(1u, std::thread::hardware_concurrency()), chunks.size()));
  runWorkers(workers, [&] {
    for (size_t c; !stop && (c = next.fetch_add(1)) < chunks.size();) {
      try {
        KernelOptions o = options;
        o.wrt = chunks[c];
        kernels[c] = engine.compile(tape, o);
      } catch (...) {
        failed[c] = std::current_exception();
        stop = true;  // the chunks not started stay uncompiled: the run fails anyway
      }
    }
  });
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);  // the first chunk's failure, in chunk order
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string note = "tangent_chunk=" + std::to_string(n) + ": " + std::to_string(chunks.size()) +
                           " tangent kernels of at most " + std::to_string(n) + " of the " + std::to_string(total) +
                           " inputs, run one after another on the same paths (registers and spill: the largest; "
                           "source, instructions: the sum)";
  return std::make_unique<TangentChunks>(std::move(kernels), chunks, note, seconds);
}

}  // namespace tapelab
