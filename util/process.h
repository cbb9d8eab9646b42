// Running a compiler: one child process, its output captured. cpu-jit runs the
// C++ compiler through it, the hip engine hipcc.
#pragma once
#include <string>
#include <vector>

namespace tapelab {

struct ProcessResult {
  int status = -1;     // exit status, or -1 when it could not be started or was killed
  std::string output;  // stdout and stderr, interleaved as written
  std::string error;   // why it could not be started, or the signal that killed it
};

// Runs argv (argv[0] looked up in PATH) with stdin from /dev/null and waits.
// Thread-safe: the pipe is close-on-exec, so a child started by another thread
// does not hold it open.
ProcessResult runProcess(const std::vector<std::string>& argv);

}  // namespace tapelab
