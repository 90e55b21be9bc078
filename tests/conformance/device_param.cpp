// SPDX-License-Identifier: Apache-2.0
#include "device_param.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string_view>

namespace anydev_conformance {
namespace {

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    out.emplace_back(text.substr(begin, comma == std::string_view::npos ? comma : comma - begin));
    if (comma == std::string_view::npos) return out;
    begin = comma + 1;
  }
}

std::string KnownNames(const std::vector<anydev::BackendInfo>& backends) {
  std::string names;
  for (const anydev::BackendInfo& b : backends) {
    if (!names.empty()) names += ", ";
    names += b.name;
  }
  return names;
}

Discovery RunDiscovery() {
  Discovery d;
  if (const char* filter = std::getenv("ANYDEV_CONFORMANCE_BACKENDS"); filter != nullptr) {
    d.filtered = true;
    d.requested = SplitList(filter);
    for (std::size_t i = 0; i < d.requested.size(); ++i) {
      if (d.requested[i].empty()) {
        d.problems.push_back("ANYDEV_CONFORMANCE_BACKENDS=\"" + std::string(filter) + "\": entry " +
                             std::to_string(i + 1) + " is empty");
      }
    }
  }
  try {
    d.backends = anydev::DeviceContext::backends();
  } catch (const anydev::Error& e) {
    d.problems.push_back(std::string("DeviceContext::backends() threw ") +
                         anydev::to_string(e.status()) + ": " + e.what());
    return d;
  }
  for (const std::string& name : d.requested) {
    if (name.empty()) continue;
    const auto it = std::find_if(d.backends.begin(), d.backends.end(),
                                 [&](const anydev::BackendInfo& b) { return b.name == name; });
    if (it == d.backends.end()) {
      d.problems.push_back("ANYDEV_CONFORMANCE_BACKENDS names \"" + name +
                           "\", which is not a known backend (known: " + KnownNames(d.backends) +
                           ")");
    } else if (!it->available || it->device_count <= 0) {
      d.problems.push_back("ANYDEV_CONFORMANCE_BACKENDS names \"" + name +
                           "\", which is unavailable: " + it->reason);
    }
  }
  for (const anydev::BackendInfo& b : d.backends) {
    if (d.filtered &&
        std::find(d.requested.begin(), d.requested.end(), b.name) == d.requested.end()) {
      std::cerr << "[anydev conformance] " << b.name
                << ": not in ANYDEV_CONFORMANCE_BACKENDS; no tests for it\n";
      continue;
    }
    if (!b.available || b.device_count <= 0) {
      std::cerr << "[anydev conformance] " << b.name << ": unavailable, no tests for it: "
                << (b.reason.empty() ? "(no reason given)" : b.reason) << "\n";
      continue;
    }
    for (int device = 0; device < b.device_count; ++device) {
      d.devices.push_back(DeviceParam{b.name, device});
    }
    std::cerr << "[anydev conformance] " << b.name << ": " << b.device_count
              << " device(s) under test\n";
  }
  return d;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const DeviceParam& param) {
  return os << param.api << ":" << param.device;
}

std::string DeviceParamName(const ::testing::TestParamInfo<DeviceParam>& info) {
  return info.param.api + "_" + std::to_string(info.param.device);
}

const Discovery& Discover() {
  static const Discovery discovery = RunDiscovery();
  return discovery;
}

const std::vector<DeviceParam>& ConformanceDevices() { return Discover().devices; }

std::optional<anydev::DeviceContext> OtherBackendContext(const std::string& api) {
  for (const anydev::BackendInfo& b : Discover().backends) {
    if (b.name != api && b.available && b.device_count > 0) {
      return anydev::DeviceContext(0, b.name);
    }
  }
  return std::nullopt;
}

void DeviceTest::SetUp() { ctx_.emplace(GetParam().device, GetParam().api); }

bool DeviceTest::shipped() const {
  const std::string& name = GetParam().api;
  return name == "cpu" || name == "opencl" || name == "cuda" || name == "hip" ||
         name == "level_zero";
}

}  // namespace anydev_conformance
