// SPDX-License-Identifier: Apache-2.0
// Fuzz target: sub-buffer and copy-range arithmetic (src/support/range_check.cpp),
// checked against the same rules computed in 128-bit integers, where nothing
// overflows. The input is read as little-endian words: parent size, parent
// offset, element offset, element count, and a byte choosing the element size
// (1, 2, 4, 8, 16) and its alignment (1 .. size).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "support/range_check.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

__extension__ typedef unsigned __int128 Wide;
constexpr Wide kMax = std::numeric_limits<std::size_t>::max();

// Reads a size_t, biased towards interesting values by the low bits.
std::size_t Take(const std::uint8_t*& data, std::size_t& size) {
  std::uint64_t raw = 0;
  const std::size_t n = size < 8 ? size : 8;
  std::memcpy(&raw, data, n);
  data += n;
  size -= n;
  switch (raw & 3) {
    case 0:
      return static_cast<std::size_t>(raw >> 2) & 0xffff;  // small
    case 1:
      return std::numeric_limits<std::size_t>::max() - (static_cast<std::size_t>(raw >> 2) & 0xff);
    default:
      return static_cast<std::size_t>(raw >> 2);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t choice = data[0];
  ++data;
  --size;
  const std::size_t parent_bytes = Take(data, size);
  const std::size_t parent_offset = Take(data, size);
  const std::size_t offset = Take(data, size);
  const std::size_t count = Take(data, size);
  static constexpr std::size_t kSizes[] = {1, 2, 4, 8, 16};
  const std::size_t elem_size = kSizes[choice % 5];
  const std::size_t elem_align =
      kSizes[(choice / 5) % 5] <= elem_size ? kSizes[(choice / 5) % 5] : elem_size;

  // check_byte_count
  std::size_t bytes = 0;
  const auto count_error = anydev::core::check_byte_count("op", count, elem_size, &bytes);
  const Wide wide_bytes = static_cast<Wide>(count) * elem_size;
  Require(count_error.has_value() == (wide_bytes > kMax));
  if (!count_error) Require(bytes == wide_bytes);
  if (count_error) Require(count_error->status == ANYDEV_ERROR_OUT_OF_RANGE);

  // check_sub_buffer
  std::size_t view_offset = 0;
  const auto view_error = anydev::core::check_sub_buffer(
      "op", parent_bytes, parent_offset, offset, count, elem_size, elem_align, &view_offset);
  const Wide start = static_cast<Wide>(offset) * elem_size;
  const Wide end = start + wide_bytes;
  const Wide absolute = static_cast<Wide>(parent_offset) + start;
  anydev_status_t expected = ANYDEV_SUCCESS;
  if (start > kMax || wide_bytes > kMax || end > kMax || end > parent_bytes || absolute > kMax) {
    expected = ANYDEV_ERROR_OUT_OF_RANGE;
  } else if (absolute % elem_align != 0) {
    expected = ANYDEV_ERROR_INVALID_ARGUMENT;
  }
  if (expected == ANYDEV_SUCCESS) {
    Require(!view_error.has_value());
    Require(view_offset == absolute);
  } else {
    Require(view_error.has_value());
    Require(view_error->status == expected);
    Require(view_error->message.rfind("op: ", 0) == 0);
  }

  // check_copy_size
  const auto copy_error = anydev::core::check_copy_size("op", "source", parent_bytes, count);
  Require(copy_error.has_value() == (count < parent_bytes));
  return 0;
}
