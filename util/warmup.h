// Warm-up before timing a kernel. A real GPU drops to idle clocks within about a second without
// work and needs some 0.4 s of load to climb back (H200 under Vulkan: 345 -> 1980 MHz;
// runs/h200-2026-12-01b/call2-vkdiag), so the first kernel a process times on a GPU warms
// up for `gpuMs`; kernels timed right after it (the device busy within the last `idleMs`) need
// only one run for their first-use costs. Elsewhere (CPUs, lavapipe, PoCL) one run is enough.
#pragma once
#include <chrono>

namespace tapelab {

class TimingWarmup {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kGpuMs = 600;   // longer than the climb measured on the H200
  static constexpr int kIdleMs = 200;  // well inside the time the clocks stay up without work

  // overrideMs >= 0: warm up this long before every kernel, whatever the device (a flag's value).
  explicit TimingWarmup(int overrideMs = -1) : overrideMs_(overrideMs) {}

  // Runs `once` (a warm-up run on another seed) once, or until the warm-up time has passed.
  template <class F>
  void run(bool gpu, F&& once) {
    const auto t0 = Clock::now();
    const bool busy = gpu && warmed_ && t0 - lastBusy_ < std::chrono::milliseconds(kIdleMs);
    const int ms = overrideMs_ >= 0 ? overrideMs_ : (gpu && !busy ? kGpuMs : 0);
    do once();
    while (Clock::now() - t0 < std::chrono::milliseconds(ms));
    warmed_ = warmed_ || (gpu && ms >= kGpuMs) || busy;
    lastBusy_ = Clock::now();
  }
  // Call when the timed runs end: the device was busy until now.
  void busyUntilNow() { lastBusy_ = Clock::now(); }

 private:
  int overrideMs_;
  bool warmed_ = false;
  Clock::time_point lastBusy_{};
};

}  // namespace tapelab
