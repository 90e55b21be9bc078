// SPDX-License-Identifier: Apache-2.0
// operator<< (Mojo's write_to) on host and device buffers, and
// DeviceBuffer::map_to_host.
#include <bit>
#include <complex>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::bfloat16;
using anydev::DeviceBuffer;
using anydev::float16;
using anydev::HostBuffer;
using anydev::Status;

class PrintTest : public DeviceTest {
 protected:
  // The text of a host buffer and of a device buffer holding `values`.
  template <class T>
  void ExpectPrints(std::initializer_list<T> values, const std::string& inside) {
    const Array<T> array(std::span<const T>(values.begin(), values.size()));
    std::ostringstream host_text;
    host_text << HostWith(ctx(), array);
    EXPECT_EQ(host_text.str(), "HostBuffer([" + inside + "])");
    std::ostringstream device_text;
    device_text << DeviceWith(ctx(), array);
    EXPECT_EQ(device_text.str(), "DeviceBuffer([" + inside + "])");
  }
};

class MapToHostTest : public DeviceTest {};

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST_P(PrintTest, Integers) {
  ExpectPrints<std::int32_t>({0, 1, 2}, "0, 1, 2");
  ExpectPrints<std::int8_t>({-128, 65, 127}, "-128, 65, 127");
  ExpectPrints<std::uint8_t>({0, 65, 255}, "0, 65, 255");
  ExpectPrints<std::int16_t>({-32768, 32767}, "-32768, 32767");
  ExpectPrints<std::uint16_t>({65535}, "65535");
  ExpectPrints<std::uint32_t>({4294967295u}, "4294967295");
  ExpectPrints<std::int64_t>({std::numeric_limits<std::int64_t>::min()}, "-9223372036854775808");
  ExpectPrints<std::uint64_t>({18446744073709551615ull}, "18446744073709551615");
}

TEST_P(PrintTest, FloatingPoint) {
  ExpectPrints<float>({1.0f, 0.5f, 1e20f, 0.1f, -0.0f}, "1.0, 0.5, 1e+20, 0.1, -0.0");
  ExpectPrints<float>({kInf, -kInf, std::numeric_limits<float>::quiet_NaN()}, "inf, -inf, nan");
  ExpectPrints<double>({1.0, -2.5, 1e20, 0.1}, "1.0, -2.5, 1e+20, 0.1");
  ExpectPrints<float16>(
      {float16::from_bits(0x3C00), float16::from_bits(0x2E66), float16::from_bits(0x7C00)},
      "1.0, 0.1, inf");
  ExpectPrints<bfloat16>(
      {bfloat16::from_bits(0x3F80), bfloat16::from_bits(0x3DCD), bfloat16::from_bits(0xFF80)},
      "1.0, 0.1, -inf");
}

TEST_P(PrintTest, BooleansAndComplex) {
  ExpectPrints<bool>({true, false, true}, "True, False, True");
  ExpectPrints<std::complex<float>>({{1.0f, 2.0f}, {-0.5f, 0.0f}}, "(1.0, 2.0), (-0.5, 0.0)");
  ExpectPrints<std::complex<double>>({{0.1, 1e20}}, "(0.1, 1e+20)");
}

TEST_P(PrintTest, Empty) {
  std::ostringstream host_text;
  host_text << ctx().enqueue_create_host_buffer<float>(0);
  EXPECT_EQ(host_text.str(), "HostBuffer([])");
  std::ostringstream device_text;
  device_text << ctx().enqueue_create_buffer<float>(0);
  EXPECT_EQ(device_text.str(), "DeviceBuffer([])");
}

TEST_P(PrintTest, NineHundredNinetyNineInFullThousandElided) {
  Array<std::int32_t> ints(999);
  std::string full;
  for (int i = 0; i < 999; ++i) {
    ints[i] = i;
    full += (i > 0 ? ", " : "") + std::to_string(i);
  }
  std::ostringstream text999;
  text999 << DeviceWith(ctx(), ints);
  EXPECT_EQ(text999.str(), "DeviceBuffer([" + full + "])");

  Array<float> floats(1000);
  for (int i = 0; i < 1000; ++i) floats[i] = static_cast<float>(i);
  std::ostringstream host_text;
  host_text << HostWith(ctx(), floats);
  EXPECT_EQ(host_text.str(), "HostBuffer([0.0, 1.0, 2.0, ..., 997.0, 998.0, 999.0])");
  std::ostringstream device_text;
  device_text << DeviceWith(ctx(), floats);
  EXPECT_EQ(device_text.str(), "DeviceBuffer([0.0, 1.0, 2.0, ..., 997.0, 998.0, 999.0])");
}

TEST_P(PrintTest, ViewPrintsOnlyItsElements) {
  Array<std::int32_t> values(5);
  for (int i = 0; i < 5; ++i) values[i] = 10 + i;
  std::ostringstream host_text;
  host_text << HostWith(ctx(), values).create_sub_buffer<std::int32_t>(1, 3);
  EXPECT_EQ(host_text.str(), "HostBuffer([11, 12, 13])");
  std::ostringstream device_text;
  device_text << DeviceWith(ctx(), values).create_sub_buffer<std::int32_t>(1, 3);
  EXPECT_EQ(device_text.str(), "DeviceBuffer([11, 12, 13])");
}

// Printing a device buffer copies it synchronously, after the work already
// queued on its stream.
TEST_P(PrintTest, DevicePrintSeesQueuedWork) {
  const DeviceBuffer<std::int16_t> device = ctx().enqueue_create_buffer<std::int16_t>(3);
  device.enqueue_fill(-7);
  std::ostringstream text;
  text << device;
  EXPECT_EQ(text.str(), "DeviceBuffer([-7, -7, -7])");
}

TEST_P(MapToHostTest, ReadsAndWritesBack) {
  ForEachElementType([&]<class T>() {
    const Array<T> values = Pattern<T>(17, 701);
    const Array<T> changed = Pattern<T>(17, 702);
    const DeviceBuffer<T> device = DeviceWith(ctx(), values);
    {
      auto mapping = device.map_to_host();
      EXPECT_EQ(mapping.size(), 17u);
      EXPECT_TRUE(BytesEqual(std::span<const T>(mapping.as_span()), values.cspan()));
      for (std::size_t i = 0; i < 17; ++i) mapping[i] = changed[i];
    }
    EXPECT_TRUE(BytesEqual(Contents(device), changed)) << "the mapping did not write back";
  });
}

TEST_P(MapToHostTest, SeesQueuedWorkAndUnmapsOnce) {
  const DeviceBuffer<std::uint32_t> device = ctx().enqueue_create_buffer<std::uint32_t>(1 << 16);
  device.enqueue_fill(0x600DCAFEu);
  auto mapping = device.map_to_host();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(mapping.as_span()), 0x600DCAFEu));
  mapping[0] = 1;
  mapping.unmap();
  EXPECT_EQ(mapping.size(), 0u);
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)mapping.as_span(); }));
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { mapping.unmap(); }));
  const Array<std::uint32_t> contents = Contents(device);
  EXPECT_EQ(contents[0], 1u);
  EXPECT_EQ(contents[1], 0x600DCAFEu);
}

ANYDEV_CONFORMANCE_SUITE(PrintTest);
ANYDEV_CONFORMANCE_SUITE(MapToHostTest);

}  // namespace
}  // namespace anydev_conformance
