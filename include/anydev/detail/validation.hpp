// SPDX-License-Identifier: Apache-2.0
// Whether anydev's validation layer (ANYDEV_VALIDATE) is on, for the C++
// API's element access. Internal to anydev's headers. Plain functions and a
// constant: nothing owned, safe from any thread.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_DETAIL_VALIDATION_HPP_
#define ANYDEV_DETAIL_VALIDATION_HPP_

#include "anydev/anydev.h"

namespace anydev::detail {

// Whether the validation layer is on (ANYDEV_VALIDATE), asked once.
inline bool validation_on() noexcept {
  static const bool on = anydev_validation_enabled() != 0;
  return on;
}
// The same, read when the program starts: a plain constant the compiler can
// hoist out of element loops, so that operator[] stays as fast as a pointer
// access when validation is off (code that runs before this initializer sees
// false).
inline const bool validation_on_at_start = anydev_validation_enabled() != 0;

}  // namespace anydev::detail

#endif  // ANYDEV_DETAIL_VALIDATION_HPP_
