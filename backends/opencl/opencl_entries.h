// The functions that make up the opencl backend's table, one per table
// entry (see anydev/backend.h for what each one promises). Grouped by the
// file that implements them.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_ENTRIES_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_ENTRIES_H_

#include "anydev/backend.h"

namespace anydev::opencl {

// opencl_backend.cpp: loading, devices, peers, native handles.
anydev_status_t initialize(const anydev_core_services_t* core, const char** library);
anydev_status_t get_device_count(int* count);
anydev_status_t device_props(int device, anydev_bk_device_props_t* props);
anydev_status_t memory_info(int device, size_t* free_bytes, size_t* total_bytes);
anydev_status_t can_access_peer(int device, int peer, int* can_access);
anydev_status_t enable_peer_access(int device, int peer);
anydev_status_t native_handle(int device, int kind, void* object, void** out);

// opencl_stream.cpp
anydev_status_t stream_create(int device, anydev_bk_stream_t* out);
anydev_status_t stream_wrap_native(int device, void* native_stream, anydev_bk_stream_t* out);
anydev_status_t stream_destroy(anydev_bk_stream_t stream);
anydev_status_t stream_synchronize(anydev_bk_stream_t stream);

// opencl_event.cpp
anydev_status_t event_create(int device, anydev_bk_event_t* out);
anydev_status_t event_destroy(anydev_bk_event_t event);
anydev_status_t event_record(anydev_bk_event_t event, anydev_bk_stream_t stream);
anydev_status_t event_synchronize(anydev_bk_event_t event);
anydev_status_t event_query(anydev_bk_event_t event, int* complete);
anydev_status_t stream_wait_event(anydev_bk_stream_t stream, anydev_bk_event_t event);

// opencl_memory.cpp
anydev_status_t host_alloc(int device, size_t bytes, void** handle, void** address);
anydev_status_t device_alloc(int device, size_t bytes, anydev_bk_stream_t stream, void** handle,
                             void** address);
anydev_status_t memory_free(int device, anydev_bk_memory_kind_t kind, void* handle);

// opencl_pinning.cpp
anydev_status_t memory_is_locked(int device, void* handle, int* locked);

// opencl_transfer.cpp
anydev_status_t copy(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                     anydev_bk_memory_ref_t src, size_t bytes);
anydev_status_t fill(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst, const void* pattern,
                     size_t pattern_size, size_t bytes);

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_ENTRIES_H_
