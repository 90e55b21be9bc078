// SPDX-License-Identifier: Apache-2.0
// Parser for ANYDEV_BACKEND: a comma-separated preference list of backend
// names, each with an optional device index ("cuda", "cuda:1", "hip,cpu").
//
// Strict: an empty list, an empty entry, surrounding or inner whitespace, an
// unknown name, a missing, signed, non-decimal or too-large index, and a
// duplicate entry are all errors. Pure function: thread-safe, no I/O.
#ifndef ANYDEV_SRC_RUNTIME_SELECTION_H_
#define ANYDEV_SRC_RUNTIME_SELECTION_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace anydev::core {

// One entry of the list.
struct BackendChoice {
  std::string name;  // a known backend name
  int device = 0;    // device index (0 when not given)
  bool device_given = false;
  bool operator==(const BackendChoice&) const = default;
};

// Either the entries, or `error` (non-empty) naming the bad entry and its
// position, e.g. "ANYDEV_BACKEND=\"cuda,,cpu\": entry 2 is empty".
struct BackendListParse {
  std::vector<BackendChoice> entries;
  std::string error;
  bool ok() const noexcept { return error.empty(); }
};

// `known` lists the names that are accepted (exact, case-sensitive match).
BackendListParse parse_backend_list(std::string_view text, std::span<const std::string> known);

// The default preference order when ANYDEV_BACKEND is unset.
std::span<const std::string> default_backend_order();

}  // namespace anydev::core

#endif  // ANYDEV_SRC_RUNTIME_SELECTION_H_
