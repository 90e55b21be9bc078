// SPDX-License-Identifier: Apache-2.0
// Element types: sizes, alignments and names. Pure and thread-safe.
#ifndef ANYDEV_SRC_SUPPORT_DTYPE_H_
#define ANYDEV_SRC_SUPPORT_DTYPE_H_

#include <cstddef>
#include <optional>
#include <string_view>

#include "anydev/anydev.h"

namespace anydev::core {

struct DTypeTraits {
  std::size_t size;       // bytes per element
  std::size_t alignment;  // alignment a view of this type needs
  std::string_view name;  // "float32"
};

// nullopt for a value outside anydev_dtype_t.
std::optional<DTypeTraits> dtype_traits(anydev_dtype_t dtype) noexcept;
std::optional<anydev_dtype_t> dtype_from_name(std::string_view name) noexcept;

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_DTYPE_H_
