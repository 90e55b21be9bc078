// SPDX-License-Identifier: Apache-2.0
// Peer access between two devices of a GPU backend: can_access_peer and
// enable_peer_access (the API's own call, Api::enable_peer, then read-write
// access to the memory pool anydev created on the peer). Thread-safe.
#ifndef ANYDEV_BACKENDS_GPU_GPU_PEER_H_
#define ANYDEV_BACKENDS_GPU_GPU_PEER_H_

#include <string>

#include "gpu_pool.h"
#include "gpu_state.h"

namespace anydev::gpu {

template <class Api>
anydev_status_t check_devices(int device, int peer, const char* operation) {
  if (const anydev_status_t s = check_device<Api>(device, operation); s != ANYDEV_SUCCESS) return s;
  return check_device<Api>(peer, operation);
}

template <class Api>
anydev_status_t can_access_peer(int device, int peer, int* can_access) {
  if (can_access == nullptr) return null_argument<Api>("can_access_peer", "out");
  if (const anydev_status_t s = check_devices<Api>(device, peer, "can_access_peer");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (device == peer) {
    *can_access = 0;
    return ANYDEV_SUCCESS;
  }
  int value = 0;
  const auto r = driver<Api>().DeviceCanAccessPeer(&value, device_state<Api>(device).device,
                                                   device_state<Api>(peer).device);
  if (r != Api::kSuccess) {
    return report_failure<Api>(
        r, Api::driver_t::names::DeviceCanAccessPeer,
        cat("can_access_peer from ", Api::kName, " device ", device, " to device ", peer));
  }
  *can_access = value != 0 ? 1 : 0;
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t enable_peer_access(int device, int peer) {
  if (const anydev_status_t s = check_devices<Api>(device, peer, "enable_peer_access");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (device == peer) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat("enable_peer_access: ", Api::kName, " device ", device,
                                 " is its own peer (a device always accesses its own memory)"));
  }
  const std::string what =
      cat("enable_peer_access from ", Api::kName, " device ", device, " to device ", peer);
  if (const anydev_status_t s = Api::enable_peer(device, peer, what); s != ANYDEV_SUCCESS) return s;
  // The peer's stream-ordered memory lives in anydev's pool there, whose
  // mappings peer access does not change: grant them too (that pool only, not
  // the device's default pool, which holds other code's memory).
  const DeviceState<Api>& peer_state = device_state<Api>(peer);
  if (peer_state.memory_pools) {
    const auto r =
        pool_grant<Api>(driver<Api>(), peer_state.pool, device_state<Api>(device).device);
    if (r != Api::kSuccess) {
      return report_failure<Api>(r, Api::driver_t::names::MemPoolSetAccess, what);
    }
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_PEER_H_
