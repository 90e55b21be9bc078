#include "layers/sync_mode.h"

#include "layers/table_slots.h"

namespace anydev::core::layers {
namespace {

template <std::size_t S>
struct SyncWrap {
  static inline const anydev_backend_table_t* inner = nullptr;

  static anydev_status_t then_wait(anydev_status_t status, anydev_bk_stream_t stream) {
    if (status != ANYDEV_SUCCESS) return status;
    return inner->stream_synchronize(stream);
  }
  static anydev_status_t device_alloc(int device, size_t bytes, anydev_bk_stream_t stream,
                                      void** handle, void** address) {
    const anydev_status_t s = inner->device_alloc(device, bytes, stream, handle, address);
    if (s != ANYDEV_SUCCESS) return s;
    const anydev_status_t waited = inner->stream_synchronize(stream);
    // The call fails, so it must not keep the memory it allocated.
    if (waited != ANYDEV_SUCCESS) inner->memory_free(device, ANYDEV_BK_MEMORY_DEVICE, *handle);
    return waited;
  }
  static anydev_status_t copy(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              anydev_bk_memory_ref_t src, size_t bytes) {
    return then_wait(inner->copy(stream, dst, src, bytes), stream);
  }
  static anydev_status_t fill(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              const void* pattern, size_t pattern_size, size_t bytes) {
    return then_wait(inner->fill(stream, dst, pattern, pattern_size, bytes), stream);
  }
  static anydev_status_t event_record(anydev_bk_event_t event, anydev_bk_stream_t stream) {
    return then_wait(inner->event_record(event, stream), stream);
  }
  static anydev_status_t stream_wait_event(anydev_bk_stream_t stream, anydev_bk_event_t event) {
    return then_wait(inner->stream_wait_event(stream, event), stream);
  }
};

}  // namespace

const anydev_backend_table_t* wrap_sync_mode(const anydev_backend_table_t* inner) {
  static SlotTables<SyncWrap> slots;
  return slots.wrap(inner);
}

}  // namespace anydev::core::layers
