// SPDX-License-Identifier: Apache-2.0
// The functions that make up the opencl backend's table, one per table
// entry (see anydev/backend.h for what each one promises). Grouped by the
// file that implements them.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_ENTRIES_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_ENTRIES_H_

#include "anydev/backend.h"
#include "anydev/kit/table.h"

namespace anydev::opencl {

// Defined across the opencl_*.cpp files: initialize, device_count,
// device_props, memory_info, peers and native_handle (opencl_backend.cpp);
// stream_* (opencl_stream.cpp); event_*, stream_wait_event (opencl_event.cpp);
// host_alloc, device_alloc, memory_free (opencl_memory.cpp); memory_is_locked
// (opencl_pinning.cpp); copy, fill (opencl_transfer.cpp); graph_create,
// graph_launch, graph_destroy (opencl_graph.cpp). memory_free_async
// is not offered.
ANYDEV_KIT_DECLARE_ALL_ENTRIES

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_ENTRIES_H_
