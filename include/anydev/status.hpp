// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: status codes and the exception every failing call throws.
// Part of anydev.hpp (include that); usable alone.
//
// Status is a plain enum, Error an immutable exception (shareable between
// threads); detail::check turns a C status plus the calling thread's last C
// error message into an Error.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_STATUS_HPP_
#define ANYDEV_STATUS_HPP_

#include <stdexcept>
#include <string>
#include <utility>

#include "anydev/anydev.h"

namespace anydev {

// Outcome of an operation; the same numeric values as anydev_status_t.
enum class Status {
  success = ANYDEV_SUCCESS,
  invalid_argument = ANYDEV_ERROR_INVALID_ARGUMENT,
  out_of_range = ANYDEV_ERROR_OUT_OF_RANGE,
  out_of_memory = ANYDEV_ERROR_OUT_OF_MEMORY,
  backend_unavailable = ANYDEV_ERROR_BACKEND_UNAVAILABLE,
  device_error = ANYDEV_ERROR_DEVICE,
  unsupported = ANYDEV_ERROR_UNSUPPORTED,
  invalid_state = ANYDEV_ERROR_INVALID_STATE,
  internal = ANYDEV_ERROR_INTERNAL,
  not_ready = ANYDEV_ERROR_NOT_READY,
};

// "success", "invalid_argument", ...; "unknown" for a value outside the enum.
constexpr const char* to_string(Status status) noexcept {
  switch (status) {
    case Status::success:
      return "success";
    case Status::invalid_argument:
      return "invalid_argument";
    case Status::out_of_range:
      return "out_of_range";
    case Status::out_of_memory:
      return "out_of_memory";
    case Status::backend_unavailable:
      return "backend_unavailable";
    case Status::device_error:
      return "device_error";
    case Status::unsupported:
      return "unsupported";
    case Status::invalid_state:
      return "invalid_state";
    case Status::internal:
      return "internal";
    case Status::not_ready:
      return "not_ready";
  }
  return "unknown";
}

// The exception every failing operation throws: what() is the message (naming
// the operation and the values), status() the code. Immutable, so it may be
// shared between threads.
class Error : public std::runtime_error {
 public:
  Error(Status status, std::string message)
      : std::runtime_error(std::move(message)), status_(status) {}
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

namespace detail {

// Throws Error(status, the calling thread's last C error message) unless
// `status` is success.
inline void check(anydev_status_t status) {
  if (status == ANYDEV_SUCCESS) return;
  std::string message = anydev_last_error_message();
  if (message.empty()) {
    message = std::string("anydev call failed with ") + to_string(static_cast<Status>(status));
  }
  throw Error(static_cast<Status>(status), std::move(message));
}

// Error(invalid_state) for `method` of `type` called on an empty `what`
// (default-constructed or moved-from).
[[noreturn]] inline void throw_empty(const char* type, const char* method, const char* what) {
  throw Error(Status::invalid_state, std::string(type) + "::" + method + ": the " + what +
                                         " is empty (default-constructed or moved-from)");
}

}  // namespace detail

}  // namespace anydev

#endif  // ANYDEV_STATUS_HPP_
