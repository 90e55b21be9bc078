// SPDX-License-Identifier: Apache-2.0
// Checked access to a buffer handle for the C entry points, with the
// documented errors for NULL, forked-away and taken handles. Two forms:
//
//  - access_buffer: a consistent snapshot of the handle's mutable parts
//    (context, allocation), copied out under the handle's mutex; the
//    snapshot keeps them alive after the mutex is released.
//  - BufferHold (enqueues): the handles' mutexes stay locked until the
//    operation has been enqueued, so the parts are used through plain
//    pointers and no reference count is touched on the hot path. A
//    concurrent take_ptr or reassign_ownership_to of the same handle waits.
//    Lock order: buffer mutexes (in address order), then allocation mutexes
//    (use_allocations), then the backend's own.
//
// Thread-safe.
#ifndef ANYDEV_SRC_API_BUFFER_ACCESS_H_
#define ANYDEV_SRC_API_BUFFER_ACCESS_H_

#include <memory>
#include <mutex>

#include "api/api_common.h"
#include "support/small_mutex.h"

namespace anydev::core {

// The backend reference to the first byte of `handle`'s view of
// `allocation`. Foreign host memory (foreign_memory.h) is USER_HOST: a plain
// pointer to every backend.
inline anydev_bk_memory_ref_t memory_ref(const Allocation& allocation,
                                         const anydev_buffer_s& handle) {
  if (allocation.kind == ANYDEV_BK_MEMORY_USER_HOST) {
    return {allocation.handle, handle.offset_bytes, ANYDEV_BK_MEMORY_USER_HOST, -1};
  }
  return {allocation.handle, allocation.object_offset() + handle.offset_bytes,
          handle.kind == ANYDEV_MEMORY_HOST ? ANYDEV_BK_MEMORY_HOST : ANYDEV_BK_MEMORY_DEVICE,
          allocation.device};
}

// unsafe_ptr(): the allocation's address plus the view's offset (NULL for an
// empty allocation).
inline void* view_address(const Allocation& allocation, const anydev_buffer_s& handle) {
  return allocation.address == nullptr
             ? nullptr
             : static_cast<char*>(allocation.address) + handle.offset_bytes;
}

struct BufferView {
  std::shared_ptr<const ContextState> context;
  std::shared_ptr<Allocation> allocation;
  const anydev_buffer_s* handle = nullptr;

  anydev_bk_memory_ref_t ref() const { return memory_ref(*allocation, *handle); }
  void* address() const { return view_address(*allocation, *handle); }
};

// `what` names the argument in messages ("dst", "src", "buf").
anydev_status_t access_buffer(const char* op, const anydev_buffer_s* buf, const char* what,
                              BufferView* out);

// A buffer handle held by a BufferHold: its parts, valid while the hold is.
struct HeldBuffer {
  const anydev_buffer_s* handle = nullptr;
  Allocation* allocation = nullptr;
  const ContextState* context = nullptr;

  anydev_bk_memory_ref_t ref() const { return memory_ref(*allocation, *handle); }
  void* address() const { return view_address(*allocation, *handle); }
};

// Holds the mutexes of an enqueue's buffers (see above). Not copyable; one
// hold() per object.
class BufferHold {
 public:
  BufferHold() = default;
  ~BufferHold();
  BufferHold(const BufferHold&) = delete;
  BufferHold& operator=(const BufferHold&) = delete;

  // Checks `buf` (NULL, fork), locks it, checks that its memory was not
  // taken. On failure nothing stays locked.
  anydev_status_t hold(const char* op, const anydev_buffer_s* buf, const char* what,
                       HeldBuffer* out);
  // The same for a copy's two buffers (which may be the same handle).
  anydev_status_t hold(const char* op, const anydev_buffer_s* dst, const char* dst_what,
                       HeldBuffer* d, const anydev_buffer_s* src, const char* src_what,
                       HeldBuffer* s);

 private:
  void unlock() noexcept;
  SmallMutex* locked_[2] = {nullptr, nullptr};
};

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_BUFFER_ACCESS_H_
