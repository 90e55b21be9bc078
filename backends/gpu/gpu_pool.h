// SPDX-License-Identifier: Apache-2.0
// anydev's own stream-ordered memory pool on each device of a GPU backend.
//
// Device memory comes from a pool the backend creates (pool_create), not
// from the device's current pool: the application (or another library) may
// replace that one or tune it, and peer access granted on it would leak to
// everyone's memory. The pool keeps up to kPoolReleaseThreshold bytes of
// freed memory reserved across synchronizations instead of the default
// pool's 0. Pools are created by initialize and never destroyed (see
// DeviceState::pool); these functions are called only during initialize,
// under the core's registry lock.
#ifndef ANYDEV_BACKENDS_GPU_GPU_POOL_H_
#define ANYDEV_BACKENDS_GPU_GPU_POOL_H_

#include <cstdint>
#include <string>

#include "gpu_state.h"

namespace anydev::gpu {

inline constexpr std::uint64_t kPoolReleaseThreshold = std::uint64_t{64} << 20;  // 64 MiB

// Whether the driver has every entry point stream-ordered memory needs.
template <class Driver>
bool pool_entry_points_present(const Driver& driver) {
  return driver.MemPoolCreate != nullptr && driver.MemPoolDestroy != nullptr &&
         driver.MemPoolSetAttribute != nullptr && driver.MemAllocFromPoolAsync != nullptr &&
         driver.MemFreeAsync != nullptr && driver.MemPoolSetAccess != nullptr;
}

// anydev's pool on `device` (pinned device memory, no export handle).
template <class Api>
typename Api::status_t pool_create(const typename Api::driver_t& drv, typename Api::device_t device,
                                   typename Api::pool_t* pool) {
  typename Api::pool_props props = {};
  props.allocType = Api::kPoolPinned;
  props.handleTypes = Api::kPoolNoHandle;
  props.location.type = Api::kLocationDevice;
  props.location.id = device;
  return drv.MemPoolCreate(pool, &props);
}

// Read-write access to `pool` for `device` (a peer of the pool's device).
template <class Api>
typename Api::status_t pool_grant(const typename Api::driver_t& drv, typename Api::pool_t pool,
                                  typename Api::device_t device) {
  typename Api::access_desc access = {};
  access.location.type = Api::kLocationDevice;
  access.location.id = device;
  access.flags = Api::kAccessReadWrite;
  return drv.MemPoolSetAccess(pool, &access, 1);
}

// When d->memory_pools: creates d->pool on the device and sets its release
// threshold. When that fails, logs why and turns memory_pools off for the
// device (its memory then comes from the plain allocation), destroying a pool
// that was created. Appends the allocator in use to d->description.
template <class Api>
void create_device_pool(DeviceState<Api>* d) {
  using names = typename Api::driver_t::names;
  if (d->memory_pools) {
    const auto& drv = driver<Api>();
    typename Api::pool_t pool{};
    auto r = pool_create<Api>(drv, d->device, &pool);
    const char* call = names::MemPoolCreate;
    if (r == Api::kSuccess) {
      std::uint64_t threshold = kPoolReleaseThreshold;
      r = drv.MemPoolSetAttribute(pool, Api::kPoolReleaseThresholdAttr, &threshold);
      call = names::MemPoolSetAttribute;
      if (r != Api::kSuccess) static_cast<void>(drv.MemPoolDestroy(pool));
    }
    if (r == Api::kSuccess) {
      d->pool = pool;
    } else {
      d->memory_pools = false;
      log<Api>(ANYDEV_LOG_WARN,
               cat(call, " failed: ", Api::describe(r), " for ", Api::kName, " device ", d->index,
                   " (", d->name, "): its memory comes from ", names::MemAlloc, " instead"));
    }
  }
  d->description +=
      d->memory_pools
          ? cat(", device memory: stream-ordered (", names::MemAllocFromPoolAsync,
                " from anydev's pool, release threshold ", kPoolReleaseThreshold >> 20, " MiB)")
          : cat(", device memory: ", names::MemAlloc,
                ", freed by the core's stream-ordered release");
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_POOL_H_
