// SPDX-License-Identifier: Apache-2.0
// Peer access between two CUDA devices: cuDeviceCanAccessPeer,
// cuCtxEnablePeerAccess, and access to the memory pool anydev created on the
// peer.
#include <cuda.h>

#include <string>

#include "cuda_entries.h"
#include "cuda_errors.h"
#include "cuda_state.h"

namespace anydev::cuda {

anydev_status_t can_access_peer(int device, int peer, int* can_access) {
  if (can_access == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "can_access_peer: null out");
  }
  if (const anydev_status_t s = check_device(device, "can_access_peer"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (const anydev_status_t s = check_device(peer, "can_access_peer"); s != ANYDEV_SUCCESS)
    return s;
  if (device == peer) {
    *can_access = 0;
    return ANYDEV_SUCCESS;
  }
  const auto& devices = backend_state().devices;
  int value = 0;
  const CUresult r =
      driver().DeviceCanAccessPeer(&value, devices[static_cast<std::size_t>(device)]->device,
                                   devices[static_cast<std::size_t>(peer)]->device);
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuDeviceCanAccessPeer",
                          cat("can_access_peer from cuda device ", device, " to device ", peer));
  }
  *can_access = value != 0 ? 1 : 0;
  return ANYDEV_SUCCESS;
}

anydev_status_t enable_peer_access(int device, int peer) {
  if (const anydev_status_t s = check_device(device, "enable_peer_access"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (const anydev_status_t s = check_device(peer, "enable_peer_access"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (device == peer) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("enable_peer_access: cuda device ", device,
                            " is its own peer (a device always accesses its own memory)"));
  }
  const std::string what = cat("enable_peer_access from cuda device ", device, " to device ", peer);
  CUcontext peer_context = nullptr;
  if (const anydev_status_t s = primary_context(peer, &peer_context); s != ANYDEV_SUCCESS) return s;
  ScopedContext scope;
  if (const anydev_status_t s = scope.enter(device, "enable_peer_access"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const CudaDriver& drv = driver();
  CUresult r = drv.CtxEnablePeerAccess(peer_context, 0);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
    return report_failure(r, "cuCtxEnablePeerAccess", what);
  }
  // The peer's stream-ordered memory lives in anydev's pool there, whose
  // mappings peer access does not change: grant them too (that pool only, not
  // the device's default pool, which holds other code's memory).
  const DeviceState& peer_state = *backend_state().devices[static_cast<std::size_t>(peer)];
  if (peer_state.memory_pools) {
    CUmemAccessDesc access = {};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = backend_state().devices[static_cast<std::size_t>(device)]->device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if ((r = drv.MemPoolSetAccess(peer_state.pool, &access, 1)) != CUDA_SUCCESS) {
      return report_failure(r, "cuMemPoolSetAccess", what);
    }
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
