#include "foreign_memory.h"

#include "logging.h"
#include "objects.h"
#include "status.h"
#include "stream_ordered_release.h"

namespace anydev::core {

std::shared_ptr<Allocation> make_foreign_allocation(const Backend* backend, int device,
                                                    anydev_bk_memory_kind_t kind, void* address,
                                                    std::size_t bytes,
                                                    std::shared_ptr<Stream> owner,
                                                    std::function<void()> release) {
  auto allocation = std::make_shared<Allocation>(backend, device, kind, address, address, bytes,
                                                 std::move(owner));
  allocation->foreign_release = std::move(release);
  return allocation;
}

void release_foreign_memory(Allocation& allocation) noexcept {
  std::function<void()> release = std::move(allocation.foreign_release);
  std::shared_ptr<Stream> last;
  {
    std::lock_guard lock(allocation.mutex);
    last = allocation.last_stream;
  }
  if (!last) {
    release();  // anydev never enqueued work on it
    return;
  }
  const anydev_backend_table_t* table = last->backend->table;
  anydev_bk_event_t event = nullptr;
  if (table->event_create(last->device, &event) == ANYDEV_SUCCESS &&
      table->event_record(event, last->native) == ANYDEV_SUCCESS) {
    try {
      run_after_event(last->backend, event, release);  // a copy: `release` stays usable
      return;
    } catch (...) {  // std::bad_alloc queueing the item: wait here instead
    }
  } else {
    try {  // a release never throws: without memory for the message, none
      log(ANYDEV_LOG_ERROR, cat(last->backend->name,
                                ": releasing foreign memory: recording the release event failed: ",
                                last_error_message(), "; waiting for the stream instead"));
    } catch (...) {
    }
  }
  if (event != nullptr) {
    table->event_synchronize(event);
    table->event_destroy(event);
  } else {
    table->stream_synchronize(last->native);
  }
  release();
}

}  // namespace anydev::core
