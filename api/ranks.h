// One run over several processes (issue #16): `mpirun -np N tapelab ...`, or
// any program using MonteCarlo under mpirun. Built with MPI (TAPELAB_MPI) and
// started by mpirun, a run's B reduction blocks (engine/engine.h) are cut into
// chunks of whole blocks (chunkStarts: large first, one granule at the end), and
// the ranks take chunks as they go: rank r starts with chunks r and r+N, then
// each chunk it finishes brings it the next one from rank 0 (a slower device
// simply takes fewer). Each rank runs its chunks on an engine thread while its
// MPI thread sends every finished chunk's per-block partials to rank 0 at once;
// rank 0 files them by chunk and adds each chunk, in block order, as soon as all
// before it are in: exactly the single process's additions. Only the last
// chunks' transfer and additions are left when the engines finish. Rank 0
// broadcasts the sums, so every rank gets the bits of the single-process run,
// for any N, any device count and any assignment of chunks to ranks.
//
// Agreement: every collective step is an `agree`: one all-reduce of which ranks
// failed and of a content hash. A rank whose step failed (an exception, an
// unusable engine) makes every rank throw the same RankFailure naming it; a
// hash that differs from rank 0's (tape, plan, options, inputs) likewise. A
// rank that fails between steps joins the next step with its failure (the
// CLI's catch), so ranks never wait on one that left.
//
// In one process (not started by mpirun, or built without MPI) size() is 1 and
// nothing here communicates.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace tapelab::ranks {

// A failure every rank agreed on: the first failing rank's reason and exit code
// (2 invalid input, 3 engine unusable, 1 otherwise). what() names the rank
// ("rank 1: ...") unless every rank failed.
struct RankFailure : std::runtime_error {
  RankFailure(int rank, int exitCode, const std::string& what) : std::runtime_error(what), rank(rank), exitCode(exitCode) {}
  int rank;
  int exitCode;
};

// The exit code a front end gives an exception: RankFailure's own, 3 for EngineUnavailable,
// 2 for std::invalid_argument and a tape parse error, else 1.
int exitCodeOf(const std::exception& e);

// Starts MPI when this process was started by mpirun/mpiexec (its environment says so) and
// tapelab was built with MPI; otherwise nothing. Idempotent; MPI is finalized at exit.
void start(int* argc = nullptr, char*** argv = nullptr);
bool builtWithMpi();
int rank();       // 0 in one process
int size();       // 1 in one process
int localRank();  // rank among the processes of this host: which GPU it takes (EngineSettings::deviceSlot)

// Collective: every rank calls it at the same point, with its failure or none (exitCode 0).
// Throws RankFailure on every rank when any failed.
void agree(int exitCode = 0, const std::string& reason = "");
// Collective: throws RankFailure(r, 2, "rank r: <what> differ from rank 0's ...") on every rank
// when the XXH3-128 hash (util/hash.h) of rank r's `content` differs from rank 0's.
void agreeOn(const std::string& what, const std::string& content);

// Where the time of the last distributed run went (rank 0 has every rank's numbers; every time
// counted from the end of the agreement that starts the run, on each rank's own clock).
struct RankTiming {
  uint64_t chunks = 0, blocks = 0;  // what this rank ran
  double busySeconds = 0;           // its runBlocks calls (its paths on its device)
  double idleSeconds = 0;           // its engine thread waiting for a chunk before its last one
  double endSeconds = 0;            // when its last chunk ended
};
struct RunTiming {
  std::vector<RankTiming> ranks;
  uint64_t blocks = 0, chunks = 0;  // reduction blocks and chunks of the run
  double waitSeconds = 0;           // rank 0: from its own last chunk's end to the last partials' arrival
  double reduceSeconds = 0;         // rank 0: adding partials in block order, all of it (mostly under the engines)
  double tailReduceSeconds = 0;     // rank 0: the part of reduceSeconds after its own last chunk
  double tailSeconds = 0;           // rank 0: from its own last chunk's end to the sums broadcast
};
const RunTiming& lastRunTiming();

// The chunks of a run of `blocks` blocks over `ranks` ranks: chunk c is blocks
// [starts[c], starts[c+1]). Each takes a quarter of the blocks left over the ranks, in whole
// `granule`s (at least one), so the first are large (few calls, transfers hidden under the
// engines) and the last are one granule (a short tail); at most kMaxChunks of them.
constexpr uint64_t kMaxChunks = 30000;  // chunk indices travel as MPI tags (at least 32767)
std::vector<uint64_t> chunkStarts(uint64_t blocks, uint64_t granule, int ranks);
// Blocks per granule: TAPELAB_MPI_CHUNK_PATHS (default 2^20) paths in whole blocks of `blockPaths`.
uint64_t chunkGranule(uint64_t blockPaths);

// One run of `kernel` split over the ranks (size() > 1): every rank calls it with the same
// arguments and gets the single-process run's result. Throws RankFailure when a rank failed.
RunResult runSplit(Kernel& kernel, const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed);

}  // namespace tapelab::ranks
