// util/ at the edges (issue 49): the run's own inputs never written over by any output, worker threads
// the system refuses, readers cut short by a signal, and text echoed in one-line messages.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "util/files.h"
#include "util/process.h"
#include "util/text.h"
#include "util/threads.h"

using namespace tapelab;
namespace fs = std::filesystem;

namespace {

fs::path freshDir() {
  const fs::path d = fs::temp_directory_path() / ("tapelab-util-edges-" + std::to_string(::getpid()) + "-" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// `body` in a child process (it changes what a process keeps: guardRunInputs, limits); its exit code.
int inChild(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

// After guardRunInputs every regular file an InputFile opened is refused as an output, by any name or
// link, by writeOutputFile, checkOutputFile and OutputFile alike (a --dump, a figure, a shortlist).
TEST(UtilFiles, GuardedRunInputsAreNeverOutputs) {
  const fs::path d = freshDir();
  std::ofstream(d / "in.tape") << "the input";
  fs::create_symlink(d / "in.tape", d / "link.csv");
  const int code = inChild([&] {
    guardRunInputs();
    readInputText((d / "in.tape").string(), 1000);
    for (const fs::path& out : {d / "in.tape", d / "link.csv"}) {
      try {
        writeOutputFile(out.string(), "overwritten", {}, "--dump");
        return 1;
      } catch (const OutputRefused& e) {
        if (std::string(e.what()).find("an input of this run; refusing to overwrite it") == std::string::npos) return 2;
      }
      try {
        OutputFile f(out.string());
        return 3;
      } catch (const OutputRefused&) {
      }
    }
    writeOutputFile((d / "other.csv").string(), "fine");  // anything else is written
    return 0;
  });
  EXPECT_EQ(code, 0);
  std::ifstream in(d / "in.tape");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "the input");
  // Without the guard (a library: Python passes its inputs itself) only the given inputs are refused.
  readInputText((d / "in.tape").string(), 1000);
  writeOutputFile((d / "copy.tape").string(), "x");
  fs::remove_all(d);
}

// 200 workers' stacks (8 MiB each) in a 512 MiB address space: most threads are refused; the work is
// done by those that started, and nothing aborts (std::thread's system_error left a joinable thread).
TEST(UtilThreads, RefusedThreadsAreFewerWorkersNotAnAbort) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "built with AddressSanitizer: its shadow memory does not fit a 512 MiB address space (the ci build "
                  "tests the refusal)";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "built with AddressSanitizer: its shadow memory does not fit a 512 MiB address space (the ci build "
                  "tests the refusal)";
#endif
#endif
  const int code = inChild([] {
    const rlimit limit{512u << 20, 512u << 20};
    ::setrlimit(RLIMIT_AS, &limit);
    std::atomic<int> next{0}, done{0};
    const unsigned ran = runWorkers(200, [&] {
      while (next.fetch_add(1) < 10000) done.fetch_add(1);
    });
    return done.load() == 10000 && ran >= 1 && ran < 200 ? 0 : 1;
  });
  EXPECT_EQ(code, 0);
  std::atomic<int> sum{0};
  EXPECT_EQ(runWorkers(4, [&] { sum.fetch_add(1); }), 4u);
  EXPECT_EQ(sum.load(), 4);
  EXPECT_EQ(runWorkers(0, [&] { sum.fetch_add(1); }), 1u);
}

// A reader waiting on a FIFO that a signal interrupts: stopOnInterruptedCall decides (Python's check runs
// its signal handlers there); without a check that stops, it waits on for the writer.
TEST(UtilProcess, AnInterruptedReaderStopsWhereItsCheckSaysSo) {
  const fs::path d = freshDir();
  const std::string fifo = (d / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int stopped = inChild([&] {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};  // no SA_RESTART: the blocked open returns EINTR
    ::sigaction(SIGALRM, &sa, nullptr);
    ::alarm(1);
    InterruptedCallCheck check(+[] { return true; });
    try {
      InputFile in(fifo, 100);
      return 1;
    } catch (const Interrupted&) {
      return 0;
    }
  });
  EXPECT_EQ(stopped, 0);
  const int waited = inChild([&] {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    ::sigaction(SIGALRM, &sa, nullptr);
    ::alarm(1);
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      std::ofstream(fifo) << "tapelab";
    });
    InterruptedCallCheck check(+[] { return false; });
    const std::string text = readInputText(fifo, 100);
    writer.join();
    return text == "tapelab" ? 0 : 1;
  });
  EXPECT_EQ(waited, 0);
  fs::remove_all(d);
}

TEST(UtilText, ControlCharactersAreWrittenOutAndCutsKeepCharactersWhole) {
  EXPECT_EQ(escapeControls("a\nb\r\tc\x1b[2J\x01\x7f d"), "a\\nb\\r\\tc\\e[2J\\x01\\x7f d");
  EXPECT_EQ(escapeControls("naïve €"), "naïve €");  // UTF-8 as it is
  EXPECT_EQ(shortened("abcdef", 10), "abcdef");
  EXPECT_EQ(shortened("abcdef", 3), "abc...");
  EXPECT_EQ(shortened("ab€", 3), "ab...");  // not inside the euro sign's three bytes
}
