// Running a compiler, and stopping when asked. cpu-jit runs the C++ compiler through runProcess,
// the hip engine hipcc. Long work (blocks of paths, dispatches, compiler runs) checks
// interruptRequested() and throws Interrupted; the CLI's signal handlers end the children and
// remove the temporary files this process registered (TempFile) before it dies of the signal.
#pragma once
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace tapelab {

struct ProcessResult {
  int status = -1;     // exit status, or -1 when it could not be started or was killed
  std::string output;  // stdout and stderr, interleaved as written
  std::string error;   // why it could not be started, or the signal that killed it
  bool interrupted = false;  // ended because interruptRequested() (its process group was terminated)
  bool timedOut = false;     // ended because it passed its deadline or time limit (its process group too)
};

// Runs argv (argv[0] looked up in PATH) with stdin from /dev/null and waits. The child leads its
// own process group; when interruptRequested() becomes true it is terminated (the whole group:
// a compiler driver's own children too) and `interrupted` is set. Thread-safe: the pipe is
// close-on-exec, so a child started by another thread does not hold it open. Past `deadline` the
// group is terminated likewise and `timedOut` set (a compile's limit, engine/compile_watch.h).
ProcessResult runProcess(const std::vector<std::string>& argv,
                         std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

// ------------------------------------------------------------ stopping when asked

// A run or compile stopped because interruptRequested() (Ctrl-C: Python's KeyboardInterrupt).
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};
void requestInterrupt() noexcept;  // async-signal-safe
void clearInterrupt() noexcept;
bool interruptRequested() noexcept;
void throwIfInterrupted();  // throws Interrupted when requested

// A blocking call of a reader (opening a FIFO that waits for its writer, a read) that a signal cut
// short (EINTR): stopOnInterruptedCall() says whether to stop (the reader throws Interrupted) or to
// call again. True when interruptRequested(), or when this thread's InterruptedCallCheck says so:
// the Python module sets one around its readers that runs the interpreter's signal handlers (PEP 475),
// so that Ctrl-C during read_tape of a FIFO is KeyboardInterrupt, not an error about the file.
bool stopOnInterruptedCall();
class InterruptedCallCheck {
 public:
  explicit InterruptedCallCheck(bool (*check)());  // for this thread, for the scope
  ~InterruptedCallCheck();
  InterruptedCallCheck(const InterruptedCallCheck&) = delete;
  InterruptedCallCheck& operator=(const InterruptedCallCheck&) = delete;

 private:
  bool (*previous_)();
};

// A temporary file this process is writing (a compiler's output, an entry before its rename):
// registered for the scope, so that a stop handler removes it. The destructor removes the file
// too (after a rename into place there is none left to remove).
class TempFile {
 public:
  explicit TempFile(std::string path);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int slot_ = -1;
};

// Installs handlers for SIGINT, SIGTERM and SIGHUP (the CLI's and every C++ driver's main): each
// terminates the process groups of the children runProcess is waiting for, removes every
// registered TempFile, then restores the default action and raises the signal again, so the
// process ends as the signal says (exit status 128+N in a shell). SIGXFSZ is ignored: a write past
// `ulimit -f` fails with EFBIG, which every writer reports in one line (no temporary file left).
void installStopHandlers();

}  // namespace tapelab
