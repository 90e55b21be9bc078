// SPDX-License-Identifier: Apache-2.0
// The backend table's entries, defined across the cuda_*.cpp files and
// gathered into one table by cuda_backend.cpp. Each follows the contract that
// backend.h states for the entry of the same name (thread-safe; errors are
// reported through core->set_error before they are returned).
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_ENTRIES_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_ENTRIES_H_

#include "anydev/backend.h"
#include "kit_table.h"

namespace anydev::cuda {

// Defined across the cuda_*.cpp files: initialize, device_count,
// device_props, memory_info (cuda_backend.cpp); can_access_peer,
// enable_peer_access (cuda_peer.cpp); stream_*, event_* (cuda_streams.cpp);
// host_alloc, device_alloc, memory_free, memory_free_async (cuda_memory.cpp);
// copy, fill (cuda_transfer.cpp); native_handle (cuda_native.cpp).
// memory_is_locked is not offered.
ANYDEV_KIT_DECLARE_ALL_ENTRIES

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_ENTRIES_H_
