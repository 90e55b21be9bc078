// SPDX-License-Identifier: Apache-2.0
// Device attributes (DeviceContext::get_attribute, uuid, pci_bus_id,
// api_version; docs/backends.md, "Device attributes") on every backend:
// each attribute is a value in its range or unsupported with a message
// naming it; the values the core also knows agree with it; names round-trip;
// values outside the enum are invalid_argument.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceAttribute;
using anydev::Status;

class DeviceAttributeTest : public DeviceTest {
 protected:
  // The value, or nullopt after checking the unsupported error names it.
  std::optional<std::int64_t> Get(DeviceAttribute attribute) {
    try {
      return ctx().get_attribute(attribute);
    } catch (const anydev::Error& e) {
      EXPECT_EQ(e.status(), Status::unsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find(anydev::to_string(attribute)), std::string::npos)
          << e.what();
      return std::nullopt;
    }
  }
};

TEST_P(DeviceAttributeTest, EveryAttributeIsAValueInRangeOrUnsupported) {
  for (int i = 0; i < ANYDEV_ATTRIBUTE_COUNT; ++i) {
    const auto attribute = static_cast<DeviceAttribute>(i);
    SCOPED_TRACE(anydev::to_string(attribute));
    const std::optional<std::int64_t> value = Get(attribute);
    if (!value) continue;
    switch (attribute) {
      case DeviceAttribute::unified_addressing:
      case DeviceAttribute::integrated:
        EXPECT_TRUE(*value == 0 || *value == 1) << *value;
        break;
      case DeviceAttribute::pci_domain:
      case DeviceAttribute::pci_bus:
      case DeviceAttribute::pci_device:
      case DeviceAttribute::pci_function:
      case DeviceAttribute::compute_capability_minor:
        EXPECT_GE(*value, 0);
        break;
      default:
        EXPECT_GT(*value, 0);
    }
  }
}

TEST_P(DeviceAttributeTest, TheBasicsAreThereOnEveryBackend) {
  try {
    (void)ctx().get_attribute(DeviceAttribute::compute_units);
  } catch (const anydev::Error& e) {
    // A plugin built before the entry (the test plugins, the example) has
    // none to give; the five backends must.
    if (std::string(e.what()).find("has no device_attribute entry") != std::string::npos &&
        !shipped()) {
      GTEST_SKIP() << "this plugin's table has no device_attribute entry: " << e.what();
    }
  }
  EXPECT_TRUE(Get(DeviceAttribute::compute_units).has_value());
  EXPECT_TRUE(Get(DeviceAttribute::max_allocation_bytes).has_value());
  const std::optional<std::int64_t> total = Get(DeviceAttribute::total_memory_bytes);
  ASSERT_TRUE(total.has_value());
  const std::optional<std::int64_t> max = Get(DeviceAttribute::max_allocation_bytes);
  EXPECT_LE(*max, *total) << "one allocation is at most the device's memory";
  EXPECT_FALSE(ctx().api_version().empty());
}

TEST_P(DeviceAttributeTest, PciBusIdAgreesWithTheAttributes) {
  std::string bus_id;
  try {
    bus_id = ctx().pci_bus_id();
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), Status::unsupported) << e.what();
    EXPECT_FALSE(Get(DeviceAttribute::pci_bus).has_value())
        << "pci_bus_id failed while the attributes are there";
    return;
  }
  char expected[32];
  std::snprintf(expected, sizeof expected, "%04llx:%02llx:%02llx.%llx",
                static_cast<unsigned long long>(*Get(DeviceAttribute::pci_domain)),
                static_cast<unsigned long long>(*Get(DeviceAttribute::pci_bus)),
                static_cast<unsigned long long>(*Get(DeviceAttribute::pci_device)),
                static_cast<unsigned long long>(*Get(DeviceAttribute::pci_function)));
  EXPECT_EQ(bus_id, expected);
}

TEST_P(DeviceAttributeTest, UuidIsStableOrUnsupported) {
  try {
    const auto first = ctx().uuid();
    EXPECT_EQ(ctx().uuid(), first);
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), Status::unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("UUID"), std::string::npos) << e.what();
  }
}

TEST_P(DeviceAttributeTest, ValuesOutsideTheEnumAreInvalid) {
  std::int64_t value = 7;
  for (int bad : {-1, static_cast<int>(ANYDEV_ATTRIBUTE_COUNT), 1000}) {
    EXPECT_EQ(anydev_context_get_attribute(ctx().handle(),
                                           static_cast<anydev_device_attribute_t>(bad), &value),
              ANYDEV_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(anydev_last_error_message()).find(std::to_string(bad)),
              std::string::npos);
  }
  EXPECT_EQ(value, 7) << "a refused call writes nothing";
}

TEST(DeviceAttributeNames, RoundTrip) {
  for (int i = 0; i < ANYDEV_ATTRIBUTE_COUNT; ++i) {
    const auto attribute = static_cast<anydev_device_attribute_t>(i);
    const char* name = anydev_device_attribute_name(attribute);
    ASSERT_NE(name, nullptr) << i;
    anydev_device_attribute_t back{};
    ASSERT_EQ(anydev_device_attribute_from_name(name, &back), ANYDEV_SUCCESS) << name;
    EXPECT_EQ(back, attribute);
  }
  EXPECT_EQ(anydev_device_attribute_name(ANYDEV_ATTRIBUTE_COUNT), nullptr);
  anydev_device_attribute_t out{};
  EXPECT_EQ(anydev_device_attribute_from_name("warp", &out), ANYDEV_ERROR_INVALID_ARGUMENT);
}

ANYDEV_CONFORMANCE_SUITE(DeviceAttributeTest);

}  // namespace
}  // namespace anydev_conformance
