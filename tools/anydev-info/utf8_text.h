// SPDX-License-Identifier: Apache-2.0
// Text that anydev-info prints but does not control (a driver's device name,
// a plugin folder from ANYDEV_PLUGIN_PATH, an environment value) may hold
// bytes that are not UTF-8. These helpers let each writer keep well-formed
// UTF-8 as it is and show any other byte as the four characters "\xHH", as
// anydev's own messages do, so JSON stays valid and a terminal never gets a
// stray byte. Pure and thread-safe.
#ifndef ANYDEV_TOOLS_ANYDEV_INFO_UTF8_TEXT_H_
#define ANYDEV_TOOLS_ANYDEV_INFO_UTF8_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace anydev_info {

// The length (2 to 4) of the well-formed UTF-8 sequence of a non-ASCII
// character starting at text[i]; 0 when the bytes there are not one (a lone
// continuation byte, a truncated sequence, an overlong encoding, a
// surrogate, a value past U+10FFFF) or text[i] is ASCII.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

// Appends "\xHH" (lowercase hex) for `byte`.
void append_hex_escape(std::string& out, unsigned char byte);

}  // namespace anydev_info

#endif  // ANYDEV_TOOLS_ANYDEV_INFO_UTF8_TEXT_H_
