// SPDX-License-Identifier: Apache-2.0
// Stream priorities of a GPU backend (stream_priority_range,
// stream_create_priority; docs/timing.md): the driver's range for the
// device (cuCtxGetStreamPriorityRange, hipDeviceGetStreamPriorityRange,
// under the device's scope) and its create-with-priority call, with the
// backend's usual non-blocking stream flags. Thread-safe.
#ifndef ANYDEV_BACKENDS_GPU_GPU_PRIORITY_H_
#define ANYDEV_BACKENDS_GPU_GPU_PRIORITY_H_

#include <new>

#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::gpu {

template <class Api>
anydev_status_t stream_priority_range(int device, int* least, int* greatest) {
  using names = typename Api::driver_t::names;
  if (least == nullptr) return null_argument<Api>("stream_priority_range", "least");
  if (greatest == nullptr) return null_argument<Api>("stream_priority_range", "greatest");
  if (driver<Api>().CtxGetStreamPriorityRange == nullptr ||
      driver<Api>().StreamCreateWithPriority == nullptr) {
    *least = 0;  // the driver has no priorities: the one normal priority
    *greatest = 0;
    return ANYDEV_SUCCESS;
  }
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "stream_priority_range"); s != ANYDEV_SUCCESS) {
    return s;
  }
  int lo = 0;
  int hi = 0;
  const auto r = driver<Api>().CtxGetStreamPriorityRange(&lo, &hi);
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, names::CtxGetStreamPriorityRange,
                               cat("stream_priority_range on ", Api::kName, " device ", device));
  }
  *least = lo;
  *greatest = hi;
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t stream_create_priority(int device, int priority, anydev_bk_stream_t* out) {
  using names = typename Api::driver_t::names;
  if (out == nullptr) return null_argument<Api>("stream_create_priority", "out");
  if (driver<Api>().StreamCreateWithPriority == nullptr) {
    return report_error<Api>(ANYDEV_ERROR_UNSUPPORTED,
                             cat("stream_create_priority: the ", Api::kDriverWhat, " lacks ",
                                 names::StreamCreateWithPriority));
  }
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "stream_create_priority");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  typename Api::stream_t native{};
  const auto r = driver<Api>().StreamCreateWithPriority(&native, Api::kStreamFlags, priority);
  if (r != Api::kSuccess) {
    return report_failure<Api>(
        r, names::StreamCreateWithPriority,
        cat("stream_create_priority(", priority, ") on ", Api::kName, " device ", device));
  }
  auto* stream = new (std::nothrow) Stream<Api>{device, native, true};
  if (stream == nullptr) {
    static_cast<void>(driver<Api>().StreamDestroy(native));  // nothing to report it to
    return report_error<Api>(ANYDEV_ERROR_OUT_OF_MEMORY,
                             "stream_create_priority: out of host memory");
  }
  *out = to_token(stream);
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_PRIORITY_H_
