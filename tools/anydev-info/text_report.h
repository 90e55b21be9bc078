// SPDX-License-Identifier: Apache-2.0
// Writes a SystemReport as the human-readable report of anydev-info: one
// titled section per topic (backends, devices, plugin folders, environment,
// default selection), each a clean table.
#ifndef ANYDEV_TOOLS_ANYDEV_INFO_TEXT_REPORT_H_
#define ANYDEV_TOOLS_ANYDEV_INFO_TEXT_REPORT_H_

#include <cstddef>
#include <ostream>
#include <string>

#include "system_report.h"

namespace anydev_info {

// "512 B", "1.5 KiB", "15.6 GiB".
std::string format_bytes(std::size_t bytes);

void write_text_report(std::ostream& out, const SystemReport& report);

}  // namespace anydev_info

#endif  // ANYDEV_TOOLS_ANYDEV_INFO_TEXT_REPORT_H_
