// SPDX-License-Identifier: Apache-2.0
// Strict parsing of the comma-separated lists that environment variables
// hold (ANYDEV_BACKEND, ANYDEV_FAULT): the splitting, the rules every entry
// follows and the wording of the errors, written once.
//
// Pure functions: thread-safe, no I/O.
#ifndef ANYDEV_SRC_SUPPORT_ENV_LIST_H_
#define ANYDEV_SRC_SUPPORT_ENV_LIST_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace anydev::core {

// `text` in double quotes, as the errors show values: escaped (format.h),
// and a double quote inside it as \".
std::string quoted(std::string_view text);

// A decimal number of digits only (no sign, no "0x", no spaces) from `min`
// to `max`; nullopt for anything else, including values that overflow.
std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t min,
                                           std::uint64_t max);

// The reason an entry is bad, or an empty string when it is good.
using ListEntryCheck = std::function<std::string(std::string_view entry)>;

// Splits `text` (non-empty) at commas and passes each entry, in order, to
// `check`. An empty entry, or one that holds whitespace, is bad before
// `check` sees it. Returns the first bad entry's error,
//   VARIABLE="text": entry N "entry" reason
// (N counts from 1), or an empty string when every entry is good.
std::string check_list_entries(std::string_view variable, std::string_view text,
                               const ListEntryCheck& check);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_ENV_LIST_H_
