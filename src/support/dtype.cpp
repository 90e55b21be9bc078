// SPDX-License-Identifier: Apache-2.0
#include "support/dtype.h"

#include <array>

namespace anydev::core {
namespace {

constexpr std::array<DTypeTraits, 15> kTraits = {{
    {1, 1, "bool"},
    {1, 1, "int8"},
    {2, 2, "int16"},
    {4, 4, "int32"},
    {8, 8, "int64"},
    {1, 1, "uint8"},
    {2, 2, "uint16"},
    {4, 4, "uint32"},
    {8, 8, "uint64"},
    {2, 2, "float16"},
    {2, 2, "bfloat16"},
    {4, 4, "float32"},
    {8, 8, "float64"},
    {8, 4, "complex64"},    // std::complex<float>
    {16, 8, "complex128"},  // std::complex<double>
}};

}  // namespace

std::optional<DTypeTraits> dtype_traits(anydev_dtype_t dtype) noexcept {
  const auto index = static_cast<std::size_t>(dtype);
  if (index >= kTraits.size()) return std::nullopt;
  return kTraits[index];
}

std::optional<anydev_dtype_t> dtype_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kTraits.size(); ++i) {
    if (kTraits[i].name == name) return static_cast<anydev_dtype_t>(i);
  }
  return std::nullopt;
}

}  // namespace anydev::core
