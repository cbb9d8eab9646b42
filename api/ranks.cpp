#include "api/ranks.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "api/knobs.h"
#include "planner/external.h"
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

#endif

// One chunk's per-block partials, filled by the engine thread (a buffer reused across chunks).
class Fill final : public BlockSink {
 public:
  Fill(std::vector<double>& into, uint64_t blocks) : into_(into), blocks_(blocks) { into_.clear(); }
  void add(const double* partials, uint64_t blocks, size_t blockSize) override {
    if (this->blockSize && blockSize != this->blockSize) throw std::logic_error("runBlocks: blocks of different sizes");
    if (!this->blockSize) into_.reserve(blocks_ * blockSize);  // one allocation (none for a reused buffer)
    this->blockSize = blockSize;
    into_.insert(into_.end(), partials, partials + blocks * blockSize);
  }
  size_t blockSize = 0;

 private:
  std::vector<double>& into_;
  uint64_t blocks_;
};

// A finished chunk: its partials, or why it did not run (exitCode != 0; -1: skipped after a failure).
struct Part {
  uint64_t chunk = 0;
  std::vector<double> partials;
  size_t blockSize = 0;
  int exitCode = 0;
  std::string failure;
};

// The engine thread of one rank: runs the chunks it is given, in order, and hands them back. The
// MPI calls stay on the calling thread (MPI_THREAD_FUNNELED); this one only runs the kernel.
class EngineThread {
 public:
  using Clock = std::chrono::steady_clock;
  EngineThread(Kernel& kernel, const std::vector<std::vector<double>>& inputs, const std::vector<uint64_t>& starts,
               uint64_t blockPaths, uint64_t paths, uint64_t seed, Clock::time_point t0)
      : kernel_(kernel), inputs_(inputs), starts_(starts), blockPaths_(blockPaths), paths_(paths), seed_(seed), t0_(t0) {}
  ~EngineThread() { close(); }

  void give(uint64_t chunk) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      todo_.push_back(chunk);
    }
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    cv_.notify_all();
  }
  // Finished chunks, waiting up to `wait` for one when none is.
  std::vector<Part> take(std::chrono::microseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    if (done_.empty() && wait.count() > 0) cv_.wait_for(lock, wait, [&] { return !done_.empty(); });
    std::vector<Part> out(std::make_move_iterator(done_.begin()), std::make_move_iterator(done_.end()));
    done_.clear();
    return out;
  }
  // Waits up to `wait` for a finished chunk (take() then has it).
  void await(std::chrono::microseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, wait, [&] { return !done_.empty(); });
  }
  void recycle(std::vector<double>&& buffer) {
    std::lock_guard<std::mutex> lock(mu_);
    spare_.push_back(std::move(buffer));
  }
  std::vector<double> spare() {
    std::lock_guard<std::mutex> lock(mu_);
    if (spare_.empty()) return {};
    std::vector<double> b = std::move(spare_.back());
    spare_.pop_back();
    return b;
  }
  // No more chunks: the thread ends once its queue is empty.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  RankTiming timing;  // read after close()

 private:
  void loop() {
    bool failed = false;
    for (;;) {
      Part p;
      {
        std::unique_lock<std::mutex> lock(mu_);
        const auto idle = Clock::now();
        cv_.wait(lock, [&] { return !todo_.empty() || closed_; });
        if (todo_.empty()) return;
        if (timing.chunks) timing.idleSeconds += since(idle);
        p.chunk = todo_.front();
        todo_.pop_front();
        if (!spare_.empty()) {
          p.partials = std::move(spare_.back());
          spare_.pop_back();
        }
      }
      if (failed) {
        p.exitCode = -1;
      } else {
        try {
          const uint64_t first = starts_[p.chunk] * blockPaths_;
          const uint64_t count = std::min(paths_, starts_[p.chunk + 1] * blockPaths_) - first;
          Fill fill(p.partials, starts_[p.chunk + 1] - starts_[p.chunk]);
          timing.busySeconds += kernel_.runBlocks(inputs_, first, count, seed_, fill);
          p.blockSize = fill.blockSize;
          timing.chunks += 1;
          timing.blocks += starts_[p.chunk + 1] - starts_[p.chunk];
          timing.endSeconds = since(t0_);
        } catch (const std::exception& e) {
          failed = true;
          p.exitCode = exitCodeOf(e);
          p.failure = e.what();
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        done_.push_back(std::move(p));
      }
      cv_.notify_all();
    }
  }

  Kernel& kernel_;
  const std::vector<std::vector<double>>& inputs_;
  const std::vector<uint64_t>& starts_;
  const uint64_t blockPaths_, paths_, seed_;
  const Clock::time_point t0_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<uint64_t> todo_;
  std::deque<Part> done_;
  std::vector<std::vector<double>> spare_;
  bool closed_ = false;
  std::thread thread_;
};

