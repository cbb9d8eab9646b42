// Kernel compiles that stay bounded (issue 48). Every engine compiles a kernel under a CompileWatch:
// past 5 s the compile says so on stderr (engine, kernel, source bytes, seconds so far; again every
// 30 s, and its total when it ends), and past EngineSettings::compileTimeout (--compile-timeout,
// TAPELAB_COMPILE_TIMEOUT; 0 = no limit) it ends with CompileTimeout. A compiler process (cpu-jit's
// C++ compiler, hipcc) is terminated at the deadline (util/process.h's runProcess); an in-process
// compiler (NVRTC, shaderc, a Vulkan pipeline, an OpenCL program build) runs on a thread of its own
// (run()), which is left to finish alone at the deadline, its result dropped: the process is then
// marked (compileAbandonedInProcess) so that a front end leaves through _Exit, as after a device
// timeout, rather than tear down a library a thread is still inside.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

namespace tapelab {

// A compile that passed EngineSettings::compileTimeout (the CLI exits 1).
struct CompileTimeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where progress lines go (default: stderr, "tapelab: " first). A test or a front end may take them.
void setCompileProgressSink(std::function<void(const std::string&)> sink);

// Whether an in-process compile was left running past its deadline (CompileWatch::run).
bool compileAbandonedInProcess();
// Waits up to `seconds` for every abandoned compile thread to end; whether they all did (tests).
bool waitForAbandonedCompiles(double seconds);

class CompileWatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr double kProgressAfter = 5, kProgressEvery = 30;

  // `engine` and `what` name the kernel ("cpu-jit", "the register kernel of asian-252"), `sourceBytes`
  // its source; `limitSeconds`: EngineSettings::compileTimeout (0 = none).
  CompileWatch(std::string engine, std::string what, size_t sourceBytes, double limitSeconds,
               double progressAfter = kProgressAfter, double progressEvery = kProgressEvery);
  ~CompileWatch();
  CompileWatch(const CompileWatch&) = delete;
  CompileWatch& operator=(const CompileWatch&) = delete;

  double limit() const { return limit_; }
  Clock::time_point deadline() const;   // Clock::time_point::max() without a limit
  double remaining() const;             // seconds to the deadline (infinity without a limit)
  // Throws CompileTimeout: "<engine>: compiling <what> (<size> of source) took longer than
  // --compile-timeout <S> s (TAPELAB_COMPILE_TIMEOUT; 0 = no limit)".
  [[noreturn]] void timedOut() const;

  // Runs `f` and returns what it returns; with a limit, on a thread of its own, waited for up to the
  // deadline: past it the thread is left to finish alone (whatever `f` uses must be its own: capture
  // by value, never this frame's locals) and timedOut() throws. An exception of `f` is rethrown.
  template <class F>
  std::invoke_result_t<F&> run(F f);

 private:
  void startDetached(std::function<void()> body);  // falls back to running it here
  [[noreturn]] void abandon();
  void progress();  // the progress thread's loop

  std::string engine_, what_;
  size_t bytes_;
  double limit_, after_, every_;
  Clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, said_ = false;
  std::thread progress_;
};

template <class F>
std::invoke_result_t<F&> CompileWatch::run(F f) {
  using R = std::invoke_result_t<F&>;
  if (!(limit_ > 0)) return f();
  auto task = std::make_shared<std::packaged_task<R()>>(std::move(f));
  std::future<R> result = task->get_future();
  startDetached([task] { (*task)(); });
  if (result.wait_until(deadline()) == std::future_status::timeout) abandon();
  return result.get();
}

}  // namespace tapelab
