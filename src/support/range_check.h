// SPDX-License-Identifier: Apache-2.0
// Overflow-checked size arithmetic for buffers, views and copies.
//
// Every function is pure and thread-safe. A failed check returns a RangeError
// whose status is what the C ABI reports and whose message names the
// operation and the values; success returns std::nullopt.
#ifndef ANYDEV_SRC_SUPPORT_RANGE_CHECK_H_
#define ANYDEV_SRC_SUPPORT_RANGE_CHECK_H_

#include <cstddef>
#include <optional>
#include <string>

#include "anydev/anydev.h"

namespace anydev::core {

struct RangeError {
  anydev_status_t status;
  std::string message;
};

// a * b, or nullopt on overflow.
std::optional<std::size_t> checked_mul(std::size_t a, std::size_t b) noexcept;
// a + b, or nullopt on overflow.
std::optional<std::size_t> checked_add(std::size_t a, std::size_t b) noexcept;

// `count` elements of `elem_size` bytes: OUT_OF_RANGE when the byte count
// overflows size_t. On success *bytes receives the byte count.
std::optional<RangeError> check_byte_count(const char* op, std::size_t count, std::size_t elem_size,
                                           std::size_t* bytes);

// A view of `count` elements of `elem_size` bytes (alignment `elem_align`)
// starting at element `offset` of a buffer of `parent_bytes` bytes, which
// itself starts `parent_offset_bytes` into its allocation.
// OUT_OF_RANGE: the view does not lie inside the parent, or a byte count
// overflows. INVALID_ARGUMENT: the view's start is not aligned for the type.
// On success *view_offset_bytes receives the view's offset in the allocation.
std::optional<RangeError> check_sub_buffer(const char* op, std::size_t parent_bytes,
                                           std::size_t parent_offset_bytes, std::size_t offset,
                                           std::size_t count, std::size_t elem_size,
                                           std::size_t elem_align, std::size_t* view_offset_bytes);

// A copy that moves `needed_bytes` from/to a side of `available_bytes`:
// OUT_OF_RANGE when the side is shorter. `side` names it ("source", "span").
std::optional<RangeError> check_copy_size(const char* op, const char* side,
                                          std::size_t needed_bytes, std::size_t available_bytes);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_RANGE_CHECK_H_
