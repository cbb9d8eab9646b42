// Worker threads that cannot abort the process: a pool of `count` workers (the caller is one of
// them) over a shared queue, where a thread the system refuses to start (EAGAIN under a thread
// limit, --threads 100000) is one fewer worker, never std::terminate.
#pragma once
#include <functional>

namespace tapelab {

// Runs `worker` on the calling thread and on up to count - 1 more threads, and joins every thread
// it started before it returns or rethrows (the caller's worker may throw). The workers take their
// jobs from a queue they share, so fewer threads do the same work: a thread that cannot be started
// is left out. Returns how many workers ran (at least 1). count 0 is taken as 1.
unsigned runWorkers(unsigned count, const std::function<void()>& worker);

}  // namespace tapelab
