// SPDX-License-Identifier: Apache-2.0
// The C++ value types of anydev.hpp: Status and DType mirror the C enums,
// dtype_of maps every element type, to_string spells statuses as the C ABI.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>

#include "anydev/anydev.hpp"

namespace {

using anydev::DType;
using anydev::dtype_of;
using anydev::Status;

TEST(ValueTypes, StatusValuesMatchTheCAbi) {
  EXPECT_EQ(static_cast<int>(Status::success), ANYDEV_SUCCESS);
  EXPECT_EQ(static_cast<int>(Status::invalid_argument), ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(static_cast<int>(Status::out_of_range), ANYDEV_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(static_cast<int>(Status::out_of_memory), ANYDEV_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(static_cast<int>(Status::backend_unavailable), ANYDEV_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(static_cast<int>(Status::device_error), ANYDEV_ERROR_DEVICE);
  EXPECT_EQ(static_cast<int>(Status::unsupported), ANYDEV_ERROR_UNSUPPORTED);
  EXPECT_EQ(static_cast<int>(Status::invalid_state), ANYDEV_ERROR_INVALID_STATE);
  EXPECT_EQ(static_cast<int>(Status::internal), ANYDEV_ERROR_INTERNAL);
}

TEST(ValueTypes, StatusNamesMatchTheCAbi) {
  for (int s = 0; s <= 8; ++s) {
    EXPECT_STREQ(anydev::to_string(static_cast<Status>(s)),
                 anydev_status_name(static_cast<anydev_status_t>(s)));
  }
  EXPECT_STREQ(anydev::to_string(Status::invalid_state), "invalid_state");
  EXPECT_STREQ(anydev::to_string(static_cast<Status>(42)), "unknown");
}

TEST(ValueTypes, ErrorCarriesStatusAndMessage) {
  const anydev::Error error(Status::out_of_range, "at: index 5 of 3");
  EXPECT_EQ(error.status(), Status::out_of_range);
  EXPECT_STREQ(error.what(), "at: index 5 of 3");
}

TEST(ValueTypes, DtypeOfEveryElementType) {
  EXPECT_EQ(dtype_of<bool>, DType::boolean);
  EXPECT_EQ(dtype_of<std::int8_t>, DType::int8);
  EXPECT_EQ(dtype_of<std::int16_t>, DType::int16);
  EXPECT_EQ(dtype_of<std::int32_t>, DType::int32);
  EXPECT_EQ(dtype_of<std::int64_t>, DType::int64);
  EXPECT_EQ(dtype_of<std::uint8_t>, DType::uint8);
  EXPECT_EQ(dtype_of<std::uint16_t>, DType::uint16);
  EXPECT_EQ(dtype_of<std::uint32_t>, DType::uint32);
  EXPECT_EQ(dtype_of<std::uint64_t>, DType::uint64);
  EXPECT_EQ(dtype_of<anydev::float16>, DType::float16);
  EXPECT_EQ(dtype_of<anydev::bfloat16>, DType::bfloat16);
  EXPECT_EQ(dtype_of<float>, DType::float32);
  EXPECT_EQ(dtype_of<double>, DType::float64);
  EXPECT_EQ(dtype_of<std::complex<float>>, DType::complex64);
  EXPECT_EQ(dtype_of<std::complex<double>>, DType::complex128);
  static_assert(anydev::Element<anydev::complex64>);
  static_assert(!anydev::Element<char>);
  static_assert(!anydev::Element<const float>);
  static_assert(!anydev::Element<long double>);
}

TEST(ValueTypes, DTypeValuesAndSizesMatchTheCAbi) {
  EXPECT_EQ(static_cast<int>(DType::boolean), ANYDEV_DTYPE_BOOL);
  EXPECT_EQ(static_cast<int>(DType::uint8), ANYDEV_DTYPE_UINT8);
  EXPECT_EQ(static_cast<int>(DType::float16), ANYDEV_DTYPE_FLOAT16);
  EXPECT_EQ(static_cast<int>(DType::bfloat16), ANYDEV_DTYPE_BFLOAT16);
  EXPECT_EQ(static_cast<int>(DType::complex128), ANYDEV_DTYPE_COMPLEX128);
  EXPECT_EQ(anydev_dtype_size(static_cast<anydev_dtype_t>(dtype_of<anydev::bfloat16>)), 2u);
  EXPECT_EQ(anydev_dtype_size(static_cast<anydev_dtype_t>(dtype_of<std::complex<float>>)), 8u);
  EXPECT_EQ(anydev_dtype_size(static_cast<anydev_dtype_t>(dtype_of<std::complex<double>>)), 16u);
  EXPECT_EQ(anydev_dtype_size(static_cast<anydev_dtype_t>(dtype_of<bool>)), 1u);
}

}  // namespace
