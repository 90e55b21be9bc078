// SPDX-License-Identifier: Apache-2.0
// C entry points: errors, versions, dtypes.
#include "anydev/anydev.h"
#include "api/api_common.h"
#include "support/dtype.h"

using namespace anydev::core;

namespace anydev::core {
std::string describe_device(const Backend* backend, int device) {
  return cat(backend->name, ":", device);
}
}  // namespace anydev::core

extern "C" {

const char* anydev_last_error_message(void) { return last_error_message().c_str(); }

anydev_status_t anydev_last_error_status(void) { return last_error_status(); }

void anydev_clear_last_error(void) { clear_last_error(); }

const char* anydev_status_name(anydev_status_t status) {
  switch (status) {
    case ANYDEV_SUCCESS:
      return "success";
    case ANYDEV_ERROR_INVALID_ARGUMENT:
      return "invalid_argument";
    case ANYDEV_ERROR_OUT_OF_RANGE:
      return "out_of_range";
    case ANYDEV_ERROR_OUT_OF_MEMORY:
      return "out_of_memory";
    case ANYDEV_ERROR_BACKEND_UNAVAILABLE:
      return "backend_unavailable";
    case ANYDEV_ERROR_DEVICE:
      return "device_error";
    case ANYDEV_ERROR_UNSUPPORTED:
      return "unsupported";
    case ANYDEV_ERROR_INVALID_STATE:
      return "invalid_state";
    case ANYDEV_ERROR_INTERNAL:
      return "internal";
    case ANYDEV_ERROR_NOT_READY:
      return "not_ready";
  }
  return "unknown";
}

const char* anydev_version_string(void) { return "0.1.0"; }

size_t anydev_dtype_size(anydev_dtype_t dtype) {
  const auto traits = dtype_traits(dtype);
  return traits ? traits->size : 0;
}

const char* anydev_dtype_name(anydev_dtype_t dtype) {
  const auto traits = dtype_traits(dtype);
  return traits ? traits->name.data() : nullptr;
}

anydev_status_t anydev_dtype_from_name(const char* name, anydev_dtype_t* out) {
  static constexpr const char* op = "anydev_dtype_from_name";
  ANYDEV_REQUIRE_ARG(op, name);
  ANYDEV_REQUIRE_ARG(op, out);
  const auto dtype = dtype_from_name(name);
  if (!dtype) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown dtype \"", name,
                "\" (expected bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
                "float16, bfloat16, float32, float64, complex64 or complex128)");
  }
  *out = *dtype;
  return ANYDEV_SUCCESS;
}

}  // extern "C"
