// Mojo's printing of buffers: "HostBuffer([0, 1, 2])", floats always with a
// decimal point or exponent ("1.0", "1e+20", "inf", "nan"), booleans as
// "True"/"False", complex values as "(re, im)"; from 1000 elements on, the
// first three, "...", and the last three. Pure and thread-safe.
#ifndef ANYDEV_SRC_FORMAT_H_
#define ANYDEV_SRC_FORMAT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "anydev/anydev.h"

namespace anydev::core {

// Formats `count` elements of `dtype` at `data` (host memory) as
// "<type_name>([...])".
std::string format_buffer(std::string_view type_name, anydev_dtype_t dtype, const void* data,
                          std::size_t count);

// One element, as it appears inside the brackets.
std::string format_element(anydev_dtype_t dtype, const void* element);

// IEEE half and bfloat16 bit patterns to float (exact).
float half_bits_to_float(unsigned short bits) noexcept;
float bfloat16_bits_to_float(unsigned short bits) noexcept;

}  // namespace anydev::core

#endif  // ANYDEV_SRC_FORMAT_H_
