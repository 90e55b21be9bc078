// SPDX-License-Identifier: Apache-2.0
#include "support/range_check.h"

#include "support/status.h"

namespace anydev::core {

std::optional<std::size_t> checked_mul(std::size_t a, std::size_t b) noexcept {
  std::size_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

std::optional<std::size_t> checked_add(std::size_t a, std::size_t b) noexcept {
  std::size_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

std::optional<RangeError> check_byte_count(const char* op, std::size_t count, std::size_t elem_size,
                                           std::size_t* bytes) {
  const auto product = checked_mul(count, elem_size);
  if (!product) {
    return RangeError{ANYDEV_ERROR_OUT_OF_RANGE, cat(op, ": ", count, " elements of ", elem_size,
                                                     " bytes overflow the byte count (size_t)")};
  }
  *bytes = *product;
  return std::nullopt;
}

std::optional<RangeError> check_sub_buffer(const char* op, std::size_t parent_bytes,
                                           std::size_t parent_offset_bytes, std::size_t offset,
                                           std::size_t count, std::size_t elem_size,
                                           std::size_t elem_align, std::size_t* view_offset_bytes) {
  const auto start = checked_mul(offset, elem_size);
  const auto length = checked_mul(count, elem_size);
  const auto end = (start && length) ? checked_add(*start, *length) : std::nullopt;
  if (!end) {
    return RangeError{ANYDEV_ERROR_OUT_OF_RANGE,
                      cat(op, ": view of ", count, " elements at element offset ", offset,
                          " (element size ", elem_size, ") overflows the byte count")};
  }
  if (*end > parent_bytes) {
    return RangeError{
        ANYDEV_ERROR_OUT_OF_RANGE,
        cat(op, ": view of ", count, " elements at element offset ", offset, " (bytes ", *start,
            "..", *end, ") lies outside the buffer of ", parent_bytes, " bytes")};
  }
  const auto absolute = checked_add(parent_offset_bytes, *start);
  if (!absolute) {
    return RangeError{ANYDEV_ERROR_OUT_OF_RANGE, cat(op, ": view offset overflows the byte count")};
  }
  if (elem_align > 1 && *absolute % elem_align != 0) {
    return RangeError{
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat(op, ": view starts at byte ", *absolute, " of its allocation, which is not aligned to ",
            elem_align, " bytes as its element type needs")};
  }
  *view_offset_bytes = *absolute;
  return std::nullopt;
}

std::optional<RangeError> check_copy_size(const char* op, const char* side,
                                          std::size_t needed_bytes, std::size_t available_bytes) {
  if (available_bytes < needed_bytes) {
    return RangeError{ANYDEV_ERROR_OUT_OF_RANGE,
                      cat(op, ": the ", side, " has ", available_bytes,
                          " bytes but the copy moves ", needed_bytes, " bytes")};
  }
  return std::nullopt;
}

}  // namespace anydev::core
