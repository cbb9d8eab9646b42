// libFuzzer harness for the tapelab command line (the CLI11 setup of cli/): the
// input is argv after "tapelab", arguments separated by NUL bytes. Every command
// line is parsed by the real app (main.cpp's tapelabMain); only `philox` and
// `help` run their bodies, as the others price, plan or write files. A bug is a
// crash, a sanitizer report, an exception escaping tapelabMain, or an exit code
// outside 0-3. Stdout and stderr: run with -close_fd_mask=3 to keep them quiet.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "fuzz/harness.h"

namespace {
bool cheap(const std::string& command) { return command == "philox"; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args{"tapelab"};
  std::string cur;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (!cur.empty() && args.size() < 64) args.push_back(cur);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  const int code = tapelab::cli::tapelabMain(static_cast<int>(args.size()), argv.data(), cheap);
  if (code < 0 || code > 3) tapelab::fuzz::bug("exit code " + std::to_string(code));
  return 0;
}
