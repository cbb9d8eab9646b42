#include "gpu/host/watchdog.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

namespace tapelab {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string secondsText(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

}  // namespace

void DeviceWatch::checkAlive() const {
  if (lost())
    throw DeviceTimeout(engine_ + ": device lost: an earlier wait on it passed TAPELAB_DEVICE_TIMEOUT (" +
                        secondsText(seconds_) + " s); it is not used again in this process");
}

void DeviceWatch::wait(const std::string& what, const std::function<bool()>& done,
                       const std::function<void()>& block) const {
  checkAlive();
  if (seconds_ <= 0) {
    block();
    return;
  }
  const auto start = Clock::now();
  const auto limit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds_));
  const Clock::duration spin = cpuDevice_ ? Clock::duration(200us) : Clock::duration(10ms);
  for (;;) {
    if (done()) return;
    const auto waited = Clock::now() - start;
    if (waited >= limit) timedOut(what);
    if (waited < spin) {
      std::this_thread::yield();
    } else {
      const Clock::duration nap = std::clamp<Clock::duration>(waited / 64, 20us, 1ms);
      std::this_thread::sleep_for(std::min(nap, limit - waited));
    }
  }
}

uint64_t DeviceWatch::timeoutNanoseconds() const {
  if (seconds_ <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(std::ceil(seconds_ * 1e9));  // knobs cap it at 1e9 s: fits
}

void DeviceWatch::timedOut(const std::string& what) const {
  lost_->store(true);
  markDeviceTimedOutInProcess();
  throw DeviceTimeout(engine_ + ": device did not finish within " + secondsText(seconds_) +
                      " s (TAPELAB_DEVICE_TIMEOUT); " + what +
                      "; the device is abandoned (set the variable higher, or 0 for no limit)");
}

}  // namespace tapelab
