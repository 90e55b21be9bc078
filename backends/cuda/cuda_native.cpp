// SPDX-License-Identifier: Apache-2.0
// Native handles: CUdevice, CUcontext, CUstream, CUevent, CUdeviceptr.
#include <cuda.h>

#include <cstdint>

#include "cuda_entries.h"
#include "cuda_errors.h"
#include "cuda_objects.h"
#include "cuda_state.h"
#include "kit_table.h"

namespace anydev::cuda {

anydev_status_t native_handle(int device, int kind, void* object, void** out) {
  if (out == nullptr) return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "native_handle: null out");
  if (const anydev_status_t s = check_device(device, "native_handle"); s != ANYDEV_SUCCESS)
    return s;
  if (kit::native_kind_needs_object(kind) && object == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("native_handle: kind ", kind, " needs an object, got null"));
  }
  switch (kind) {
    case ANYDEV_NATIVE_DEVICE:  // a CUdevice is an ordinal: the pointer holds its value
      *out = reinterpret_cast<void*>(static_cast<std::intptr_t>(
          backend_state().devices[static_cast<std::size_t>(device)]->device));
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_CONTEXT: {
      CUcontext context = nullptr;
      if (const anydev_status_t s = primary_context(device, &context); s != ANYDEV_SUCCESS)
        return s;
      *out = context;
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_NATIVE_STREAM:
      *out = as_stream(static_cast<anydev_bk_stream_t>(object))->native;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_EVENT:
      *out = as_event(static_cast<anydev_bk_event_t>(object))->native;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_MEMORY:  // handles are CUdeviceptr values (or pinned host pointers)
      *out = object;
      return ANYDEV_SUCCESS;
    default:
      return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                          cat("native_handle: unknown native kind ", kind));
  }
}

}  // namespace anydev::cuda
