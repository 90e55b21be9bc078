// SPDX-License-Identifier: Apache-2.0
// Native handles of a GPU backend: the device (its native value in the
// pointer), the context (Api::native_context), streams, events and memory
// (device addresses or pinned host pointers). Thread-safe.
#ifndef ANYDEV_BACKENDS_GPU_GPU_NATIVE_H_
#define ANYDEV_BACKENDS_GPU_GPU_NATIVE_H_

#include <cstdint>

#include "anydev/kit/table.h"
#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::gpu {

template <class Api>
anydev_status_t native_handle(int device, int kind, void* object, void** out) {
  if (out == nullptr) return null_argument<Api>("native_handle", "out");
  if (const anydev_status_t s = check_device<Api>(device, "native_handle"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (kit::native_kind_needs_object(kind) && object == nullptr) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat("native_handle: kind ", kind, " needs an object, got null"));
  }
  switch (kind) {
    case ANYDEV_NATIVE_DEVICE:  // an ordinal: the pointer holds its value
      *out = reinterpret_cast<void*>(static_cast<std::intptr_t>(device_state<Api>(device).device));
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_CONTEXT:
      return Api::native_context(device, out);
    case ANYDEV_NATIVE_STREAM:
      *out = as_stream<Api>(static_cast<anydev_bk_stream_t>(object))->native;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_EVENT:
      *out = as_event<Api>(static_cast<anydev_bk_event_t>(object))->native;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_MEMORY:
      *out = object;
      return ANYDEV_SUCCESS;
    default:
      return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                               cat("native_handle: unknown native kind ", kind));
  }
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_NATIVE_H_
