// SPDX-License-Identifier: Apache-2.0
// anydev's own stream-ordered memory pool on each CUDA device.
//
// Device memory comes from a pool the backend creates (cuMemPoolCreate), not
// from the device's current pool: the application (or another library) may
// replace that one (cuDeviceSetMemPool) or tune it, and peer access granted
// on it would leak to everyone's memory. The pool keeps up to
// kPoolReleaseThreshold bytes of freed memory reserved across
// synchronizations instead of the default pool's 0. Pools are created by
// initialize and never destroyed (see DeviceState::pool); these functions are
// called only during initialize, under the core's registry lock.
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_POOL_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_POOL_H_

#include <cstdint>

#include "cuda_driver.h"
#include "cuda_state.h"

namespace anydev::cuda {

inline constexpr std::uint64_t kPoolReleaseThreshold = std::uint64_t{64} << 20;  // 64 MiB

// Whether the driver has every entry point stream-ordered memory needs.
bool pool_entry_points_present(const CudaDriver& driver);

// When d->memory_pools: creates d->pool on the device and sets its release
// threshold. When that fails, logs why and turns memory_pools off for the
// device (its memory then comes from cuMemAlloc), destroying a pool that was
// created. Appends the allocator in use to d->description.
void create_device_pool(DeviceState* d);

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_POOL_H_
