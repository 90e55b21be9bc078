// Checked access to a buffer handle for the C entry points: a consistent
// snapshot of its mutable parts (context, allocation), taken under the
// handle's mutex, with the documented errors for NULL, forked-away and taken
// handles. Thread-safe.
#ifndef ANYDEV_SRC_BUFFER_ACCESS_H_
#define ANYDEV_SRC_BUFFER_ACCESS_H_

#include <memory>

#include "api_common.h"

namespace anydev::core {

struct BufferView {
  std::shared_ptr<const ContextState> context;
  std::shared_ptr<Allocation> allocation;
  const anydev_buffer_s* handle = nullptr;

  // The backend reference to this view's first byte. Foreign host memory
  // (foreign_memory.h) is USER_HOST: a plain pointer to every backend.
  anydev_bk_memory_ref_t ref() const {
    if (allocation->kind == ANYDEV_BK_MEMORY_USER_HOST) {
      return {allocation->handle, handle->offset_bytes, ANYDEV_BK_MEMORY_USER_HOST, -1};
    }
    return {allocation->handle, handle->offset_bytes,
            handle->kind == ANYDEV_MEMORY_HOST ? ANYDEV_BK_MEMORY_HOST : ANYDEV_BK_MEMORY_DEVICE,
            allocation->device};
  }
  // unsafe_ptr(): the allocation's address plus the view's offset (NULL for
  // an empty allocation).
  void* address() const {
    return allocation->address == nullptr
               ? nullptr
               : static_cast<char*>(allocation->address) + handle->offset_bytes;
  }
};

// `what` names the argument in messages ("dst", "src", "buf").
anydev_status_t access_buffer(const char* op, const anydev_buffer_s* buf, const char* what,
                              BufferView* out);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_BUFFER_ACCESS_H_
