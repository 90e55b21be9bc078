// SPDX-License-Identifier: Apache-2.0
// Memory and events shared between processes (docs/sharing.md).
//
// ShareState: what the core keeps for one shareable object: the backend's
// description of it (memory_export / event_export, asked once) and the file
// descriptors that came with it, held open while the object lives so that
// every export can dup them and pidfd_getfd can copy them. Thread-safe (its
// own mutex); owned by the object's release strategy (memory) or its event
// handle.
//
// The shared release strategy (make_shared_allocation): memory from
// shareable_alloc or memory_import. It never meets the caching pool; after
// its last use in this process (ordered as plain memory, allocation.h) the
// backend's memory_unshare releases this process's mapping. Other processes'
// mappings are theirs: the memory lives until the last one goes (the
// backend's promise, backend_entries.h).
#ifndef ANYDEV_SRC_MEMORY_SHARED_MEMORY_H_
#define ANYDEV_SRC_MEMORY_SHARED_MEMORY_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "anydev/backend.h"
#include "memory/allocation.h"

namespace anydev::core {

class ShareState {
 public:
  ShareState() = default;
  ~ShareState();  // closes the kept fds
  ShareState(const ShareState&) = delete;
  ShareState& operator=(const ShareState&) = delete;

  // The backend's description, made by `describe` on first use (which fills
  // the zeroed anydev_bk_share_t it is given). On success *out is a copy
  // whose fds are the kept ones (not the caller's to close).
  anydev_status_t describe(const std::function<anydev_status_t(anydev_bk_share_t*)>& describe,
                           anydev_bk_share_t* out);

 private:
  std::mutex mutex_;
  bool described_ = false;
  anydev_bk_share_t share_{};
};

// Where an allocation's strategy keeps its ShareState; null for memory that
// is not shareable.
ShareState* share_state_of(const Allocation& allocation) noexcept;

// An allocation of shareable or imported memory (see above); `owner` is
// the stream of the context it was made or imported on.
std::shared_ptr<Allocation> make_shared_allocation(const Backend* backend, int device,
                                                   anydev_bk_memory_kind_t kind, void* handle,
                                                   void* address, std::size_t bytes,
                                                   std::shared_ptr<Stream> owner);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_SHARED_MEMORY_H_
