// The device watchdog (TAPELAB_DEVICE_TIMEOUT, gpu/host/watchdog.h) through the tapelab binary:
// with a limit of a microsecond, a run whose first wait on the device would take minutes ends
// within seconds, exit 1, one line naming the engine, the limit and the variable; nothing waits for
// the abandoned work (not the kernel's teardown, not the drivers' exit handlers). The default
// limit runs normally. Vulkan (lavapipe here) and OpenCL (PoCL here) where usable; CUDA and HIP
// have no device on this machine (scripts/gpu-watchdog.sh checks CUDA on the H200).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

const std::string kTapelab = "'" TAPELAB_BINARY_DIR "/cli/tapelab'";

struct Proc {
  int code = -1;
  std::string out, err;
  double seconds = 0;
};

// Runs `tapelab ARGS` with `env` ("VAR=value ..."); stderr after a marker line on stdout.
Proc tapelab(const std::string& env, const std::string& args) {
  const std::string cmd = "{ " + env + " " + kTapelab + " " + args + " 2>&3 ; } 3>&1 1>/tmp/tapelab-watchdog-out-$$ ;"
                          " echo \"@rc=$?\"; cat /tmp/tapelab-watchdog-out-$$; rm -f /tmp/tapelab-watchdog-out-$$";
  Proc p;
  const auto t0 = std::chrono::steady_clock::now();
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return p;
  std::string all;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) all.append(buf, n);
  pclose(pipe);
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t at = all.find("@rc=");
  if (at == std::string::npos) return p;
  const size_t eol = all.find('\n', at);
  p.err = all.substr(0, at);
  p.code = std::stoi(all.substr(at + 4, eol - at - 4));
  p.out = all.substr(eol + 1);
  return p;
}

// Why `engine` cannot run here ("" when it can): `tapelab engines --json`'s reason.
std::string unusableBecause(const std::string& engine) {
  const Proc list = tapelab("", "engines --json");
  const size_t at = list.out.find("{\"name\":\"" + engine + "\"");
  if (list.code != 0 || at == std::string::npos) return "tapelab engines failed: " + list.err;
  const std::string obj = list.out.substr(at, list.out.find('}', at) - at);
  if (obj.find("\"usable\":true") != std::string::npos) return "";
  const size_t reason = obj.find("\"reason\":");
  return reason == std::string::npos ? "not usable" : obj.substr(reason + 9);
}

// Paths whose first wait takes minutes on a CPU-served device: Vulkan's first submit holds 64
// dispatches of 2^20 paths (about 8 s each on lavapipe here), OpenCL's first dispatch 2^16 groups
// of 256 paths (about 9 minutes on PoCL here).
std::string slowPaths(const std::string& engine) { return engine == "vulkan" ? "67108864" : "16777216"; }

class CliWatchdog : public ::testing::TestWithParam<std::string> {};

TEST_P(CliWatchdog, TinyDeviceTimeoutExits1WithOneLineAndNoWait) {
  const std::string engine = GetParam();
  if (const std::string why = unusableBecause(engine); !why.empty()) GTEST_SKIP() << engine << ": " << why;
  const Proc p = tapelab("TAPELAB_DEVICE_TIMEOUT=0.000001",
                         "price --product european --engine " + engine + " --paths " + slowPaths(engine));
  EXPECT_EQ(p.code, 1) << p.err;
  EXPECT_EQ(p.out, "");
  const std::string head = "tapelab: " + engine + ": device did not finish within 1e-06 s (TAPELAB_DEVICE_TIMEOUT); ";
  EXPECT_EQ(p.err.rfind(head, 0), 0u) << p.err;
  EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "not one line: " << p.err;
  // The kernel build takes seconds; waiting for the abandoned work (teardown, exit) would take minutes.
  EXPECT_LT(p.seconds, 60.0) << "the process waited for the abandoned device work";
  std::printf("%s: timed out and exited in %.1f s\n", engine.c_str(), p.seconds);
}

TEST_P(CliWatchdog, DefaultTimeoutRuns) {
  const std::string engine = GetParam();
  if (const std::string why = unusableBecause(engine); !why.empty()) GTEST_SKIP() << engine << ": " << why;
  const Proc p = tapelab("", "price --product european --steps 8 --engine " + engine + " --paths 20000");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("d/d spot"), std::string::npos) << p.out;
  // No limit: the drivers' own blocking waits, the same numbers (the first line has the time).
  const Proc none = tapelab("TAPELAB_DEVICE_TIMEOUT=0", "price --product european --steps 8 --engine " + engine +
                                                             " --paths 20000");
  EXPECT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(none.out.substr(none.out.find('\n')), p.out.substr(p.out.find('\n')));
}

INSTANTIATE_TEST_SUITE_P(Engines, CliWatchdog, ::testing::Values("vulkan", "opencl"),
                         [](const auto& info) { return info.param; });

TEST(CliWatchdogKnob, BadValueExits2NamingTheVariable) {
  const Proc p = tapelab("TAPELAB_DEVICE_TIMEOUT=10s", "price --product european --steps 8 --paths 100");
  EXPECT_EQ(p.code, 2) << p.err;
  EXPECT_EQ(p.err, "tapelab: TAPELAB_DEVICE_TIMEOUT: expected seconds, a decimal from 0 (no limit) to 1e9, got '10s'\n");
}

}  // namespace
