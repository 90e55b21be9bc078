// SPDX-License-Identifier: Apache-2.0
// An anydev event on OpenCL: the cl_event of a marker enqueued by the last
// record (NULL until the first record, when the event counts as complete).
//
// Owned by the core (event_create / event_destroy). The event owns one
// reference to its cl_event; re-recording releases the previous one. The
// native handle (ANYDEV_NATIVE_EVENT) is that cl_event, valid until the next
// record or destroy. Thread-safe: `mutex` guards `marker` and `context`.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_EVENT_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_EVENT_H_

#include <mutex>

#include "opencl_devices.h"

namespace anydev::opencl {

struct Event {
  Device* device = nullptr;
  std::mutex mutex;
  cl_event marker = nullptr;     // owned; NULL when never recorded
  cl_context context = nullptr;  // the context of the queue it was recorded on
  bool timing = false;           // ANYDEV_EVENT_TIMING (opencl_timing.cpp); immutable
};

inline Event* as_event(anydev_bk_event_t handle) { return reinterpret_cast<Event*>(handle); }

// The event's marker with one more reference (the caller releases it), or
// NULL when never recorded; `*context` receives its context.
cl_event retained_marker(Event& event, cl_context* context);

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_EVENT_H_
