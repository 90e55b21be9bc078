// SPDX-License-Identifier: Apache-2.0
#include "memory/stream.h"

#include "memory/event_pool.h"
#include "memory/stream_ordered_release.h"
#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/fork_guard.h"

namespace anydev::core {

anydev_status_t create_stream(const Backend* backend, int device, std::shared_ptr<Stream>* out) {
  anydev_bk_stream_t native = nullptr;
  const anydev_status_t status = bk(backend->table).stream_create(device, &native);
  if (status != ANYDEV_SUCCESS) return status;
  *out = adopt_stream(backend, device, native);
  return ANYDEV_SUCCESS;
}

anydev_status_t create_stream(const Backend* backend, int device, int priority, int least,
                              std::shared_ptr<Stream>* out) {
  if (priority == least || backend->table->stream_create_priority == nullptr) {
    return create_stream(backend, device, out);
  }
  anydev_bk_stream_t native = nullptr;
  const anydev_status_t status =
      bk(backend->table).stream_create_priority(device, priority, &native);
  if (status != ANYDEV_SUCCESS) return status;
  std::shared_ptr<Stream> made = adopt_stream(backend, device, native);
  made->priority = priority;
  *out = std::move(made);
  return ANYDEV_SUCCESS;
}

std::shared_ptr<Stream> adopt_stream(const Backend* backend, int device,
                                     anydev_bk_stream_t native) {
  const std::uint64_t generation = fork_generation();
  auto release = [generation](Stream* s) {
    // In a forked child the stream belongs to the parent: leave it.
    if (fork_generation() == generation)
      release_stream(s->backend, s->native, s->device, s->events);
    delete s;
  };
  return std::shared_ptr<Stream>(
      new Stream{backend, device, native, backend->table, event_pool_or_null(backend, device)},
      release);
}

}  // namespace anydev::core
