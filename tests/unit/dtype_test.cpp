// SPDX-License-Identifier: Apache-2.0
// Element type traits (src/support/dtype.h): size, alignment and name of every dtype,
// the name round trip, and values outside the enum.
#include "support/dtype.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>

namespace anydev::core {
namespace {

struct DTypeCase {
  anydev_dtype_t dtype;
  std::size_t size;
  std::size_t alignment;  // alignof the C++ element type
  std::string name;
};

std::ostream& operator<<(std::ostream& os, const DTypeCase& c) { return os << c.name; }

class DTypeTraitsTest : public ::testing::TestWithParam<DTypeCase> {};

TEST_P(DTypeTraitsTest, SizeAlignmentName) {
  const auto traits = dtype_traits(GetParam().dtype);
  ASSERT_TRUE(traits.has_value());
  EXPECT_EQ(traits->size, GetParam().size);
  EXPECT_EQ(traits->alignment, GetParam().alignment);
  EXPECT_EQ(traits->name, GetParam().name);
}

TEST_P(DTypeTraitsTest, NameRoundTrips) {
  const auto dtype = dtype_from_name(GetParam().name);
  ASSERT_TRUE(dtype.has_value()) << GetParam().name;
  EXPECT_EQ(*dtype, GetParam().dtype);
}

INSTANTIATE_TEST_SUITE_P(
    DType, DTypeTraitsTest,
    ::testing::Values(
        DTypeCase{ANYDEV_DTYPE_BOOL, 1, alignof(bool), "bool"},
        DTypeCase{ANYDEV_DTYPE_INT8, 1, alignof(std::int8_t), "int8"},
        DTypeCase{ANYDEV_DTYPE_INT16, 2, alignof(std::int16_t), "int16"},
        DTypeCase{ANYDEV_DTYPE_INT32, 4, alignof(std::int32_t), "int32"},
        DTypeCase{ANYDEV_DTYPE_INT64, 8, alignof(std::int64_t), "int64"},
        DTypeCase{ANYDEV_DTYPE_UINT8, 1, alignof(std::uint8_t), "uint8"},
        DTypeCase{ANYDEV_DTYPE_UINT16, 2, alignof(std::uint16_t), "uint16"},
        DTypeCase{ANYDEV_DTYPE_UINT32, 4, alignof(std::uint32_t), "uint32"},
        DTypeCase{ANYDEV_DTYPE_UINT64, 8, alignof(std::uint64_t), "uint64"},
        DTypeCase{ANYDEV_DTYPE_FLOAT16, 2, alignof(std::uint16_t), "float16"},
        DTypeCase{ANYDEV_DTYPE_BFLOAT16, 2, alignof(std::uint16_t), "bfloat16"},
        DTypeCase{ANYDEV_DTYPE_FLOAT32, 4, alignof(float), "float32"},
        DTypeCase{ANYDEV_DTYPE_FLOAT64, 8, alignof(double), "float64"},
        DTypeCase{ANYDEV_DTYPE_COMPLEX64, 8, alignof(std::complex<float>), "complex64"},
        DTypeCase{ANYDEV_DTYPE_COMPLEX128, 16, alignof(std::complex<double>), "complex128"}),
    [](const ::testing::TestParamInfo<DTypeCase>& info) { return info.param.name; });

// 15 is the only unlisted value C++ lets an anydev_dtype_t hold (its values
// are those of a 4-bit field); C callers can pass any int, which the C API
// test covers.
TEST(DType, ValuesOutsideTheEnumHaveNoTraits) {
  EXPECT_FALSE(dtype_traits(static_cast<anydev_dtype_t>(15)).has_value());
}

TEST(DType, UnknownNamesAreRejected) {
  for (const char* name : {"", "float", "Float32", "float32 ", " float32", "f32", "boolean",
                           "complex", "int", "uint128", "float8"}) {
    EXPECT_FALSE(dtype_from_name(name).has_value()) << "\"" << name << "\"";
  }
}

}  // namespace
}  // namespace anydev::core
