// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: DeviceStream (an in-order queue of work on one device) and
// DeviceEvent (a point in a stream's work). Part of anydev.hpp (include
// that); usable alone. Ownership and thread safety: see each class.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_STREAM_HPP_
#define ANYDEV_STREAM_HPP_

#include "anydev/anydev.h"
#include "anydev/detail/handle.hpp"
#include "anydev/share.hpp"
#include "anydev/status.hpp"

namespace anydev {

// A point in a stream's work: recorded with DeviceStream::record_event, waited
// for on the host (synchronize) or by another stream (enqueue_wait_for).
// Shared by copy; a default-constructed or moved-from event is empty and its
// operations throw Error(invalid_state). Thread-safe as the C ABI.
class DeviceEvent {
 public:
  DeviceEvent() noexcept = default;

  // Blocks until the work the event captured has finished.
  void synchronize() const { detail::check(anydev_event_synchronize(get("synchronize"))); }
  // True when the captured work has finished (also for an event never recorded).
  bool is_complete() const {
    int complete = 0;
    detail::check(anydev_event_query(get("is_complete"), &complete));
    return complete != 0;
  }
  // A handle another process opens with DeviceContext::import_event (the
  // event must come from create_shareable_event or an import).
  ShareHandle export_handle() const {
    anydev_share_handle_t raw{};
    detail::check(anydev_event_export(get("export_handle"), &raw));
    return ShareHandle::adopt(raw);
  }
  // CUevent, cl_event, ...: borrowed, valid while this event lives.
  void* native_handle() const {
    void* out = nullptr;
    detail::check(anydev_event_native_handle(get("native_handle"), &out));
    return out;
  }
  // Timed events (docs/timing.md). The ANYDEV_EVENT_* flags it was created
  // with (DeviceContext::create_event(EventOptions)).
  unsigned flags() const {
    unsigned out = 0;
    detail::check(anydev_event_flags(get("flags"), &out));
    return out;
  }
  bool timing() const { return (flags() & ANYDEV_EVENT_TIMING) != 0; }
  bool blocking_sync() const { return (flags() & ANYDEV_EVENT_BLOCKING_SYNC) != 0; }
  // Milliseconds from this event's work to `end`'s, as cuEventElapsedTime:
  // both timing events, recorded, their work complete (else Error with
  // invalid_argument, invalid_state or not_ready; anydev_event_elapsed_time).
  float elapsed_time(const DeviceEvent& end) const {
    const anydev_event_t start = get("elapsed_time");
    if (end.handle() == nullptr) detail::throw_empty("DeviceEvent", "elapsed_time", "end event");
    float ms = 0.0F;
    detail::check(anydev_event_elapsed_time(start, end.handle(), &ms));
    return ms;
  }
  // Mojo's spelling: the milliseconds between `start` and `end`.
  static float elapsed_time(const DeviceEvent& start, const DeviceEvent& end) {
    return start.elapsed_time(end);
  }
  // The C handle, borrowed (no reference added); NULL when empty.
  anydev_event_t handle() const noexcept { return handle_.get(); }
  // Wraps a C handle, taking over the one reference the caller holds.
  static DeviceEvent adopt(anydev_event_t owned) noexcept { return DeviceEvent(owned); }

 private:
  explicit DeviceEvent(anydev_event_t owned) noexcept : handle_(owned) {}
  anydev_event_t get(const char* method) const {
    if (handle_.get() == nullptr) detail::throw_empty("DeviceEvent", method, "event");
    return handle_.get();
  }

  detail::EventHandle handle_;
};

// An in-order queue of work on one device (CUstream, cl_command_queue, ...).
// Shared by copy; a default-constructed or moved-from stream is empty and its
// operations throw Error(invalid_state). Thread-safe as the C ABI.
class DeviceStream {
 public:
  DeviceStream() noexcept = default;

  // Blocks until everything enqueued on the stream has finished.
  void synchronize() const { detail::check(anydev_stream_synchronize(get("synchronize"))); }
  // Makes `event` capture the work enqueued on this stream so far.
  void record_event(const DeviceEvent& event) const {
    const anydev_stream_t stream = get("record_event");
    if (event.handle() == nullptr) detail::throw_empty("DeviceStream", "record_event", "event");
    detail::check(anydev_stream_record_event(stream, event.handle()));
  }
  // Later work on this stream waits (on the device) for `event`'s work.
  void enqueue_wait_for(const DeviceEvent& event) const {
    const anydev_stream_t stream = get("enqueue_wait_for");
    if (event.handle() == nullptr) {
      detail::throw_empty("DeviceStream", "enqueue_wait_for", "event");
    }
    detail::check(anydev_stream_wait_event(stream, event.handle()));
  }
  // CUstream, cl_command_queue, ...: borrowed, valid while this stream lives.
  void* native_handle() const {
    void* out = nullptr;
    detail::check(anydev_stream_native_handle(get("native_handle"), &out));
    return out;
  }
  // The priority it was created with (DeviceContext::create_stream(int));
  // lower is higher, as CUDA's.
  int priority() const {
    int out = 0;
    detail::check(anydev_stream_priority(get("priority"), &out));
    return out;
  }
  anydev_stream_t handle() const noexcept { return handle_.get(); }
  static DeviceStream adopt(anydev_stream_t owned) noexcept { return DeviceStream(owned); }

 private:
  explicit DeviceStream(anydev_stream_t owned) noexcept : handle_(owned) {}
  anydev_stream_t get(const char* method) const {
    if (handle_.get() == nullptr) detail::throw_empty("DeviceStream", method, "stream");
    return handle_.get();
  }

  detail::StreamHandle handle_;
};

}  // namespace anydev

#endif  // ANYDEV_STREAM_HPP_
