// SPDX-License-Identifier: Apache-2.0
#include "memory/allocation.h"

#include <string>

#include "memory/event_pool.h"
#include "memory/host_memory_locks.h"
#include "memory/record_slab.h"
#include "memory/stream_ordered_release.h"
#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/fork_guard.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

// Release paths never throw: a message that cannot be built (no memory) is
// dropped.
void log_failure(const Backend* backend, const char* what) noexcept {
  try {
    log(ANYDEV_LOG_ERROR,
        cat(backend->name, ": release: ", what, " failed: ", last_error_message()));
  } catch (...) {
  }
}

// The plain strategy: stateless, so one object serves every allocation.
// Constant-initialized with a trivial destructor: nothing runs at exit, so
// allocations released during exit still find it.
class PlainRelease final : public ReleaseStrategy {
 public:
  constexpr PlainRelease() = default;
  void release(Allocation& allocation) noexcept override {
    if (allocation.handle == nullptr) return;  // zero-size buffers own no memory
    order_release_after_last_use(allocation);
    free_after_owner_stream(allocation);
  }
};

constinit PlainRelease g_plain_release;

}  // namespace

ReleaseStrategy& plain_release() noexcept { return g_plain_release; }

anydev_status_t order_after(Stream& waiter, Stream& signaler) {
  if (&waiter == &signaler) return ANYDEV_SUCCESS;
  const anydev_backend_table_t* table = waiter.backend->table;
  EventPool* const events = signaler.events;
  anydev_bk_event_t event = nullptr;
  anydev_status_t status =
      events != nullptr ? events->take(&event) : bk(table).event_create(signaler.device, &event);
  if (status != ANYDEV_SUCCESS) return status;
  status = bk(table).event_record(event, signaler.native);
  if (status == ANYDEV_SUCCESS) status = bk(table).stream_wait_event(waiter.native, event);
  if (status == ANYDEV_SUCCESS) {
    // The backend does not need the event after stream_wait_event (backend.h):
    // it is idle again at once.
    give_back_or_destroy(events, table, event);
    return ANYDEV_SUCCESS;
  }
  // A failed event is not reused; destroying it must not replace the error.
  const std::string message = last_error_message();
  bk(table).event_destroy(event);
  set_error(status, message);
  return status;
}

Allocation::Allocation(ReleaseStrategy& strategy, const Backend* backend_, int device_,
                       anydev_bk_memory_kind_t kind_, void* handle_, void* address_,
                       std::size_t bytes_, std::shared_ptr<Stream> owner)
    : backend(backend_),
      device(device_),
      kind(kind_),
      handle(handle_),
      address(address_),
      bytes(bytes_),
      owner_stream(std::move(owner)),
      strategy_(strategy),
      fork_generation_(fork_generation()) {}

Allocation::~Allocation() {
  // In a forked child the memory (and a producer's) belongs to the parent:
  // leave it.
  if (fork_generation() != fork_generation_) return;
  strategy_.release(*this);
}

std::shared_ptr<Allocation> make_plain_allocation(const Backend* backend, int device,
                                                  anydev_bk_memory_kind_t kind, void* handle,
                                                  void* address, std::size_t bytes,
                                                  std::shared_ptr<Stream> owner) {
  return std::allocate_shared<Allocation>(RecordAllocator<Allocation>{}, plain_release(), backend,
                                          device, kind, handle, address, bytes, std::move(owner));
}

void order_release_after_last_use(Allocation& allocation) noexcept {
  if (!allocation.last_stream) return;
  const anydev_backend_table_t* table = allocation.backend->table;
  bool ordered = false;
  try {
    ordered = order_after(*allocation.owner_stream, *allocation.last_stream) == ANYDEV_SUCCESS;
  } catch (...) {  // std::bad_alloc keeping the error message
  }
  if (ordered) return;
  // Cannot order the free after the last user: wait for it here rather
  // than free memory that may still be in use.
  log_failure(allocation.backend, "ordering the free after the last user's stream");
  if (bk(table).stream_synchronize(allocation.last_stream->native) != ANYDEV_SUCCESS) {
    log_failure(allocation.backend, "stream_synchronize");
  }
}

void free_after_owner_stream(Allocation& allocation, WaitingReleases* waiting) noexcept {
  const Backend* const backend = allocation.backend;
  const anydev_backend_table_t* table = backend->table;
  const int device = allocation.device;
  const anydev_bk_memory_kind_t kind = allocation.kind;
  void* const handle = allocation.handle;
  Stream& owner = *allocation.owner_stream;
  if (kind == ANYDEV_BK_MEMORY_DEVICE && table->memory_free_async != nullptr) {
    const anydev_status_t s = bk(table).memory_free_async(device, handle, owner.native);
    if (s == ANYDEV_SUCCESS) return;
    // ANYDEV_BK_DECLINED (no stream-ordered free on this device) is no
    // failure: the stream-ordered release below frees it.
    if (s != ANYDEV_BK_DECLINED) log_failure(backend, "memory_free_async");
  }
  // Frees on this thread, once the owner stream's work is known to be done.
  const auto free_here = [&] {
    note_host_free(backend, device, kind, handle);
    if (bk(table).memory_free(device, kind, handle) != ANYDEV_SUCCESS) {
      log_failure(backend, "memory_free");
    }
  };
  EventPool* const events = owner.events;
  anydev_bk_event_t event = nullptr;
  const anydev_status_t taken =
      events != nullptr ? events->take(&event) : bk(table).event_create(owner.device, &event);
  if (taken != ANYDEV_SUCCESS || bk(table).event_record(event, owner.native) != ANYDEV_SUCCESS) {
    log_failure(backend, "recording the release event");
    if (event != nullptr) bk(table).event_destroy(event);  // a failed event is not reused
    if (bk(table).stream_synchronize(owner.native) != ANYDEV_SUCCESS) {
      log_failure(backend, "stream_synchronize");
    }
    free_here();
    return;
  }
  if (completed_at_once(backend, event)) {
    // The stream has already finished with it (a cheap query only): freed
    // here, as without a stream, the event idle again at once.
    give_back_or_destroy(events, table, event);
    free_here();
    return;
  }
  // The reclaimer gives the event back to `events` once it completed
  // (stream_ordered_release.h). It never throws: without memory or a thread
  // it frees on this thread.
  release_after_event(backend, device, event, kind, handle, events, allocation.bytes, waiting);
}

}  // namespace anydev::core
