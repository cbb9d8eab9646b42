#include "util/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>

extern char** environ;

namespace tapelab {

namespace {

// What a stop handler must reach without locks or allocation: fixed tables of atomics.
constexpr int kTempSlots = 256;
constexpr int kChildSlots = 64;
std::atomic<const char*> tempSlots[kTempSlots];
std::atomic<pid_t> childSlots[kChildSlots];
std::atomic<bool> interruptFlag{false};

int registerChild(pid_t pid) {
  for (int i = 0; i < kChildSlots; ++i) {
    pid_t none = 0;
    if (childSlots[i].compare_exchange_strong(none, pid)) return i;
  }
  return -1;  // more children at once than slots: this one is not ended by a stop handler
}

void unregisterChild(int slot) {
  if (slot >= 0) childSlots[slot].store(0);
}

void removeTemporaries() {
  for (auto& s : tempSlots)
    if (const char* p = s.load()) ::unlink(p);
}

void sleepMs(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1'000'000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

extern "C" void onStopSignal(int sig) {
  const int saved = errno;
  interruptFlag.store(true);
  bool any = false;
  for (auto& c : childSlots)
    if (const pid_t pid = c.load(); pid > 0) {
      ::kill(-pid, SIGTERM);
      any = true;
    }
  removeTemporaries();
  // Give the children a moment to go (a compiler driver removes its own temporaries on SIGTERM),
  // then remove ours again: a child that was about to create one may have done it meanwhile.
  for (int i = 0; any && i < 100; ++i) {
    any = false;
    for (auto& c : childSlots)
      if (const pid_t pid = c.load(); pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) any = true;
    if (any) sleepMs(10);
  }
  removeTemporaries();
  ::signal(sig, SIG_DFL);
  errno = saved;
  ::raise(sig);  // delivered when this handler returns: the process ends as the signal says
}

}  // namespace

void requestInterrupt() noexcept { interruptFlag.store(true); }
void clearInterrupt() noexcept { interruptFlag.store(false); }
bool interruptRequested() noexcept { return interruptFlag.load(std::memory_order_relaxed); }
void throwIfInterrupted() {
  if (interruptRequested()) throw Interrupted();
}

namespace {
thread_local bool (*interruptedCallCheck)() = nullptr;
}  // namespace

bool stopOnInterruptedCall() {
  if (interruptRequested()) return true;
  return interruptedCallCheck && interruptedCallCheck();
}

InterruptedCallCheck::InterruptedCallCheck(bool (*check)()) : previous_(interruptedCallCheck) {
  interruptedCallCheck = check;
}
InterruptedCallCheck::~InterruptedCallCheck() { interruptedCallCheck = previous_; }

TempFile::TempFile(std::string path) : path_(std::move(path)) {
  for (int i = 0; i < kTempSlots; ++i) {
    const char* none = nullptr;
    if (tempSlots[i].compare_exchange_strong(none, path_.c_str())) {
      slot_ = i;
      break;
    }
  }
}

TempFile::~TempFile() {
  if (slot_ >= 0) tempSlots[slot_].store(nullptr);
  ::unlink(path_.c_str());
}

void installStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, s);  // one handler at a time
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    sigaction(s, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // nohup, a background job's SIGINT: stays ignored
    sigaction(s, &sa, nullptr);
  }
  // Past `ulimit -f` a write fails with EFBIG and the writer says so in one line (and removes its
  // temporary file), instead of SIGXFSZ ending the process with neither; children get it back.
  ::signal(SIGXFSZ, SIG_IGN);
}

ProcessResult runProcess(const std::vector<std::string>& argv, std::chrono::steady_clock::time_point deadline) {
  ProcessResult r;
  if (interruptRequested()) {
    r.interrupted = true;
    r.error = "interrupted before it started";
    return r;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r.error = std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);  // dup2 clears close-on-exec on 1 and 2
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  // Its own process group, so that ending it ends its children too; default signal actions and
  // an empty mask whatever this process has set.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ}) sigaddset(&defaults, s);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    r.error = std::strerror(rc);
    return r;
  }
  const int slot = registerChild(pid);
  using Clock = std::chrono::steady_clock;
  Clock::time_point killAt{};
  bool killed = false;
  char buf[4096];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int n = poll(&p, 1, 100);
    if (n < 0 && errno != EINTR) break;
    if (n > 0) {
      const ssize_t k = read(fds[0], buf, sizeof buf);
      if (k == 0) break;
      if (k < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        break;
      }
      r.output.append(buf, static_cast<size_t>(k));
    }
    const bool late = !r.timedOut && deadline != Clock::time_point::max() && Clock::now() > deadline;
    if ((interruptRequested() && !r.interrupted) || late) {
      (late ? r.timedOut : r.interrupted) = true;
      ::kill(-pid, SIGTERM);
      if (killAt == Clock::time_point{}) killAt = Clock::now() + std::chrono::seconds(2);
    }
    if ((r.interrupted || r.timedOut) && !killed && Clock::now() > killAt) {  // one that ignores SIGTERM
      ::kill(-pid, SIGKILL);
      killed = true;
    }
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  unregisterChild(slot);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (!WIFEXITED(st)) r.error = "killed by signal " + std::to_string(WTERMSIG(st));
  if (r.interrupted || r.timedOut) {
    r.status = -1;
    r.error = r.interrupted ? "interrupted" : "passed its deadline";
  }
  return r;
}

}  // namespace tapelab
