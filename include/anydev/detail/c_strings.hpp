// SPDX-License-Identifier: Apache-2.0
// Strings between the C++ API and the C ABI. Internal to anydev's headers.
// OptionalCString owns its copy (a plain value, not for concurrent mutation);
// to_std_string copies.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_DETAIL_C_STRINGS_HPP_
#define ANYDEV_DETAIL_C_STRINGS_HPP_

#include <string>
#include <string_view>

namespace anydev::detail {

// NUL-terminated copy of an optional name: empty -> NULL.
class OptionalCString {
 public:
  explicit OptionalCString(std::string_view s) : value_(s) {}
  const char* get() const noexcept { return value_.empty() ? nullptr : value_.c_str(); }

 private:
  std::string value_;
};

// A copy of a string the C ABI returned; NULL -> empty.
inline std::string to_std_string(const char* s) {
  return s != nullptr ? std::string(s) : std::string();
}

}  // namespace anydev::detail

#endif  // ANYDEV_DETAIL_C_STRINGS_HPP_
