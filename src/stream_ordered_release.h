// The reclaimer: one core thread that finishes releases without making the
// caller wait. It takes, in FIFO order:
//   - memory to free once an event (recorded on the memory's owner stream
//     after its last use) has completed;
//   - backend streams to destroy (destroying one may wait for its work).
// It starts on first use. At exit (atexit) it finishes what is queued and
// stops; later requests run inline. In a forked child nothing is queued: the
// parent's memory and streams are left alone (they belong to the parent).
// Thread-safe.
#ifndef ANYDEV_SRC_STREAM_ORDERED_RELEASE_H_
#define ANYDEV_SRC_STREAM_ORDERED_RELEASE_H_

#include <functional>

#include "anydev/backend.h"

namespace anydev::core {

struct Backend;

// Frees `handle` (of `kind`, on `device`) after `event` completes, then
// destroys the event. Takes ownership of the event.
void release_after_event(const Backend* backend, int device, anydev_bk_event_t event,
                         anydev_bk_memory_kind_t kind, void* handle);

// Runs `callback` (on the reclaimer thread) after `event` completes, then
// destroys the event. Takes ownership of the event. For memory the core does
// not own (foreign_memory.h).
void run_after_event(const Backend* backend, anydev_bk_event_t event,
                     std::function<void()> callback);

// Destroys a backend stream off the caller's thread.
void release_stream(const Backend* backend, anydev_bk_stream_t stream);

// Waits until everything queued so far has been done (tests, exit).
void drain_releases();

}  // namespace anydev::core

#endif  // ANYDEV_SRC_STREAM_ORDERED_RELEASE_H_
