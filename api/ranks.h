// One run over several processes (issue #16): `mpirun -np N tapelab ...`, or
// any program using MonteCarlo under mpirun. Built with MPI (TAPELAB_MPI) and
// started by mpirun, a run's paths are split over the ranks in whole reduction
// blocks (engine/engine.h): rank r runs blocks [r*B/N, (r+1)*B/N) of the B, each
// rank sends its blocks' partial sums to rank 0, which adds them in block order
// exactly as one process does, and broadcasts the sums back. So every rank gets
// the bits of the single-process run, for any N and any device count.
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

// Where the time of the last distributed run went (rank 0 has every rank's numbers).
struct RunTiming {
  std::vector<double> rankSeconds;  // each rank's runBlocks (its paths on its device)
  double waitSeconds = 0;           // rank 0: from its own part's end to every rank's agreement and times
  double reduceSeconds = 0;         // rank 0: receiving the other ranks' partials and adding them
  uint64_t blocks = 0;              // reduction blocks of the run
};
const RunTiming& lastRunTiming();

// One run of `kernel` split over the ranks (size() > 1): every rank calls it with the same
// arguments and gets the single-process run's result. Throws RankFailure when a rank failed.
RunResult runSplit(Kernel& kernel, const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed);

}  // namespace tapelab::ranks
