#include "util/threads.h"

#include <system_error>
#include <thread>
#include <vector>

namespace tapelab {

unsigned runWorkers(unsigned count, const std::function<void()>& worker) {
  std::vector<std::thread> pool;
  try {
    pool.reserve(count > 1 ? count - 1 : 0);
  } catch (const std::exception&) {  // a count beyond memory: as many as start, below
  }
  for (unsigned i = 1; i < count; ++i) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {  // the system's thread limit: the threads started share the work
      break;
    } catch (const std::bad_alloc&) {
      break;
    }
  }
  struct Joiner {
    std::vector<std::thread>& pool;
    ~Joiner() {
      for (std::thread& t : pool)
        if (t.joinable()) t.join();
    }
  } joiner{pool};
  worker();
  return static_cast<unsigned>(pool.size()) + 1;
}

}  // namespace tapelab
