// SPDX-License-Identifier: Apache-2.0
// Timed and blocking-sync events of a GPU backend (event_create_flags,
// event_elapsed_time; docs/timing.md): native events created without
// Api::kEventFlags' disable-timing bit when timing is asked for, with
// Api::kEventBlockingSync when blocking sync is, and the driver's elapsed
// time between two of them. Thread-safe, like the driver calls they make.
#ifndef ANYDEV_BACKENDS_GPU_GPU_TIMING_H_
#define ANYDEV_BACKENDS_GPU_GPU_TIMING_H_

#include <cstdint>
#include <new>

#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::gpu {

template <class Api>
anydev_status_t event_create_flags(int device, std::uint32_t flags, anydev_bk_event_t* out) {
  using names = typename Api::driver_t::names;
  if (out == nullptr) return null_argument<Api>("event_create_flags", "out");
  const bool timing = (flags & ANYDEV_EVENT_TIMING) != 0;
  if (timing && driver<Api>().EventElapsedTime == nullptr) {
    return report_error<Api>(
        ANYDEV_ERROR_UNSUPPORTED,
        cat("event_create_flags on ", Api::kName, " device ", device, ": the ", Api::kDriverWhat,
            " lacks ", names::EventElapsedTime, ", so events cannot be timed"));
  }
  // Only what was asked for: a timing event costs the driver a timestamp.
  const unsigned native_flags =
      (timing ? 0U : Api::kEventFlags) |
      ((flags & ANYDEV_EVENT_BLOCKING_SYNC) != 0 ? Api::kEventBlockingSync : 0U);
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "event_create_flags"); s != ANYDEV_SUCCESS) {
    return s;
  }
  typename Api::event_t native{};
  const auto r = driver<Api>().EventCreate(&native, native_flags);
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, names::EventCreate,
                               cat("event_create_flags on ", Api::kName, " device ", device));
  }
  auto* event = new (std::nothrow) Event<Api>{device, native};
  if (event == nullptr) {
    static_cast<void>(driver<Api>().EventDestroy(native));  // nothing to report it to
    return report_error<Api>(ANYDEV_ERROR_OUT_OF_MEMORY, "event_create_flags: out of host memory");
  }
  *out = to_token(event);
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t event_elapsed_time(anydev_bk_event_t start_token, anydev_bk_event_t end_token,
                                   float* ms) {
  using names = typename Api::driver_t::names;
  const Event<Api>* start = as_event<Api>(start_token);
  const Event<Api>* end = as_event<Api>(end_token);
  if (start == nullptr) return null_argument<Api>("event_elapsed_time", "start");
  if (end == nullptr) return null_argument<Api>("event_elapsed_time", "end");
  if (ms == nullptr) return null_argument<Api>("event_elapsed_time", "ms");
  if (driver<Api>().EventElapsedTime == nullptr) {
    return report_error<Api>(
        ANYDEV_ERROR_UNSUPPORTED,
        cat("event_elapsed_time: the ", Api::kDriverWhat, " lacks ", names::EventElapsedTime));
  }
  float got = 0.0F;
  const auto r = call_on_stream<Api>(start->device, true, "event_elapsed_time", [&] {
    return driver<Api>().EventElapsedTime(&got, start->native, end->native);
  });
  if (r == Api::kNotReady) {
    return report_error<Api>(ANYDEV_ERROR_NOT_READY,
                             cat("event_elapsed_time on ", Api::kName, " device ", start->device,
                                 ": the recorded work has not completed yet (",
                                 names::EventElapsedTime, ": ", Api::describe(r), ")"));
  }
  if (r != Api::kSuccess) {
    return report_failure<Api>(
        r, names::EventElapsedTime,
        cat("event_elapsed_time on ", Api::kName, " device ", start->device));
  }
  *ms = got;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_TIMING_H_
