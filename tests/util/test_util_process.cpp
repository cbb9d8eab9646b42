// util/process.h: running a child, stopping it when asked, and what a stop handler cleans up.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "util/files.h"
#include "util/process.h"

using namespace tapelab;
namespace fs = std::filesystem;

namespace {

fs::path freshDir() {
  const fs::path d = fs::temp_directory_path() / ("tapelab-process-test-" + std::to_string(::getpid()) + "-" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Whether a process is still running (a zombie no parent reaps counts as gone).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

pid_t pidIn(const fs::path& file) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(file);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

}  // namespace

TEST(UtilProcess, RunsAChildAndCapturesItsOutput) {
  const ProcessResult r = runProcess({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.output, "out\nerr\n");
  EXPECT_FALSE(r.interrupted);
  const ProcessResult missing = runProcess({"/no/such/program"});
  EXPECT_EQ(missing.status, -1);
  EXPECT_FALSE(missing.error.empty());
}

// An interrupt ends the child's whole process group (a compiler driver's own children too), promptly.
TEST(UtilProcess, InterruptEndsTheChildAndItsChildren) {
  const fs::path d = freshDir();
  const fs::path pidFile = d / "grandchild.pid";
  clearInterrupt();
  std::thread stopper([&] {
    const pid_t g = pidIn(pidFile);
    ASSERT_GT(g, 0);
    requestInterrupt();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const ProcessResult r = runProcess({"sh", "-c", "sleep 60 & echo $! > " + pidFile.string() + "; wait"});
  const auto took = std::chrono::steady_clock::now() - t0;
  stopper.join();
  clearInterrupt();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.status, -1);
  EXPECT_LT(took, std::chrono::seconds(10));
  const pid_t grandchild = pidIn(pidFile);
  for (int i = 0; i < 200 && running(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(running(grandchild)) << "the child's own child survived";
  // Asked before it starts: nothing is started.
  requestInterrupt();
  EXPECT_TRUE(runProcess({"true"}).interrupted);
  EXPECT_THROW(throwIfInterrupted(), Interrupted);
  clearInterrupt();
  EXPECT_NO_THROW(throwIfInterrupted());
  fs::remove_all(d);
}

TEST(UtilProcess, ADeadlineEndsTheChildAndItsChildren) {
  const fs::path d = freshDir();
  const fs::path pidFile = d / "grandchild.pid";
  const auto t0 = std::chrono::steady_clock::now();
  const ProcessResult r = runProcess({"sh", "-c", "sleep 60 & echo $! > " + pidFile.string() + "; wait"},
                                     t0 + std::chrono::milliseconds(300));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(r.timedOut);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(r.status, -1);
  EXPECT_EQ(r.error, "passed its deadline");
  EXPECT_GE(took, std::chrono::milliseconds(300));
  EXPECT_LT(took, std::chrono::seconds(5));
  const pid_t grandchild = pidIn(pidFile);
  for (int i = 0; i < 200 && running(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(running(grandchild)) << "the child's own child survived";
  // A deadline far away changes nothing.
  const ProcessResult ok = runProcess({"sh", "-c", "echo hi"}, std::chrono::steady_clock::now() + std::chrono::hours(1));
  EXPECT_EQ(ok.status, 0);
  EXPECT_FALSE(ok.timedOut);
  fs::remove_all(d);
}

TEST(UtilProcess, TempFileIsRemovedWithItsScope) {
  const fs::path d = freshDir();
  const fs::path p = d / "x.tmp";
  {
    TempFile t(p.string());
    std::ofstream(p) << "partial";
    EXPECT_TRUE(fs::exists(p));
  }
  EXPECT_FALSE(fs::exists(p));
  fs::remove_all(d);
}

// SIGTERM and SIGINT with the stop handlers: the children's process groups end, the registered
// temporary files go, and the process dies of the signal.
TEST(UtilProcess, StopHandlersEndChildrenAndRemoveTemporaries) {
  for (int sig : {SIGTERM, SIGINT}) {
    const fs::path d = freshDir();
    const fs::path tmp = d / "kernel.so.123.0.tmp", pidFile = d / "grandchild.pid";
    const pid_t child = ::fork();
    if (child == 0) {
      installStopHandlers();
      TempFile t(tmp.string());
      std::ofstream(tmp) << "86 MB of object code";
      runProcess({"sh", "-c", "sleep 60 & echo $! > " + pidFile.string() + "; wait"});
      ::_exit(0);
    }
    const pid_t grandchild = pidIn(pidFile);
    ASSERT_GT(grandchild, 0);
    ASSERT_TRUE(fs::exists(tmp));
    ::kill(child, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "status " << status;
    EXPECT_FALSE(fs::exists(tmp)) << "signal " << sig;
    for (int i = 0; i < 200 && running(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(running(grandchild)) << "signal " << sig;
    fs::remove_all(d);
  }
}
