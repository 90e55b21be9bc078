// SPDX-License-Identifier: Apache-2.0
// Writes a SystemReport as one JSON object (anydev-info --json), for scripts:
//   {"version": "0.1.0",
//    "backends": [{"name", "available", "device_count", "library", "reason",
//                  "devices": [{"index", "name", "memory_free_bytes",
//                               "memory_total_bytes"} | {"index", "error"}]}],
//    "backends_error": null | {"status", "message"},
//    "plugin_folders": [{"path", "exists", "plugins": [...]}],
//    "environment": {"ANYDEV_BACKEND": null | "value", ...},
//    "default_selection": {"backend", "device", "name"} | {"error": {...}}}
#ifndef ANYDEV_TOOLS_ANYDEV_INFO_JSON_REPORT_H_
#define ANYDEV_TOOLS_ANYDEV_INFO_JSON_REPORT_H_

#include <ostream>
#include <string>
#include <string_view>

#include "system_report.h"

namespace anydev_info {

// `text` as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);

void write_json_report(std::ostream& out, const SystemReport& report);

}  // namespace anydev_info

#endif  // ANYDEV_TOOLS_ANYDEV_INFO_JSON_REPORT_H_
