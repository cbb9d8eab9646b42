// Shared by the libFuzzer harnesses (fuzz/README.md): what a harness treats as
// a bug besides a sanitizer report or an uncaught exception.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tapelab::fuzz {

[[noreturn]] inline void bug(const std::string& what) {
  std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
  std::abort();
}

// Errors are one line that starts with `prefix` (the file name or field).
inline void requireOneLine(const std::string& message, const std::string& prefix) {
  if (message.find('\n') != std::string::npos || message.find('\r') != std::string::npos)
    bug("error message is not one line: " + message);
  if (message.rfind(prefix, 0) != 0) bug("error message does not start with '" + prefix + "': " + message);
}

}  // namespace tapelab::fuzz
