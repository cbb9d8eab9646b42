// Bounded waits on a device (EngineSettings::deviceTimeout, TAPELAB_DEVICE_TIMEOUT): every place a
// GPU runtime waits for the device goes through a DeviceWatch, so that a device that never finishes
// ends the run with one line instead of a hang. A device that missed the limit is marked lost: its
// later waits throw at once, and teardown skips every wait and release that could block on the
// stuck work (those handles and their memory leak; a stuck device cannot be trusted to give them back).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "engine/engine.h"

namespace tapelab {

// A device's "lost" flag: set when a wait on it passed the limit, shared by the device and its
// kernels' watches (it outlives them). Every GPU runtime's device holds one.
using DeviceLostFlag = std::shared_ptr<std::atomic<bool>>;
inline DeviceLostFlag makeDeviceLostFlag() { return std::make_shared<std::atomic<bool>>(false); }

class DeviceWatch {
 public:
  // `engine` names the message's first word (vulkan, opencl, cuda, hip); `seconds` the limit of one
  // wait (0 = none); `lost` is the device's flag, shared by its kernels, outliving this watch.
  // `cpuDevice`: the host's own cores run the work (PoCL), so a poll must not spin for long.
  DeviceWatch(std::string engine, double seconds, DeviceLostFlag lost, bool cpuDevice = false)
      : engine_(std::move(engine)), seconds_(seconds), lost_(std::move(lost)), cpuDevice_(cpuDevice) {}

  double seconds() const { return seconds_; }
  bool lost() const { return lost_->load(); }
  // Throws DeviceTimeout when the device missed a limit before: nothing queued on it can be trusted.
  void checkAlive() const;

  // Waits until done() says the work is finished: when there is no limit, by block() (the API's own
  // blocking wait); else by polling done(), yielding between polls for the first 10 ms (200 us on a
  // CPU device, whose cores do the work) as CUDA's own default wait spins, so that a dispatch is
  // caught within microseconds; then sleeping 1/64 of the time waited so far (about 2% later than
  // the work at worst, at most 1 ms). done() and block() throw the API's errors themselves. Past
  // the limit: timedOut(what).
  void wait(const std::string& what, const std::function<bool()>& done, const std::function<void()>& block) const;

  // The limit in nanoseconds for an API with a timed wait (vkWaitForFences); UINT64_MAX when none.
  uint64_t timeoutNanoseconds() const;

  // Marks the device lost and throws DeviceTimeout: "<engine>: device did not finish within N s
  // (TAPELAB_DEVICE_TIMEOUT); <what>; ...".
  [[noreturn]] void timedOut(const std::string& what) const;

 private:
  std::string engine_;
  double seconds_;
  DeviceLostFlag lost_;
  bool cpuDevice_;
};

// Gives up ownership of `value` without destroying it: host memory a lost device may still write
// into (a pending read-back) or read from (a pending upload) must outlive the process.
template <class T>
void abandon(T& value) {
  static_cast<void>(new T(std::move(value)));
}

}  // namespace tapelab
