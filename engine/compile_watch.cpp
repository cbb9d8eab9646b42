#include "engine/compile_watch.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <system_error>
#include <utility>

namespace tapelab {
namespace {

std::mutex sinkMu;
std::function<void(const std::string&)>& sink() {
  static auto* s = new std::function<void(const std::string&)>;
  return *s;
}

void say(const std::string& line) {
  std::lock_guard<std::mutex> lock(sinkMu);
  if (sink()) {
    sink()(line);
  } else {
    std::fprintf(stderr, "tapelab: %s\n", line.c_str());
    std::fflush(stderr);
  }
}

// Abandoned compile threads: how many still run, for waitForAbandonedCompiles.
std::atomic<bool> abandonedAny{false};
std::mutex runningMu;
std::condition_variable runningCv;
int running = 0;

std::string sizeText(size_t bytes) {
  char b[32];
  if (bytes >= (1u << 20))
    std::snprintf(b, sizeof b, "%.1f MB", static_cast<double>(bytes) / (1 << 20));
  else
    std::snprintf(b, sizeof b, "%.0f KB", std::ceil(static_cast<double>(bytes) / 1024));
  return b;
}

std::string seconds(double s) {  // "5", "35", "0.25", "900"
  char b[32];
  std::snprintf(b, sizeof b, s >= 100 ? "%.0f" : "%.3g", s);
  return b;
}

}  // namespace

void setCompileProgressSink(std::function<void(const std::string&)> s) {
  std::lock_guard<std::mutex> lock(sinkMu);
  sink() = std::move(s);
}

bool compileAbandonedInProcess() { return abandonedAny.load(); }

bool waitForAbandonedCompiles(double s) {
  std::unique_lock<std::mutex> lock(runningMu);
  return runningCv.wait_for(lock, std::chrono::duration<double>(s), [] { return running == 0; });
}

CompileWatch::CompileWatch(std::string engine, std::string what, size_t sourceBytes, double limitSeconds,
                           double progressAfter, double progressEvery)
    : engine_(std::move(engine)), what_(std::move(what)), bytes_(sourceBytes), limit_(limitSeconds),
      after_(progressAfter), every_(progressEvery), start_(Clock::now()) {
  try {
    progress_ = std::thread([this] { progress(); });
  } catch (const std::system_error&) {
    // No thread for progress lines: the compile goes on without them.
  }
}

CompileWatch::~CompileWatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (progress_.joinable()) progress_.join();
  if (said_)
    say(engine_ + ": " + what_ + ": compile ended after " +
        seconds(std::chrono::duration<double>(Clock::now() - start_).count()) + " s");
}

void CompileWatch::progress() {
  std::unique_lock<std::mutex> lock(mu_);
  double next = after_;
  while (!cv_.wait_until(lock, start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(next)),
                         [this] { return done_; })) {
    said_ = true;
    const std::string limit = limit_ > 0 ? " (limit " + seconds(limit_) + " s, --compile-timeout)" : "";
    lock.unlock();
    say(engine_ + ": compiling " + what_ + " (" + sizeText(bytes_) + " of source): " + seconds(next) + " s so far" + limit);
    lock.lock();
    next += every_;
  }
}

CompileWatch::Clock::time_point CompileWatch::deadline() const {
  if (!(limit_ > 0)) return Clock::time_point::max();
  return start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_));
}

double CompileWatch::remaining() const {
  if (!(limit_ > 0)) return std::numeric_limits<double>::infinity();
  return limit_ - std::chrono::duration<double>(Clock::now() - start_).count();
}

void CompileWatch::timedOut() const {
  throw CompileTimeout(engine_ + ": compiling " + what_ + " (" + sizeText(bytes_) + " of source) took longer than " +
                       "--compile-timeout " + seconds(limit_) + " s (TAPELAB_COMPILE_TIMEOUT; 0 = no limit)");
}

void CompileWatch::abandon() {
  abandonedAny.store(true);
  timedOut();
}

void CompileWatch::startDetached(std::function<void()> body) {
  {
    std::lock_guard<std::mutex> lock(runningMu);
    ++running;
  }
  auto wrapped = [body = std::move(body)] {
    body();
    std::lock_guard<std::mutex> lock(runningMu);
    --running;
    runningCv.notify_all();
  };
  try {
    std::thread(wrapped).detach();
  } catch (const std::system_error&) {
    wrapped();  // no thread to spare: compile here, without a limit
  }
}

}  // namespace tapelab
