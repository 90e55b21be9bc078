// SPDX-License-Identifier: Apache-2.0
// The text of a buffer for operator<< (buffer.hpp), made by the C ABI.
// Internal to anydev's headers; returns an owned string, thread-safe as the
// C ABI.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_DETAIL_FORMAT_HPP_
#define ANYDEV_DETAIL_FORMAT_HPP_

#include <cstddef>
#include <string>

#include "anydev/anydev.h"
#include "anydev/status.hpp"

namespace anydev::detail {

// Mojo's text of a buffer, made by the C ABI (a device buffer is copied to the
// host synchronously).
inline std::string format_buffer(anydev_buffer_t buffer) {
  char small[256];
  std::size_t needed = 0;
  anydev_status_t status = anydev_buffer_format(buffer, small, sizeof(small), &needed);
  if (status == ANYDEV_SUCCESS) return std::string(small);
  std::string text;
  // Contents may change between calls (other threads): retry while it grows.
  while (status == ANYDEV_ERROR_OUT_OF_RANGE && needed > text.size() + 1) {
    text.assign(needed, '\0');
    status = anydev_buffer_format(buffer, text.data(), text.size(), &needed);
    if (status == ANYDEV_SUCCESS) {
      text.resize(needed > 0 ? needed - 1 : 0);
      return text;
    }
  }
  check(status);
  throw Error(Status::internal, "anydev_buffer_format: failed without an error status");
}

}  // namespace anydev::detail

#endif  // ANYDEV_DETAIL_FORMAT_HPP_
