// SPDX-License-Identifier: Apache-2.0
// DeviceRule: the HIP current-device rule (hip_api.h).
#include "hip_api.h"

namespace anydev::hip {

void DeviceRule::leave(int previous) noexcept {
  // Never throws: a failure here leaves the thread on anydev's device, which
  // the next ScopedDevice of any library corrects; nothing to report to.
  if (previous >= 0) static_cast<void>(gpu::driver<HipApi>().SetDevice(previous));
}

anydev_status_t DeviceRule::enter(int device, const char* operation, int* previous) {
  if (const anydev_status_t s = gpu::check_device<HipApi>(device, operation); s != ANYDEV_SUCCESS) {
    return s;
  }
  const HipRuntime& runtime = gpu::driver<HipApi>();
  int current = -1;
  hipError_t r = runtime.GetDevice(&current);
  const char* call = "hipGetDevice";
  if (r == hipSuccess) {
    if (current == device) return ANYDEV_SUCCESS;
    r = runtime.SetDevice(device);
    call = "hipSetDevice";
  }
  if (r != hipSuccess) {
    return gpu::report_failure<HipApi>(
        r, call, kit::cat(operation, " on hip device ", device, " (making it current)"));
  }
  *previous = current;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::hip
