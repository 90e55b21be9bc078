// SPDX-License-Identifier: Apache-2.0
// The objects behind the C ABI's opaque handles, and who owns what.
//
//   anydev_context_s  --shared_ptr-->  ContextState --shared_ptr--> Stream
//   anydev_stream_s   --shared_ptr-->  Stream
//   anydev_buffer_s   --shared_ptr-->  Allocation (the memory), plus a view
//                                      (offset, size, dtype) and a context
//   anydev_event_s    owns one backend event
//
// Handles are reference-counted by the C ABI (retain/release); internal
// objects by shared_ptr. Memory is freed when the last shared_ptr to its
// Allocation goes (see allocation.h); a Stream's backend stream is destroyed
// on the reclaimer thread once nothing refers to it, so no release ever
// blocks the caller. Every handle records the fork generation it was made in.
//
// Thread safety: handles are immutable after creation except where a member
// says it is guarded by a mutex.
#ifndef ANYDEV_SRC_API_OBJECTS_H_
#define ANYDEV_SRC_API_OBJECTS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "anydev/anydev.h"
#include "anydev/backend.h"
#include "api/tracked_handle.h"
#include "memory/allocation.h"
#include "memory/record_slab.h"
#include "memory/shared_memory.h"
#include "memory/stream.h"
#include "runtime/registry.h"
#include "support/small_mutex.h"

namespace anydev::core {

// One device of one backend with one stream. Immutable.
struct ContextState {
  const Backend* backend;
  int device;
  std::shared_ptr<Stream> stream;
};

}  // namespace anydev::core

// Reference counts start at 1 (the creator's reference). The empty base
// registers the handle with the validation layer while it lives, when
// ANYDEV_VALIDATE is on (layers/validation.h).
struct anydev_context_s
    : anydev::core::handles::TrackedHandle<anydev::core::handles::HandleKind::context> {
  std::atomic<std::int64_t> refs{1};
  std::uint64_t fork_generation;
  std::shared_ptr<const anydev::core::ContextState> state;
  // state->stream.get(), cached: enqueues and synchronize reach the stream
  // from the handle's own cache line. Owned by `state`.
  anydev::core::Stream* stream = nullptr;
};

struct anydev_stream_s
    : anydev::core::handles::TrackedHandle<anydev::core::handles::HandleKind::stream> {
  std::atomic<std::int64_t> refs{1};
  std::uint64_t fork_generation;
  std::shared_ptr<anydev::core::Stream> stream;
};

struct anydev_event_s
    : anydev::core::handles::TrackedHandle<anydev::core::handles::HandleKind::event> {
  std::atomic<std::int64_t> refs{1};
  std::uint64_t fork_generation;
  const anydev::core::Backend* backend;
  int device;
  anydev_bk_event_t native;
  // Set for a shareable or imported event (memory/shared_memory.h).
  std::shared_ptr<anydev::core::ShareState> share;
  // ANYDEV_EVENT_* it was created with (api_timing.cpp); immutable.
  unsigned flags = 0;
  // The core polls with sleeps in anydev_event_synchronize: the backend
  // declined ANYDEV_EVENT_BLOCKING_SYNC. Immutable.
  bool emulated_blocking_sync = false;
  // Set by the first successful record (anydev_event_elapsed_time refuses an
  // event never recorded).
  std::atomic<bool> recorded{false};
};

struct anydev_buffer_s
    : anydev::core::handles::TrackedHandle<anydev::core::handles::HandleKind::buffer> {
  std::atomic<std::int64_t> refs{1};
  std::uint64_t fork_generation;
  anydev_memory_kind_t kind;
  anydev_dtype_t dtype;
  std::size_t count;
  std::size_t size_bytes;
  std::size_t offset_bytes;  // into the allocation
  // Guarded by mutex: reassign_ownership_to and take_ptr change them.
  std::shared_ptr<const anydev::core::ContextState> context;
  std::shared_ptr<anydev::core::Allocation> allocation;  // null once taken
  // 4 bytes (small_mutex.h): there is one handle per live buffer and view.
  mutable anydev::core::SmallMutex mutex;
  bool taken = false;

  // From the record slab (memory/record_slab.h): one per live buffer and view.
  static void* operator new(std::size_t bytes) { return anydev::core::allocate_record(bytes); }
  static void operator delete(void* handle, std::size_t bytes) noexcept {
    anydev::core::free_record(handle, bytes);
  }
};

// Host memory per live buffer (goal 256 bytes with its allocation record
// and the pool's node, docs/reliability.md): pinned so that a field added
// here is a decision, not an accident (anydev-scale-bench reports the
// total, heap_bytes_per_handle).
static_assert(sizeof(anydev_buffer_s) <= 88, "anydev_buffer_s grew: see docs/reliability.md");

#endif  // ANYDEV_SRC_API_OBJECTS_H_
