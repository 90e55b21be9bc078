#include "selection.h"

#include <algorithm>
#include <array>

#include "status.h"

namespace anydev::core {
namespace {

constexpr int kMaxDeviceIndex = 1 << 20;

std::string quoted(std::string_view text) { return cat("\"", text, "\""); }

// Parses a decimal device index: digits only, no sign, no leading "0x".
bool parse_index(std::string_view text, int* out) {
  if (text.empty() || text.size() > 7) return false;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value > kMaxDeviceIndex) return false;
  *out = value;
  return true;
}

}  // namespace

std::span<const std::string> default_backend_order() {
  static const std::array<std::string, 5> order = {"cuda", "hip", "level_zero", "opencl", "cpu"};
  return order;
}

BackendListParse parse_backend_list(std::string_view text, std::span<const std::string> known) {
  BackendListParse result;
  auto error = [&](std::size_t position, std::string_view entry, std::string_view why) {
    result.entries.clear();
    result.error = cat("ANYDEV_BACKEND=", quoted(text), ": entry ", position,
                       entry.empty() ? std::string() : " " + quoted(entry), " ", why);
    return result;
  };
  if (text.empty()) {
    result.error =
        "ANYDEV_BACKEND is set but empty: expected a comma-separated list such as "
        "\"cuda:0,cpu\"";
    return result;
  }
  std::size_t position = 1;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string_view entry = text.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
    if (entry.empty()) return error(position, entry, "is empty");
    if (entry.find_first_of(" \t\r\n") != std::string_view::npos) {
      return error(position, entry, "contains whitespace");
    }
    const std::size_t colon = entry.find(':');
    const std::string_view name = entry.substr(0, colon);
    BackendChoice choice;
    choice.name = std::string(name);
    if (std::find(known.begin(), known.end(), choice.name) == known.end()) {
      return error(position, entry, cat("names no known backend (", quoted(name), ")"));
    }
    if (colon != std::string_view::npos) {
      const std::string_view index = entry.substr(colon + 1);
      if (!parse_index(index, &choice.device)) {
        return error(position, entry,
                     cat("has a bad device index ", quoted(index),
                         ": expected a decimal number from 0 to ", kMaxDeviceIndex));
      }
      choice.device_given = true;
    }
    for (const BackendChoice& earlier : result.entries) {
      if (earlier.name == choice.name && earlier.device == choice.device) {
        return error(position, entry, "repeats an earlier entry");
      }
    }
    result.entries.push_back(std::move(choice));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
    ++position;
  }
  return result;
}

}  // namespace anydev::core