#ifdef TAPELAB_HAVE_MPI
// Point-to-point tags of a split run: rank 0's reply to each finished chunk (the next chunk's
// index, or -1), a chunk that failed ({chunk, exit code}), and chunk c's partials (kTagData + c).
constexpr int kTagNext = 1, kTagFailed = 2, kTagData = 16;
// How often the MPI thread looks for messages while its engine runs.
constexpr std::chrono::microseconds kPoll{100};
#endif

}  // namespace

int exitCodeOf(const std::exception& e) {
  if (const auto* f = dynamic_cast<const RankFailure*>(&e)) return f->exitCode;
  if (dynamic_cast<const EngineUnavailable*>(&e) || dynamic_cast<const StrategyUnavailable*>(&e)) return 3;
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

std::vector<uint64_t> chunkStarts(uint64_t blocks, uint64_t granule, int ranks) {
  granule = std::max<uint64_t>(granule, 1);
  // Enough granules that the chunks stay within kMaxChunks (the last ~4*ranks are one granule each).
  const uint64_t fold = static_cast<uint64_t>(std::max(ranks, 1)) * 4;
  granule = std::max(granule, (blocks + kMaxChunks / 2 - 1) / (kMaxChunks / 2));
  std::vector<uint64_t> starts{0};
  for (uint64_t at = 0; at < blocks;) {
    const uint64_t left = blocks - at;
    const uint64_t want = std::max<uint64_t>(1, ((left + fold - 1) / fold + granule - 1) / granule) * granule;
    at += std::min(left, want);
    starts.push_back(at);
  }
  return starts;
}

uint64_t chunkGranule(uint64_t blockPaths) {
  const char* name = "TAPELAB_MPI_CHUNK_PATHS";
  const auto text = knobValue(name);
  const uint64_t paths = text ? parseUnsigned(*text, name, 1) : uint64_t{1} << 20;
  blockPaths = std::max<uint64_t>(blockPaths, 1);
  return std::max<uint64_t>(1, paths / blockPaths + (paths % blockPaths != 0));
}

namespace {

// Every rank's chunks: the kernel's paths per block and the chunks' first blocks, the same on every
// rank (agreed, or every rank throws why).
struct SplitLayout {
  uint64_t blockPaths = 0, blocks = 0, chunks = 0;
  std::vector<uint64_t> starts;
};
SplitLayout splitLayout(Kernel& kernel, const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) {
  SplitLayout l;
  l.blockPaths = kernel.blockPaths();
  uint64_t granule = 1;
  try {
    if (l.blockPaths == 0) {
      std::vector<double> unused;
      Fill none(unused, 0);
      kernel.runBlocks(inputs, 0, paths, seed, none);  // throws why
    }
    granule = chunkGranule(l.blockPaths);
  } catch (const std::exception& e) {
    agree(exitCodeOf(e), e.what());
  }
  agreeOn("the kernel's paths per block and TAPELAB_MPI_CHUNK_PATHS",
          std::to_string(l.blockPaths) + " " + std::to_string(granule));
  l.blocks = (paths + l.blockPaths - 1) / l.blockPaths;
  l.starts = chunkStarts(l.blocks, granule, world().size);
  l.chunks = l.starts.size() - 1;
  return l;
}

#ifdef TAPELAB_HAVE_MPI
// One rank's side of the chunk exchange of a split run.
struct Exchange {
  Exchange(EngineThread& e, const std::vector<uint64_t>& s, uint64_t c, RunTiming& rt, BlockReduction& r,
           std::chrono::steady_clock::time_point b)
      : engine(e), starts(s), chunks(c), t(rt), reduction(r), begin(b) {}
  EngineThread& engine;
  const std::vector<uint64_t>& starts;
  uint64_t chunks;
  RunTiming& t;
  BlockReduction& reduction;
  std::chrono::steady_clock::time_point begin;
  int failedCode = 0;
  std::string failure;
  double ownEnd = -1, lastArrival = 0;
  uint64_t given = 0;  // chunks given to this rank's engine and not yet back

  void noteFailure(int code, const std::string& why) {
    if (!failedCode && code > 0) failedCode = code, failure = why;
  }
};

// Rank 0: hands out chunks as ranks finish them and adds the chunks in block order.
struct Lead {
  Lead(Exchange& e, uint64_t first) : x(e), next(first), handedOut(first) {}
  Exchange& x;
  uint64_t next, handedOut, reported = 0, reduced = 0;
  bool stop = false;  // a chunk failed somewhere: hand out no more, add nothing
  std::map<uint64_t, Part> filed;

  int64_t nextChunk() {
    if (stop || next >= x.chunks) return -1;
    ++handedOut;
    return static_cast<int64_t>(next++);
  }
  // Chunks this rank's engine finished; returns whether there were any.
  bool takeOwn() {
    bool busy = false;
    for (Part& p : x.engine.take(std::chrono::microseconds(0))) {
      busy = true;
      ++reported;
      --x.given;
      if (p.exitCode) {
        stop = true;
        x.noteFailure(p.exitCode, p.failure);
      } else {
        filed.emplace(p.chunk, std::move(p));
      }
      if (const int64_t c = nextChunk(); c >= 0) x.engine.give(static_cast<uint64_t>(c)), ++x.given;
      if (x.given == 0 && x.ownEnd < 0) x.ownEnd = since(x.begin);
    }
    return busy;
  }
  // One message of another rank (a chunk's partials, or its failure), answered with the next chunk.
  bool receiveOne() {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return false;
    if (st.MPI_TAG >= kTagData) {
      Part p;
      p.chunk = static_cast<uint64_t>(st.MPI_TAG - kTagData);
      int count = 0;
      MPI_Get_count(&st, MPI_DOUBLE, &count);
      p.partials = x.engine.spare();
      p.partials.resize(static_cast<size_t>(count));
      p.blockSize = static_cast<size_t>(count) / (x.starts[p.chunk + 1] - x.starts[p.chunk]);
      MPI_Recv(p.partials.data(), count, MPI_DOUBLE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      filed.emplace(p.chunk, std::move(p));
    } else {
      std::array<int64_t, 2> why{};
      MPI_Recv(why.data(), 2, MPI_INT64_T, st.MPI_SOURCE, kTagFailed, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      stop = true;
    }
    ++reported;
    x.lastArrival = since(x.begin);
    int64_t c = nextChunk();
    MPI_Send(&c, 1, MPI_INT64_T, st.MPI_SOURCE, kTagNext, MPI_COMM_WORLD);
    return true;
  }
  // Every chunk whose predecessors are all in, in block order: the single process's additions.
  void reduceInOrder() {
    while (!stop && !filed.empty() && filed.begin()->first == reduced) {
      const auto r0 = std::chrono::steady_clock::now();
      Part& p = filed.begin()->second;
      x.reduction.add(p.partials.data(), x.starts[p.chunk + 1] - x.starts[p.chunk], p.blockSize);
      const double dt = since(r0);
      x.t.reduceSeconds += dt;
      if (x.ownEnd >= 0) x.t.tailReduceSeconds += dt;
      x.engine.recycle(std::move(p.partials));
      filed.erase(filed.begin());
      ++reduced;
    }
  }
  void run() {
    while (reported < handedOut) {
      bool busy = takeOwn();
      busy = receiveOne() || busy;
      reduceInOrder();
      // Nothing to do: wait for our engine (or the poll interval) before looking again.
      if (!busy && reported < handedOut) x.engine.await(kPoll);
    }
  }
};

// Another rank: sends each finished chunk at once; each send is answered with the next chunk or -1.
void follow(Exchange& x) {
  std::vector<std::pair<MPI_Request, std::vector<double>>> sending;
  uint64_t sent = 0, answered = 0;
  int64_t reply = -1;
  MPI_Request replyRequest = MPI_REQUEST_NULL;
  while (x.given > 0 || answered < sent || !sending.empty()) {
    for (Part& p : x.engine.take(kPoll)) {
      --x.given;
      if (p.exitCode) x.noteFailure(p.exitCode, p.failure);
      const size_t count = p.partials.size();
      if (!p.exitCode && count > static_cast<size_t>(INT32_MAX)) {
        p.exitCode = 1;
        x.noteFailure(1, "chunk " + std::to_string(p.chunk) + " holds more than 2^31 partial sums; set TAPELAB_MPI_CHUNK_PATHS lower");
      }
      if (p.exitCode) {
        const std::array<int64_t, 2> note{static_cast<int64_t>(p.chunk), p.exitCode};
        MPI_Send(note.data(), 2, MPI_INT64_T, 0, kTagFailed, MPI_COMM_WORLD);
        x.engine.recycle(std::move(p.partials));
      } else {
        sending.emplace_back(MPI_REQUEST_NULL, std::move(p.partials));
        auto& [request, data] = sending.back();
        MPI_Isend(data.data(), static_cast<int>(count), MPI_DOUBLE, 0, kTagData + static_cast<int>(p.chunk), MPI_COMM_WORLD,
                  &request);
      }
      ++sent;
    }
    for (size_t i = 0; i < sending.size();) {
      int flag = 0;
      MPI_Test(&sending[i].first, &flag, MPI_STATUS_IGNORE);
      if (!flag) {
        ++i;
        continue;
      }
      x.engine.recycle(std::move(sending[i].second));
      sending.erase(sending.begin() + static_cast<std::ptrdiff_t>(i));
    }
    while (answered < sent) {
      if (replyRequest == MPI_REQUEST_NULL) MPI_Irecv(&reply, 1, MPI_INT64_T, 0, kTagNext, MPI_COMM_WORLD, &replyRequest);
      int flag = 0;
      MPI_Test(&replyRequest, &flag, MPI_STATUS_IGNORE);
      if (!flag) break;
      ++answered;
      if (reply >= 0) x.engine.give(static_cast<uint64_t>(reply)), ++x.given;
    }
  }
}

// Every rank gets rank 0's sums, so every rank's result (and what it does next) is the same; rank 0
// gathers every rank's timing.
void shareSums(Exchange& x, const World& w) {
  unsigned long long blockSize = x.reduction.sums().size();
  MPI_Bcast(&blockSize, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  std::vector<double>& sums = x.reduction.sums();
  sums.resize(blockSize, 0.0);
  MPI_Bcast(sums.data(), static_cast<int>(blockSize), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (x.ownEnd >= 0) x.t.tailSeconds = since(x.begin) - x.ownEnd;
  const RankTiming& mine = x.engine.timing;
  const std::array<double, 5> row{static_cast<double>(mine.chunks), static_cast<double>(mine.blocks), mine.busySeconds,
                                  mine.idleSeconds, mine.endSeconds};
  std::vector<double> rows(w.rank == 0 ? row.size() * static_cast<size_t>(w.size) : 0);
  MPI_Gather(row.data(), static_cast<int>(row.size()), MPI_DOUBLE, rows.data(), static_cast<int>(row.size()), MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  for (size_t r = 0; r + row.size() <= rows.size(); r += row.size())
    x.t.ranks.push_back({static_cast<uint64_t>(rows[r]), static_cast<uint64_t>(rows[r + 1]), rows[r + 2], rows[r + 3], rows[r + 4]});
}

// The exchange on this rank, its failure agreed by all, the sums shared.
void exchange(Kernel& kernel, const std::vector<std::vector<double>>& inputs, const SplitLayout& l, uint64_t paths,
              uint64_t seed, BlockReduction& reduction) {
  const World& w = world();
  const auto begin = std::chrono::steady_clock::now();
  EngineThread engine(kernel, inputs, l.starts, l.blockPaths, paths, seed, begin);
  Exchange x(engine, l.starts, l.chunks, timing(), reduction, begin);
  // The chunk protocol cannot be left half-way without leaving other ranks waiting for a message:
  // an exception in it (a failed allocation, a thread that cannot start) ends the job.
  try {
    // Rank r starts with chunks r and r + N; each chunk a rank finishes brings it the next one.
    const uint64_t first = std::min<uint64_t>(l.chunks, 2 * static_cast<uint64_t>(w.size));
    for (uint64_t c = static_cast<uint64_t>(w.rank); c < first; c += static_cast<uint64_t>(w.size)) {
      engine.give(c);
      ++x.given;
    }
    if (w.rank == 0) Lead(x, first).run();
    else follow(x);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tapelab: rank %d: the split run failed inside its chunk exchange: %s; aborting every rank\n",
                 w.rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  engine.close();
  x.t.waitSeconds = x.ownEnd >= 0 ? std::max(0.0, x.lastArrival - x.ownEnd) : 0;
  agree(x.failedCode, x.failure);
  shareSums(x, w);
}
#endif

}  // namespace

RunResult runSplit(Kernel& kernel, const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  RunTiming& t = timing();
  t = RunTiming{};
  if (paths == 0 || inputs.empty()) throw std::invalid_argument("paths must be at least 1");
  // Every rank can run part of a run, with the same blocks and chunks.
  const SplitLayout l = splitLayout(kernel, inputs, paths, seed);
  t.blocks = l.blocks;
  t.chunks = l.chunks;
  BlockReduction reduction;
#ifdef TAPELAB_HAVE_MPI
  exchange(kernel, inputs, l, paths, seed, reduction);
#else
  throw std::logic_error("runSplit without MPI");
#endif
  RunResult r = reduction.finish(inputs.size(), inputs[0].size(), paths, seed);
  r.seconds = since(t0);
  return r;
}

}  // namespace tapelab::ranks
