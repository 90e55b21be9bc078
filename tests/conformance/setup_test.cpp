// SPDX-License-Identifier: Apache-2.0
// Checks of the suite itself and of the backend list, which do not depend on
// one device.
//
// An empty instantiation must never pass silently: when
// ANYDEV_CONFORMANCE_BACKENDS names a backend that is unknown or unavailable,
// or when no device at all is found, ConformanceSetup fails with the reason
// (GoogleTest also reports every parameterized suite as uninstantiated).
#include <algorithm>
#include <string>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceContext;
using anydev::Status;

const char* const kBuiltInBackends[] = {"cpu", "cuda", "hip", "level_zero", "opencl"};

TEST(ConformanceSetup, EveryRequestedBackendIsTested) {
  const Discovery& d = Discover();
  for (const std::string& problem : d.problems) ADD_FAILURE() << problem;
  for (const std::string& name : d.requested) {
    const bool tested = std::any_of(d.devices.begin(), d.devices.end(),
                                    [&](const DeviceParam& p) { return p.api == name; });
    EXPECT_TRUE(tested) << "ANYDEV_CONFORMANCE_BACKENDS names \"" << name
                        << "\" but no test runs on it";
  }
  EXPECT_FALSE(d.devices.empty()) << "no device to test: the suite would pass without testing";
}

TEST(Backends, ListsEveryBuiltInBackendOnceWithAReasonWhenUnavailable) {
  const std::vector<anydev::BackendInfo> backends = DeviceContext::backends();
  for (const char* name : kBuiltInBackends) {
    SCOPED_TRACE(name);
    const auto count = std::count_if(backends.begin(), backends.end(),
                                     [&](const anydev::BackendInfo& b) { return b.name == name; });
    EXPECT_EQ(count, 1) << name << " must be listed exactly once";
  }
  for (const anydev::BackendInfo& b : backends) {
    SCOPED_TRACE(b.name);
    EXPECT_FALSE(b.name.empty());
    if (b.available) {
      EXPECT_TRUE(b.reason.empty()) << "available, yet a reason: " << b.reason;
      EXPECT_GT(b.device_count, 0) << "available with no device";
    } else {
      EXPECT_FALSE(b.reason.empty()) << "unavailable without a reason";
      EXPECT_EQ(b.device_count, 0);
    }
  }
  const auto cpu = std::find_if(backends.begin(), backends.end(),
                                [](const anydev::BackendInfo& b) { return b.name == "cpu"; });
  ASSERT_NE(cpu, backends.end());
  EXPECT_TRUE(cpu->available) << cpu->reason;
  EXPECT_EQ(cpu->device_count, 1);
  EXPECT_EQ(cpu->library, "");
}

TEST(Backends, NumberOfDevicesAgreesWithTheList) {
  for (const anydev::BackendInfo& b : DeviceContext::backends()) {
    EXPECT_EQ(DeviceContext::number_of_devices(b.name), b.available ? b.device_count : 0) << b.name;
  }
  EXPECT_EQ(DeviceContext::number_of_devices("bogus"), 0);
  EXPECT_EQ(DeviceContext::number_of_devices("CPU"), 0);
  EXPECT_GE(DeviceContext::number_of_devices(), 1) << "the first available backend has a device";
}

TEST(Backends, UnknownApiNameIsInvalidArgumentListingTheKnownOnes) {
  for (const char* bad : {"bogus", "CPU", "cpu ", "cpu:0", "cpu,cuda"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { DeviceContext ctx(0, bad); },
                      {bad, "cpu", "cuda", "hip", "level_zero", "opencl"}));
  }
}

TEST(Backends, UnavailableBackendIsBackendUnavailableWithItsReason) {
  bool any = false;
  for (const anydev::BackendInfo& b : DeviceContext::backends()) {
    if (b.available) continue;
    any = true;
    SCOPED_TRACE(b.name);
    EXPECT_TRUE(
        Fails(Status::backend_unavailable, [&] { DeviceContext ctx(0, b.name); }, {b.name}));
  }
  if (!any) GTEST_SKIP() << "every known backend is available: nothing to check";
}

}  // namespace
}  // namespace anydev_conformance
