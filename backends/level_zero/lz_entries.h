// SPDX-License-Identifier: Apache-2.0
// The backend table's entries, defined across the lz_*.cpp files and gathered
// into one table by lz_backend.cpp. Each follows the contract backend.h states
// for the entry of the same name (thread-safe; errors reported through
// core->set_error before they are returned).
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_ENTRIES_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_ENTRIES_H_

#include "anydev/backend.h"
#include "anydev/kit/table.h"

namespace anydev::level_zero {

// initialize, device_count, device_props, memory_info (lz_backend.cpp);
// stream_*, event_* (lz_streams.cpp); host_alloc, device_alloc, memory_free
// (lz_memory.cpp); copy, fill (lz_transfer.cpp); can_access_peer,
// enable_peer_access, native_handle (lz_peer.cpp); shareable_alloc,
// memory_export, memory_import, memory_unshare (lz_share.cpp) and the
// shareable-event entries (lz_share_events.cpp); graph_create, graph_launch,
// graph_destroy (lz_graph.cpp). memory_free_async,
// stream_wrap_native and memory_is_locked are not offered.
ANYDEV_KIT_DECLARE_ALL_ENTRIES

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_ENTRIES_H_
