// The tapelab command as the CLI tests run it: a shell line, its exit code, its stdout and its stderr
// apart. "tapelab" at the start of a line, or after "| ", is the binary under test.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

// 1 under AddressSanitizer, whose shadow memory does not fit under `ulimit -v` (tests that limit the
// address space skip there), else 0.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TAPELAB_HAS_ASAN 1
#endif
#endif
#ifndef TAPELAB_HAS_ASAN
#define TAPELAB_HAS_ASAN 0
#endif

namespace tapelab::clitest {

inline const std::string kTapelab = "'" TAPELAB_BINARY_DIR "/cli/tapelab'";

struct Proc {
  int code = -1;  // the exit status; -1 when the line did not exit (a signal)
  std::string out, err;
};

// A fresh path under the test's temporary folder, unique in this process.
inline std::string tempPath(const std::string& stem) {
  static int counter = 0;
  return ::testing::TempDir() + "tapelab_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" +
         stem;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs a shell command line with `env` ("VAR=value ...") set for its first command; stderr of the
// whole line is captured apart from stdout.
inline Proc sh(std::string line, const std::string& env = "") {
  auto expand = [&](size_t at) { line.replace(at, 7, kTapelab); };
  if (line.rfind("tapelab", 0) == 0) expand(0);
  for (size_t at; (at = line.find("| tapelab")) != std::string::npos;) expand(at + 2);
  if (!env.empty()) line = env + " " + line;
  const std::string errPath = tempPath("stderr");
  const std::string cmd = "{ " + line + " ; } 2>'" + errPath + "'";
  Proc p;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) {
    ADD_FAILURE() << "popen failed: " << cmd;
    return p;
  }
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) p.out.append(buf, n);
  const int status = pclose(pipe);
  p.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  p.err = slurp(errPath);
  std::remove(errPath.c_str());
  return p;
}

// `tapelab ARGS` with `env` set (not named tapelab: that is the namespace).
inline Proc runTapelab(const std::string& args, const std::string& env = "") { return sh("tapelab " + args, env); }

}  // namespace tapelab::clitest
