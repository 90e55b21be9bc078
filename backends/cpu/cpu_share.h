// SPDX-License-Identifier: Apache-2.0
// Memory and events the cpu backend shares between processes.
//
// Memory: each shareable allocation is its own memfd, sealed against
// growing and shrinking (so an importer's mapping can never fault past the
// end), mapped MAP_SHARED in every process that opens it. The kernel counts
// the mappings and descriptors: the pages live until the last process
// unmaps them, whoever made them and however it ended (exit, SIGKILL).
// Host-kind memory is locked with mlock in each process, as host_alloc's.
//
// Events: an event page, one memfd page per shareable event, holds a record
// counter, a completion counter (and a futex word beside it) and the pid of
// the last recorder. Recording takes the next record number and queues a
// task that publishes it as completed; a wait (stream or host) blocks on
// the futex until its number completes, and fails instead of hanging if the
// recorder has exited without completing it. One process records an event
// at a time (as with any event re-recorded: a later record replaces an
// earlier one).
//
// Thread-safe: the registry of shared memory has its own lock (held across
// fork()), and the event page is only touched through atomics.
#ifndef ANYDEV_BACKENDS_CPU_CPU_SHARE_H_
#define ANYDEV_BACKENDS_CPU_CPU_SHARE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "anydev/backend.h"
#include "cpu_stream.h"
#include "cpu_task.h"

namespace anydev::cpu {

// The entries (backend_entries.h); `device` is already checked.
anydev_status_t share_alloc(anydev_bk_memory_kind_t kind, std::size_t bytes, void** handle,
                            void** address);
anydev_status_t share_export(anydev_bk_memory_kind_t kind, void* handle, anydev_bk_share_t* out);
anydev_status_t share_import(int device, anydev_bk_memory_kind_t kind, const anydev_bk_share_t* in,
                             std::size_t bytes, void** handle, void** address);
anydev_status_t share_release(anydev_bk_memory_kind_t kind, void* handle);
// Whether `handle` is shared memory, and then whether it is locked.
bool shared_memory_locked(void* handle, bool* locked);

struct EventPage;

// One process's mapping of an event page. Owned by its Event, and by the
// tasks queued on it (shared_ptr), so a queued signal or wait outlives the
// event's destruction.
class SharedEvent {
 public:
  static anydev_status_t create(std::unique_ptr<SharedEvent>* out);
  static anydev_status_t open(const anydev_bk_share_t& in, std::unique_ptr<SharedEvent>* out);
  ~SharedEvent();
  SharedEvent(const SharedEvent&) = delete;
  SharedEvent& operator=(const SharedEvent&) = delete;

  anydev_status_t describe(anydev_bk_share_t* out) const;
  // Captures the work enqueued on `stream` so far.
  void record(StreamState& stream);
  bool is_complete() const;
  // Waits for the last record; a failure when its recorder died first.
  std::optional<TaskFailure> synchronize() const;
  // Makes `stream`'s later work wait for the last record.
  void make_wait(StreamState& stream) const;

 private:
  struct Mapping;
  explicit SharedEvent(std::shared_ptr<Mapping> mapping);
  std::shared_ptr<Mapping> mapping_;
};

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_SHARE_H_
