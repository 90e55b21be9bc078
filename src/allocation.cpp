#include "allocation.h"

#include "foreign_memory.h"
#include "fork_guard.h"
#include "host_memory_locks.h"
#include "logging.h"
#include "objects.h"
#include "pool/pooled_allocation.h"
#include "status.h"
#include "stream_ordered_release.h"

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

}  // namespace

anydev_status_t order_after(Stream& waiter, Stream& signaler) {
  if (&waiter == &signaler) return ANYDEV_SUCCESS;
  const anydev_backend_table_t* table = waiter.backend->table;
  anydev_bk_event_t event = nullptr;
  anydev_status_t status = table->event_create(signaler.device, &event);
  if (status != ANYDEV_SUCCESS) return status;
  status = table->event_record(event, signaler.native);
  if (status == ANYDEV_SUCCESS) status = table->stream_wait_event(waiter.native, event);
  // The backend does not need the event after stream_wait_event (backend.h).
  const std::string message = status == ANYDEV_SUCCESS ? "" : last_error_message();
  table->event_destroy(event);
  if (status != ANYDEV_SUCCESS) set_error(status, message);
  return status;
}

anydev_status_t create_stream(const Backend* backend, int device, std::shared_ptr<Stream>* out) {
  anydev_bk_stream_t native = nullptr;
  const anydev_status_t status = backend->table->stream_create(device, &native);
  if (status != ANYDEV_SUCCESS) return status;
  *out = adopt_stream(backend, device, native);
  return ANYDEV_SUCCESS;
}

std::shared_ptr<Stream> adopt_stream(const Backend* backend, int device,
                                     anydev_bk_stream_t native) {
  const std::uint64_t generation = fork_generation();
  auto release = [generation](Stream* s) {
    // In a forked child the stream belongs to the parent: leave it.
    if (fork_generation() == generation) release_stream(s->backend, s->native, s->device);
    delete s;
  };
  return std::shared_ptr<Stream>(new Stream{backend, device, native, backend->table}, release);
}

Allocation::Allocation(const Backend* backend_, int device_, anydev_bk_memory_kind_t kind_,
                       void* handle_, void* address_, std::size_t bytes_,
                       std::shared_ptr<Stream> owner)
    : backend(backend_),
      device(device_),
      kind(kind_),
      handle(handle_),
      address(address_),
      bytes(bytes_),
      owner_stream(std::move(owner)),
      fork_generation_(fork_generation()) {}

Allocation::~Allocation() {
  if (foreign_release) {
    // In a forked child the producer's memory belongs to the parent: leave it.
    if (fork_generation() == fork_generation_) release_foreign_memory(*this);
    return;
  }
  if (handle == nullptr) return;                      // zero-size buffers own no memory
  if (fork_generation() != fork_generation_) return;  // the parent's memory
  const anydev_backend_table_t* table = backend->table;
  Stream& owner = *owner_stream;
  bool ordered = !last_stream;
  if (last_stream) {
    try {
      ordered = order_after(owner, *last_stream) == ANYDEV_SUCCESS;
    } catch (...) {  // std::bad_alloc keeping the error message
    }
  }
  if (!ordered) {
    // Cannot order the free after the last user: wait for it here rather
    // than free memory that may still be in use.
    log_failure(backend, "ordering the free after the last user's stream");
    if (table->stream_synchronize(last_stream->native) != ANYDEV_SUCCESS) {
      log_failure(backend, "stream_synchronize");
    }
  }
  if (return_pool_block(*this)) return;  // cached for reuse (pool/caching_pool.h)
  if (kind == ANYDEV_BK_MEMORY_DEVICE && table->memory_free_async != nullptr) {
    const anydev_status_t s = table->memory_free_async(device, handle, owner.native);
    if (s == ANYDEV_SUCCESS) return;
    // ANYDEV_BK_DECLINED (no stream-ordered free on this device) is no
    // failure: the stream-ordered release below frees it.
    if (s != ANYDEV_BK_DECLINED) log_failure(backend, "memory_free_async");
  }
  anydev_bk_event_t event = nullptr;
  if (table->event_create(device, &event) != ANYDEV_SUCCESS ||
      table->event_record(event, owner.native) != ANYDEV_SUCCESS) {
    log_failure(backend, "recording the release event");
    if (event != nullptr) table->event_destroy(event);
    if (table->stream_synchronize(owner.native) != ANYDEV_SUCCESS) {
      log_failure(backend, "stream_synchronize");
    }
    note_host_free(backend, device, kind, handle);
    if (table->memory_free(device, kind, handle) != ANYDEV_SUCCESS) {
      log_failure(backend, "memory_free");
    }
    return;
  }
  try {
    release_after_event(backend, device, event, kind, handle);
    return;
  } catch (...) {  // no memory or no thread to queue it: wait here instead
  }
  log_failure(backend, "handing the free to the reclaimer");
  if (table->event_synchronize(event) != ANYDEV_SUCCESS) log_failure(backend, "event_synchronize");
  table->event_destroy(event);
  if (table->memory_free(device, kind, handle) != ANYDEV_SUCCESS) {
    log_failure(backend, "memory_free");
  }
}

}  // namespace anydev::core
