// SPDX-License-Identifier: Apache-2.0
#include "device_list.h"

#include <string>

#include "text_report.h"
#include "utf8_text.h"

namespace anydev_info {
namespace {

// `text` on one line that cannot move the cursor: a control character or a
// byte that is not UTF-8 shows as \xHH.
std::string one_line(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (const std::size_t length = utf8_sequence_length(text, i); length > 0) {
      out.append(text, i, length);
      i += length;
      continue;
    }
    if (byte < 0x20 || byte >= 0x7f) {
      append_hex_escape(out, byte);
    } else {
      out += text[i];
    }
    ++i;
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
