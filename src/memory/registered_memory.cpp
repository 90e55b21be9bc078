// SPDX-License-Identifier: Apache-2.0
#include "memory/registered_memory.h"

#include <pthread.h>
#include <unistd.h>

#include <condition_variable>
#include <map>
#include <mutex>

#include "memory/event_pool.h"
#include "memory/stream_ordered_release.h"
#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/fork_guard.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

std::uintptr_t page_size() {
  const long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<std::uintptr_t>(page) : std::uintptr_t{4096};
}

// One claimed range: its first byte (the key), its pages and whether its
// last handle is gone (the backend is undoing it).
struct Claim {
  std::uintptr_t end = 0;         // one past the last byte
  std::uintptr_t page_begin = 0;  // the pages it covers
  std::uintptr_t page_end = 0;
  bool releasing = false;
};

struct Table {
  std::mutex mutex;
  std::condition_variable released;
  std::map<std::pair<const Backend*, std::uintptr_t>, Claim> claims;
};

Table& table() {
  static ProcessObject<Table> instance;
  return instance.get([] { return new Table; },
                      [](Table&) {
                        pthread_atfork([] { table().mutex.lock(); }, [] { table().mutex.unlock(); },
                                       [] { table().mutex.unlock(); });
                      });
}

// The claim of `backend` whose pages meet [page_begin, page_end); null
// when none.
const std::pair<const std::pair<const Backend*, std::uintptr_t>, Claim>* overlapping(
    Table& t, const Backend* backend, std::uintptr_t page_begin, std::uintptr_t page_end) {
  for (const auto& entry : t.claims) {
    if (entry.first.first != backend) continue;
    if (entry.second.page_begin < page_end && page_begin < entry.second.page_end) return &entry;
  }
  return nullptr;
}

void mark_releasing(const Backend* backend, std::uintptr_t pointer) noexcept {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.claims.find({backend, pointer});
  if (it != t.claims.end()) it->second.releasing = true;
}

// The registered strategy: lives beside its Allocation (make_allocation).
class RegisteredRelease final : public ReleaseStrategy {
 public:
  explicit RegisteredRelease(std::function<void()> on_unregistered)
      : on_unregistered_(std::move(on_unregistered)) {}

  bool registered() const noexcept override { return true; }

  void release(Allocation& allocation) noexcept override {
    const Backend* const backend = allocation.backend;
    const auto pointer = reinterpret_cast<std::uintptr_t>(allocation.address);
    mark_releasing(backend, pointer);
    order_release_after_last_use(allocation);
    const anydev_backend_table_t* table_ = backend->table;
    const int device = allocation.device;
    void* const handle = allocation.handle;
    const std::size_t bytes = allocation.bytes;
    auto unregister = [backend, table_, device, handle, pointer, bytes,
                       done = std::move(on_unregistered_)]() mutable {
      if (bk(table_).host_unregister(device, handle) != ANYDEV_SUCCESS) {
        try {
          log(ANYDEV_LOG_ERROR,
              cat(backend->name, ": releasing ", bytes, " bytes of registered host memory at ",
                  reinterpret_cast<void*>(pointer),
                  ": host_unregister failed: ", last_error_message()));
        } catch (...) {
        }
      }
      unclaim_registration(backend, pointer);
      if (done) {
        try {
          done();
        } catch (...) {  // a C callback; nothing may escape a release
        }
      }
    };
    Stream& owner = *allocation.owner_stream;
    EventPool* const events = owner.events;
    anydev_bk_event_t event = nullptr;
    const anydev_status_t taken =
        events != nullptr ? events->take(&event) : bk(table_).event_create(owner.device, &event);
    if (taken == ANYDEV_SUCCESS && bk(table_).event_record(event, owner.native) == ANYDEV_SUCCESS) {
      if (completed_at_once(backend, event)) {
        give_back_or_destroy(events, table_, event);
        unregister();
        return;
      }
      try {
        run_after_event(backend, event, unregister, events);
        return;
      } catch (...) {  // std::bad_alloc copying the callback: wait here instead
      }
      bk(table_).event_synchronize(event);
      give_back_or_destroy(events, table_, event);
    } else {
      if (event != nullptr) bk(table_).event_destroy(event);  // a failed event is not reused
      bk(table_).stream_synchronize(owner.native);
    }
    unregister();
  }

 private:
  std::function<void()> on_unregistered_;
};

}  // namespace

bool claim_registration(const Backend* backend, std::uintptr_t pointer, std::size_t bytes,
                        std::string* conflict) {
  const std::uintptr_t page = page_size();
  Claim claim;
  claim.end = pointer + bytes;
  claim.page_begin = pointer & ~(page - 1);
  claim.page_end = (claim.end + page - 1) & ~(page - 1);
  if (claim.page_end == 0) claim.page_end = UINTPTR_MAX;  // the last page of the address space
  Table& t = table();
  std::unique_lock lock(t.mutex);
  for (;;) {
    const auto* other = overlapping(t, backend, claim.page_begin, claim.page_end);
    if (other == nullptr) break;
    if (!other->second.releasing) {
      *conflict = cat("bytes [", reinterpret_cast<void*>(other->first.second), ", ",
                      reinterpret_cast<void*>(other->second.end),
                      ") are registered and share a page with it");
      return false;
    }
    t.released.wait(lock);  // its stream work, then host_unregister, then retry
  }
  t.claims.emplace(std::make_pair(backend, pointer), claim);
  return true;
}

void unclaim_registration(const Backend* backend, std::uintptr_t pointer) noexcept {
  Table& t = table();
  {
    std::lock_guard lock(t.mutex);
    t.claims.erase({backend, pointer});
  }
  t.released.notify_all();
}

std::shared_ptr<Allocation> make_registered_allocation(const Backend* backend, int device,
                                                       void* handle, void* pointer,
                                                       std::size_t bytes,
                                                       std::shared_ptr<Stream> owner,
                                                       std::function<void()> on_unregistered) {
  return make_allocation(RegisteredRelease(std::move(on_unregistered)), backend, device,
                         ANYDEV_BK_MEMORY_HOST, handle, pointer, bytes, std::move(owner));
}

}  // namespace anydev::core
