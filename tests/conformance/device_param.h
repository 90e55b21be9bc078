// SPDX-License-Identifier: Apache-2.0
// Which (backend, device) pairs the conformance suite runs on, and the
// fixture every conformance test derives from.
//
// The devices are found at run time, when GoogleTest registers the tests:
// every device of every available backend (DeviceContext::backends()),
// restricted to the backends named in ANYDEV_CONFORMANCE_BACKENDS when that
// comma-separated list is set. An unavailable backend gets no tests; its
// reason is printed instead. Discovery runs once per process; the result is
// immutable afterwards, so it may be read from any thread.
#ifndef ANYDEV_TESTS_CONFORMANCE_DEVICE_PARAM_H_
#define ANYDEV_TESTS_CONFORMANCE_DEVICE_PARAM_H_

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

namespace anydev_conformance {

// One device of one backend: the parameter of every conformance test.
struct DeviceParam {
  std::string api;
  int device = 0;
};

std::ostream& operator<<(std::ostream& os, const DeviceParam& param);

// "cpu_0", "opencl_1": the last part of every test name.
std::string DeviceParamName(const ::testing::TestParamInfo<DeviceParam>& info);

// What discovery found.
struct Discovery {
  std::vector<DeviceParam> devices;           // the devices tests are instantiated for
  std::vector<anydev::BackendInfo> backends;  // every known backend, unfiltered
  bool filtered = false;                      // ANYDEV_CONFORMANCE_BACKENDS was set
  std::vector<std::string> requested;         // its entries
  // Why the requested set cannot be honoured (unknown or unavailable backend,
  // malformed list, discovery failure). ConformanceSetup fails on each.
  std::vector<std::string> problems;
};

const Discovery& Discover();
const std::vector<DeviceParam>& ConformanceDevices();

// A context on an available backend other than `api` (its device 0), or
// nullopt when there is none. Not limited by ANYDEV_CONFORMANCE_BACKENDS.
std::optional<anydev::DeviceContext> OtherBackendContext(const std::string& api);

// Base fixture: ctx() is a fresh context on the parameter's device.
class DeviceTest : public ::testing::TestWithParam<DeviceParam> {
 protected:
  void SetUp() override;
  const anydev::DeviceContext& ctx() const { return *ctx_; }
  const std::string& api() const { return GetParam().api; }
  // cpu, opencl, cuda, hip or level_zero: the backends anydev ships, which
  // must offer every optional entry; other plugins (the test plugins, the
  // example backend) may predate one, and tests of it skip there.
  bool shipped() const;

 private:
  std::optional<anydev::DeviceContext> ctx_;
};

}  // namespace anydev_conformance

// Instantiates a DeviceTest fixture for every discovered device; test names
// read Conformance/<Fixture>.<Test>/<api>_<device>.
#define ANYDEV_CONFORMANCE_SUITE(Fixture)                                                   \
  INSTANTIATE_TEST_SUITE_P(Conformance, Fixture,                                            \
                           ::testing::ValuesIn(::anydev_conformance::ConformanceDevices()), \
                           ::anydev_conformance::DeviceParamName)

#endif  // ANYDEV_TESTS_CONFORMANCE_DEVICE_PARAM_H_
