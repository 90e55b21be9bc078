// The backend table's entries, defined across the cuda_*.cpp files and
// gathered into one table by cuda_backend.cpp. Each follows the contract that
// backend.h states for the entry of the same name (thread-safe; errors are
// reported through core->set_error before they are returned).
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_ENTRIES_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_ENTRIES_H_

#include <cstddef>

#include "anydev/backend.h"

namespace anydev::cuda {

// cuda_backend.cpp
anydev_status_t initialize(const anydev_core_services_t* core, const char** library);
anydev_status_t device_count(int* count);
anydev_status_t device_props(int device, anydev_bk_device_props_t* props);
anydev_status_t memory_info(int device, std::size_t* free_bytes, std::size_t* total_bytes);
anydev_status_t can_access_peer(int device, int peer, int* can_access);
anydev_status_t enable_peer_access(int device, int peer);
anydev_status_t native_handle(int device, int kind, void* object, void** out);

// cuda_streams.cpp
anydev_status_t stream_create(int device, anydev_bk_stream_t* out);
anydev_status_t stream_destroy(anydev_bk_stream_t stream);
anydev_status_t stream_synchronize(anydev_bk_stream_t stream);
anydev_status_t stream_wrap_native(int device, void* native_stream, anydev_bk_stream_t* out);
anydev_status_t event_create(int device, anydev_bk_event_t* out);
anydev_status_t event_destroy(anydev_bk_event_t event);
anydev_status_t event_record(anydev_bk_event_t event, anydev_bk_stream_t stream);
anydev_status_t event_synchronize(anydev_bk_event_t event);
anydev_status_t event_query(anydev_bk_event_t event, int* complete);
anydev_status_t stream_wait_event(anydev_bk_stream_t stream, anydev_bk_event_t event);

// cuda_memory.cpp
anydev_status_t host_alloc(int device, std::size_t bytes, void** handle, void** address);
anydev_status_t device_alloc(int device, std::size_t bytes, anydev_bk_stream_t stream,
                             void** handle, void** address);
anydev_status_t memory_free(int device, anydev_bk_memory_kind_t kind, void* handle);
anydev_status_t memory_free_async(int device, void* handle, anydev_bk_stream_t stream);

// cuda_transfer.cpp
anydev_status_t copy(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                     anydev_bk_memory_ref_t src, std::size_t bytes);
anydev_status_t fill(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst, const void* pattern,
                     std::size_t pattern_size, std::size_t bytes);

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_ENTRIES_H_
