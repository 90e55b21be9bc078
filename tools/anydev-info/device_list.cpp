// SPDX-License-Identifier: Apache-2.0
#include "device_list.h"

#include <cstdio>
#include <string>

#include "text_report.h"

namespace anydev_info {
namespace {

// `text` on one line that cannot move the cursor: a control character shows
// as \xHH.
std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

int write_device_list(std::ostream& out, const SystemReport& report) {
  int listed = 0;
  for (const BackendReport& backend : report.backends) {
    if (!backend.available) continue;
    for (const DeviceReport& device : backend.devices) {
      out << '[' << one_line(backend.name) << ':' << device.index << "] ";
      if (device.error) {
        out << "cannot be opened: " << device.error->status << ": "
            << one_line(device.error->message);
      } else {
        out << one_line(device.name) << ", " << format_bytes(device.memory_total);
      }
      out << '\n';
      ++listed;
    }
  }
  return listed;
}

}  // namespace anydev_info
