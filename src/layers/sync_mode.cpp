// SPDX-License-Identifier: Apache-2.0
#include "layers/sync_mode.h"

#include "layers/layer_table.h"

namespace anydev::core::layers {
namespace {

// The layer's own functions: the entries that wait (wrap_table<SyncLayer>, layer_table.h); each
// finds its inner table through its instance. Stateless; thread-safe.
struct SyncLayer {
  static anydev_status_t then_wait(const anydev_backend_table_t* inner, anydev_status_t status,
                                   anydev_bk_stream_t stream) {
    if (status != ANYDEV_SUCCESS) return status;
    return bk(inner).stream_synchronize(stream);
  }
  static anydev_status_t device_alloc(void* instance, int device, size_t bytes,
                                      anydev_bk_stream_t stream, void** handle, void** address) {
    const anydev_backend_table_t* inner = inner_of(instance);
    const anydev_status_t s = bk(inner).device_alloc(device, bytes, stream, handle, address);
    if (s != ANYDEV_SUCCESS) return s;
    const anydev_status_t waited = bk(inner).stream_synchronize(stream);
    // The call fails, so it must not keep the memory it allocated.
    if (waited != ANYDEV_SUCCESS) bk(inner).memory_free(device, ANYDEV_BK_MEMORY_DEVICE, *handle);
    return waited;
  }
  static anydev_status_t copy(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              anydev_bk_memory_ref_t src, size_t bytes) {
    const anydev_backend_table_t* inner = inner_of(instance);
    return then_wait(inner, bk(inner).copy(stream, dst, src, bytes), stream);
  }
  static anydev_status_t fill(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              const void* pattern, size_t pattern_size, size_t bytes) {
    const anydev_backend_table_t* inner = inner_of(instance);
    return then_wait(inner, bk(inner).fill(stream, dst, pattern, pattern_size, bytes), stream);
  }
  static anydev_status_t event_record(void* instance, anydev_bk_event_t event,
                                      anydev_bk_stream_t stream) {
    const anydev_backend_table_t* inner = inner_of(instance);
    return then_wait(inner, bk(inner).event_record(event, stream), stream);
  }
  static anydev_status_t stream_wait_event(void* instance, anydev_bk_stream_t stream,
                                           anydev_bk_event_t event) {
    const anydev_backend_table_t* inner = inner_of(instance);
    return then_wait(inner, bk(inner).stream_wait_event(stream, event), stream);
  }
};

}  // namespace

const anydev_backend_table_t* wrap_sync_mode(const anydev_backend_table_t* inner) {
  return wrap_table<SyncLayer>(inner);
}

}  // namespace anydev::core::layers
