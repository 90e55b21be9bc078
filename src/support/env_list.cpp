// SPDX-License-Identifier: Apache-2.0
#include "support/env_list.h"

#include "support/format.h"
#include "support/status.h"

namespace anydev::core {

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : escaped(text)) {
    if (c == '"') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t min,
                                           std::uint64_t max) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (max - digit) / 10) return std::nullopt;  // past max (and never overflows)
    value = value * 10 + digit;
  }
  if (value < min) return std::nullopt;
  return value;
}

std::string check_list_entries(std::string_view variable, std::string_view text,
                               const ListEntryCheck& check) {
  std::size_t position = 1;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string_view entry = text.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
    std::string why;
    if (entry.empty()) {
      why = "is empty";
    } else if (entry.find_first_of(" \t\r\n\v\f") != std::string_view::npos) {
      why = "contains whitespace";
    } else {
      why = check(entry);
    }
    if (!why.empty()) {
      return cat(variable, "=", quoted(text), ": entry ", position, entry.empty() ? "" : " ",
                 entry.empty() ? std::string() : quoted(entry), " ", why);
    }
    if (comma == std::string_view::npos) return {};
    begin = comma + 1;
    ++position;
  }
}

}  // namespace anydev::core
