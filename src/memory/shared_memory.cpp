// SPDX-License-Identifier: Apache-2.0
#include "memory/shared_memory.h"

#include <unistd.h>

#include <string>

#include "memory/event_pool.h"
#include "memory/stream_ordered_release.h"
#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

void close_kept(anydev_bk_share_t& share) noexcept {
  for (std::uint32_t i = 0; i < share.fd_count && i < ANYDEV_BK_SHARE_MAX_FDS; ++i) {
    if (share.fds[i] >= 0) ::close(share.fds[i]);
    share.fds[i] = -1;
  }
  share.fd_count = 0;
}

// The shared strategy: lives beside its Allocation (make_allocation).
class SharedRelease final : public ReleaseStrategy {
 public:
  SharedRelease() : state_(std::make_shared<ShareState>()) {}

  ShareState* share() noexcept override { return state_.get(); }

  void release(Allocation& allocation) noexcept override {
    if (allocation.handle == nullptr) return;
    order_release_after_last_use(allocation);
    const Backend* const backend = allocation.backend;
    const anydev_backend_table_t* table = backend->table;
    const int device = allocation.device;
    const anydev_bk_memory_kind_t kind = allocation.kind;
    void* const handle = allocation.handle;
    // The kept fds close with the state, after the unshare.
    std::shared_ptr<ShareState> state = std::move(state_);
    auto unshare = [backend, table, device, kind, handle, state]() mutable {
      if (bk(table).memory_unshare(device, kind, handle) != ANYDEV_SUCCESS) {
        try {
          log(ANYDEV_LOG_ERROR,
              cat(backend->name, ": release: memory_unshare failed: ", last_error_message()));
        } catch (...) {
        }
      }
      state.reset();
    };
    Stream& owner = *allocation.owner_stream;
    EventPool* const events = owner.events;
    anydev_bk_event_t event = nullptr;
    const anydev_status_t taken =
        events != nullptr ? events->take(&event) : bk(table).event_create(owner.device, &event);
    if (taken == ANYDEV_SUCCESS && bk(table).event_record(event, owner.native) == ANYDEV_SUCCESS) {
      if (completed_at_once(backend, event)) {
        give_back_or_destroy(events, table, event);
        unshare();
        return;
      }
      try {
        run_after_event(backend, event, unshare, events);
        return;
      } catch (...) {  // std::bad_alloc copying the callback: wait here instead
      }
      bk(table).event_synchronize(event);
      give_back_or_destroy(events, table, event);
    } else {
      if (event != nullptr) bk(table).event_destroy(event);  // a failed event is not reused
      bk(table).stream_synchronize(owner.native);
    }
    unshare();
  }

 private:
  std::shared_ptr<ShareState> state_;
};

}  // namespace

ShareState::~ShareState() { close_kept(share_); }

anydev_status_t ShareState::describe(
    const std::function<anydev_status_t(anydev_bk_share_t*)>& describe, anydev_bk_share_t* out) {
  std::lock_guard lock(mutex_);
  if (!described_) {
    anydev_bk_share_t fresh{};
    fresh.struct_size = sizeof fresh;
    for (int& fd : fresh.fds) fd = -1;
    if (anydev_status_t s = describe(&fresh); s != ANYDEV_SUCCESS) {
      close_kept(fresh);  // nothing a failing backend handed over stays open
      return s;
    }
    share_ = fresh;
    described_ = true;
  }
  *out = share_;
  return ANYDEV_SUCCESS;
}

ShareState* share_state_of(const Allocation& allocation) noexcept {
  return allocation.strategy().share();
}

std::shared_ptr<Allocation> make_shared_allocation(const Backend* backend, int device,
                                                   anydev_bk_memory_kind_t kind, void* handle,
                                                   void* address, std::size_t bytes,
                                                   std::shared_ptr<Stream> owner) {
  return make_allocation(SharedRelease{}, backend, device, kind, handle, address, bytes,
                         std::move(owner));
}

}  // namespace anydev::core
