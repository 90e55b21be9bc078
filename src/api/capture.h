// SPDX-License-Identifier: Apache-2.0
// Stream capture (docs/graphs.md, "Stream capture"): while a context's
// stream captures into a graph, the copies and fills enqueued on it become
// graph nodes, each after the previous one, instead of running. Every
// other operation that would run on or wait for the capturing stream is
// refused here with INVALID_STATE, naming the operation.
//
// A capture belongs to the stream (memory/capture_slot.h holds it) and to
// the thread that began it: enqueues from other threads on the capturing
// stream are refused, and only that thread can end it. Thread-safe: the
// session is reached under the slot's mutex; lock order: buffer handles,
// the slot, the graph.
#ifndef ANYDEV_SRC_API_CAPTURE_H_
#define ANYDEV_SRC_API_CAPTURE_H_

#include "api/buffer_access.h"

namespace anydev::core {

// What a capture did with an enqueue: `handled` false means the stream was
// not capturing after all (the capture ended meanwhile): run it as usual.
struct Captured {
  bool handled;
  anydev_status_t status;
};

// Records the copy (or fill) as a node after the previous captured one. The
// buffers are held by the caller's BufferHold.
[[gnu::cold]] Captured capture_copy(const char* op, Stream& stream, const HeldBuffer& dst,
                                    const HeldBuffer& src);
[[gnu::cold]] Captured capture_fill(const char* op, Stream& stream, const HeldBuffer& buf,
                                    const void* pattern, std::size_t pattern_size);
// A copy to or from a caller's pointer: a graph could not keep that memory
// alive, so capturing it is refused.
[[gnu::cold]] Captured capture_host_copy(const char* op, Stream& stream);

// INVALID_STATE while `stream` captures: `what` (e.g. "synchronizing the
// stream") cannot be recorded. Success once the capture has ended.
[[gnu::cold]] anydev_status_t refuse_capturing(const char* op, Stream& stream, const char* what);

inline anydev_status_t check_not_capturing(const char* op, Stream& stream, const char* what) {
  if (!stream.capture.active()) [[likely]]
    return ANYDEV_SUCCESS;
  return refuse_capturing(op, stream, what);
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_CAPTURE_H_
