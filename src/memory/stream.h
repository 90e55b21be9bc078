// SPDX-License-Identifier: Apache-2.0
// Stream: a backend stream as the core holds it (contexts and stream
// handles share it through shared_ptr, allocations remember their last
// user's), with the event pool of its device (event_pool.h), which
// cross-stream ordering and stream-ordered release take their events from.
//
// Ownership: the Stream owns its backend stream, handed to the reclaimer
// (stream_ordered_release.h) when the last shared_ptr goes; the event pool
// is the process's (never destroyed). Immutable, so thread-safe, except
// `capture` and `release`, which guard themselves (capture_slot.h,
// release_event.h).
#ifndef ANYDEV_SRC_MEMORY_STREAM_H_
#define ANYDEV_SRC_MEMORY_STREAM_H_

#include <memory>

#include "anydev/backend.h"
#include "memory/capture_slot.h"
#include "memory/release_event.h"

namespace anydev::core {

struct Backend;
class EventPool;

// A backend stream. Immutable; destroyed (on the reclaimer thread) when the
// last shared_ptr goes. `table` is backend->table, kept here so that an
// enqueue reaches the backend's entry points in one load less. `events` is
// event_pool_for(backend, device) (null when it could not be made, and in
// streams that unit tests make by hand: then each ordering or release
// creates and destroys its own event, as without a pool).
struct Stream {
  const Backend* backend;
  int device;
  anydev_bk_stream_t native;
  const anydev_backend_table_t* table;
  EventPool* events = nullptr;
  // The priority it was created with (api_priority.cpp); 0 unless given.
  int priority = 0;
  // Whether a capture records this stream's copies and fills (api/capture.h).
  CaptureSlot capture{};
  // The event of its latest pooled release, shared by the next ones
  // (release_event.h).
  ReleaseSlot release{};
};

// Whether `weak` names `stream` (identity only: never locks it).
inline bool same_stream(const std::weak_ptr<Stream>& weak,
                        const std::shared_ptr<Stream>& stream) noexcept {
  return !weak.owner_before(stream) && !stream.owner_before(weak);
}

// Creates a Stream that hands its backend stream to the reclaimer when the
// last reference goes. Returns a status and sets the last error on failure.
anydev_status_t create_stream(const Backend* backend, int device, std::shared_ptr<Stream>* out);
// Same at `priority` (already in the device's range; api_priority.cpp):
// stream_create_priority, or stream_create for priority `least`.
anydev_status_t create_stream(const Backend* backend, int device, int priority, int least,
                              std::shared_ptr<Stream>* out);
// Same, wrapping a backend stream the caller already made.
std::shared_ptr<Stream> adopt_stream(const Backend* backend, int device, anydev_bk_stream_t native);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_STREAM_H_
