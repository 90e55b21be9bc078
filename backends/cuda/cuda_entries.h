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
anydev_status_t Initialize(const anydev_core_services_t* core, const char** library);
anydev_status_t DeviceCount(int* count);
anydev_status_t DeviceProps(int device, anydev_bk_device_props_t* props);
anydev_status_t MemoryInfo(int device, std::size_t* free_bytes, std::size_t* total_bytes);
anydev_status_t CanAccessPeer(int device, int peer, int* can_access);
anydev_status_t EnablePeerAccess(int device, int peer);
anydev_status_t NativeHandle(int device, int kind, void* object, void** out);

// cuda_streams.cpp
anydev_status_t StreamCreate(int device, anydev_bk_stream_t* out);
anydev_status_t StreamDestroy(anydev_bk_stream_t stream);
anydev_status_t StreamSynchronize(anydev_bk_stream_t stream);
anydev_status_t StreamWrapNative(int device, void* native_stream, anydev_bk_stream_t* out);
anydev_status_t EventCreate(int device, anydev_bk_event_t* out);
anydev_status_t EventDestroy(anydev_bk_event_t event);
anydev_status_t EventRecord(anydev_bk_event_t event, anydev_bk_stream_t stream);
anydev_status_t EventSynchronize(anydev_bk_event_t event);
anydev_status_t EventQuery(anydev_bk_event_t event, int* complete);
anydev_status_t StreamWaitEvent(anydev_bk_stream_t stream, anydev_bk_event_t event);

// cuda_memory.cpp
anydev_status_t HostAlloc(int device, std::size_t bytes, void** handle, void** address);
anydev_status_t DeviceAlloc(int device, std::size_t bytes, anydev_bk_stream_t stream, void** handle,
                            void** address);
anydev_status_t MemoryFree(int device, anydev_bk_memory_kind_t kind, void* handle);
anydev_status_t MemoryFreeAsync(int device, void* handle, anydev_bk_stream_t stream);

// cuda_transfer.cpp
anydev_status_t Copy(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                     anydev_bk_memory_ref_t src, std::size_t bytes);
anydev_status_t Fill(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst, const void* pattern,
                     std::size_t pattern_size, std::size_t bytes);

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_ENTRIES_H_
