// SPDX-License-Identifier: Apache-2.0
// Mojo's printing of buffers: "HostBuffer([0, 1, 2])", floats always with a
// decimal point or exponent ("1.0", "1e+20", "inf", "nan"), booleans as
// "True"/"False", complex values as "(re, im)"; from 1000 elements on, the
// first three, "...", and the last three. Pure and thread-safe.
#ifndef ANYDEV_SRC_SUPPORT_FORMAT_H_
#define ANYDEV_SRC_SUPPORT_FORMAT_H_

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

// Untrusted text (an environment variable's value, a caller's string, a
// path) made safe to put inside a log line or an error message: printable
// ASCII and well-formed UTF-8 of printable characters stay as they are; a
// backslash becomes "\\"; \n, \r and \t become "\n", "\r", "\t"; every
// other control character (C0, DEL, C1 such as ESC or CSI), every byte of
// malformed UTF-8, and the invisible characters that reorder or split lines
// (U+2028, U+2029, bidirectional overrides and isolates U+202A-U+202E,
// U+2066-U+2069) become "\xHH" per byte. So the result never moves the
// cursor, starts an escape sequence or forges a line.
std::string escaped(std::string_view text);

// The last line of defence where a whole message is logged or recorded as
// the last error (logging.cpp, status.cpp), for text that reached it without
// escaped(): every control character but the newline (C0, DEL, so ESC and
// \r; C1 in its UTF-8 form) and every byte of malformed UTF-8 (a lone
// continuation byte, a truncated sequence, an overlong encoding, a
// surrogate, 0xC0, 0xC1, 0xF5-0xFF) becomes "\xHH" per byte, so a message is
// always valid UTF-8; everything else, well-formed UTF-8 and backslashes
// included, is kept, so text already escaped is not escaped twice.
std::string controls_escaped(std::string message);

// IEEE half and bfloat16 bit patterns to float (exact).
float half_bits_to_float(unsigned short bits) noexcept;
float bfloat16_bits_to_float(unsigned short bits) noexcept;

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_FORMAT_H_
