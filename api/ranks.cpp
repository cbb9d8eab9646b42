#include "api/ranks.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "api/knobs.h"
#include "tape/textformat.h"
#include "util/hash.h"

#ifdef TAPELAB_HAVE_MPI
#include <mpi.h>
#endif

namespace tapelab::ranks {

namespace {

struct World {
  bool started = false;
  int rank = 0, size = 1, localRank = 0;
};
World& world() {
  static World w;
  return w;
}
RunTiming& timing() {
  static RunTiming t;
  return t;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

#ifdef TAPELAB_HAVE_MPI
void finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// Messages of at most this many doubles (MPI counts are int).
constexpr uint64_t kChunk = uint64_t{1} << 24;
#endif

// Rank r's blocks of `blocks`: [lo, hi).
std::pair<uint64_t, uint64_t> share(uint64_t blocks, int r, int n) {
  const auto at = [&](int k) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(blocks) * static_cast<unsigned>(k)) / static_cast<unsigned>(n));
  };
  return {at(r), at(r + 1)};
}

// Keeps a rank's partials for rank 0 (rank 0 adds its own straight into the reduction).
class Keep final : public BlockSink {
 public:
  void add(const double* partials, uint64_t blocks, size_t blockSize) override {
    this->blockSize = blockSize;
    values.insert(values.end(), partials, partials + blocks * blockSize);
  }
  std::vector<double> values;
  size_t blockSize = 0;
};

}  // namespace

int exitCodeOf(const std::exception& e) {
  if (const auto* f = dynamic_cast<const RankFailure*>(&e)) return f->exitCode;
  if (dynamic_cast<const EngineUnavailable*>(&e)) return 3;
  if (dynamic_cast<const std::invalid_argument*>(&e) || dynamic_cast<const TapeParseError*>(&e)) return 2;
  return 1;
}

bool builtWithMpi() {
#ifdef TAPELAB_HAVE_MPI
  return true;
#else
  return false;
#endif
}

void start([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) {
  World& w = world();
  if (w.started) return;
  w.started = true;
#ifdef TAPELAB_HAVE_MPI
  if (!startedByMpirun()) return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    std::atexit(finalize);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &w.localRank);
  MPI_Comm_free(&local);
#endif
}

int rank() { return world().rank; }
int size() { return world().size; }
int localRank() { return world().localRank; }
const RunTiming& lastRunTiming() { return timing(); }

void agree(int exitCode, const std::string& reason) {
  const World& w = world();
  if (w.size == 1) {
    if (exitCode) throw RankFailure(0, exitCode, reason);
    return;
  }
#ifdef TAPELAB_HAVE_MPI
  // The first failing rank, and the first that did not fail.
  std::array<int, 2> mine{exitCode ? w.rank : w.size, exitCode ? w.size : w.rank}, all{};
  MPI_Allreduce(mine.data(), all.data(), 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const int failed = all[0];
  if (failed == w.size) return;
  std::array<int, 2> head{exitCode, static_cast<int>(reason.size())};
  MPI_Bcast(head.data(), 2, MPI_INT, failed, MPI_COMM_WORLD);
  std::string text = w.rank == failed ? reason : std::string(static_cast<size_t>(head[1]), '\0');
  MPI_Bcast(text.data(), head[1], MPI_CHAR, failed, MPI_COMM_WORLD);
  const bool everyRank = all[1] == w.size;
  throw RankFailure(failed, head[0], everyRank ? text : "rank " + std::to_string(failed) + ": " + text);
#endif
}

void agreeOn(const std::string& what, const std::string& content) {
  agree();
  if (world().size == 1) return;
#ifdef TAPELAB_HAVE_MPI
  const std::string hash = contentHash(content);
  std::array<char, 32> root{};
  std::copy_n(hash.begin(), std::min<size_t>(hash.size(), root.size()), root.begin());
  const std::array<char, 32> own = root;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  const World& w = world();
  const int mine = own == root ? w.size : w.rank;
  int first = w.size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first < w.size)
    throw RankFailure(first, 2,
                      "rank " + std::to_string(first) + ": " + what +
                          " differ from rank 0's (every rank must run the same command on the same files)");
#else
  (void)what;
  (void)content;
#endif
}

RunResult runSplit(Kernel& kernel, const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  const World& w = world();
  RunTiming& t = timing();
  t = RunTiming{};
  if (paths == 0 || inputs.empty()) throw std::invalid_argument("paths must be at least 1");
  const uint64_t blockPaths = std::max<uint64_t>(1, kernel.blockPaths());  // 0: runBlocks throws why
  const uint64_t blocks = (paths + blockPaths - 1) / blockPaths;
  t.blocks = blocks;
  const auto [lo, hi] = share(blocks, w.rank, w.size);
  const uint64_t first = lo * blockPaths, count = std::min(paths, hi * blockPaths) - std::min(paths, first);

  BlockReduction reduction;
  Keep kept;
  double own = 0;
  try {
    if (kernel.blockPaths() == 0 || count > 0) own = kernel.runBlocks(inputs, first, count, seed, w.rank == 0 ? static_cast<BlockSink&>(reduction) : kept);
  } catch (const std::exception& e) {
    agree(exitCodeOf(e), e.what());
  }
  const auto ownEnd = std::chrono::steady_clock::now();
  agree();
#ifdef TAPELAB_HAVE_MPI
  // Doubles per block: every rank that ran knows it.
  unsigned long long blockSize = std::max<size_t>(kept.blockSize, reduction.sums().size());
  MPI_Allreduce(MPI_IN_PLACE, &blockSize, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  t.rankSeconds.assign(static_cast<size_t>(w.size), 0.0);
  MPI_Gather(&own, 1, MPI_DOUBLE, t.rankSeconds.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  t.waitSeconds = since(ownEnd);
  const auto reduceStart = std::chrono::steady_clock::now();
  if (w.rank == 0) {
    std::vector<double> buffer;
    for (int r = 1; r < w.size; ++r) {
      const auto [rlo, rhi] = share(blocks, r, w.size);
      for (uint64_t b = rlo; b < rhi;) {
        const uint64_t n = std::min<uint64_t>(rhi - b, std::max<uint64_t>(1, kChunk / blockSize));
        buffer.resize(n * blockSize);
        MPI_Recv(buffer.data(), static_cast<int>(buffer.size()), MPI_DOUBLE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        reduction.add(buffer.data(), n, blockSize);
        b += n;
      }
    }
  } else {
    for (uint64_t b = 0; b < hi - lo;) {
      const uint64_t n = std::min<uint64_t>(hi - lo - b, std::max<uint64_t>(1, kChunk / blockSize));
      MPI_Send(kept.values.data() + b * blockSize, static_cast<int>(n * blockSize), MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
      b += n;
    }
  }
  // Every rank gets rank 0's sums, so every rank's result (and what it does next) is the same.
  std::vector<double>& sums = reduction.sums();
  sums.resize(blockSize, 0.0);
  MPI_Bcast(sums.data(), static_cast<int>(blockSize), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  t.reduceSeconds = since(reduceStart);
#endif
  RunResult r = reduction.finish(inputs.size(), inputs[0].size(), paths, seed);
  r.seconds = since(t0);
  return r;
}

}  // namespace tapelab::ranks
