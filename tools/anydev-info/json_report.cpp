// SPDX-License-Identifier: Apache-2.0
#include "json_report.h"

#include <cstdio>

#include "utf8_text.h"

namespace anydev_info {
namespace {

std::string json_error(const CallError& error) {
  return "{\"status\": " + json_quote(error.status) +
         ", \"message\": " + json_quote(error.message) + "}";
}

const char* json_bool(bool value) { return value ? "true" : "false"; }

void write_pool_stats(std::ostream& out, const PoolStatsReport& p) {
  out << "{\"bytes_in_use\": " << p.bytes_in_use << ", \"bytes_cached\": " << p.bytes_cached
      << ", \"peak_bytes_in_use\": " << p.peak_bytes_in_use
      << ", \"allocation_count\": " << p.allocation_count << ", \"cache_hits\": " << p.cache_hits
      << ", \"cache_misses\": " << p.cache_misses << "}";
}

void write_device(std::ostream& out, const DeviceReport& d) {
  out << "{\"index\": " << d.index;
  if (d.error) {
    out << ", \"error\": " << json_error(*d.error) << "}";
    return;
  }
  out << ", \"name\": " << json_quote(d.name) << ", \"description\": " << json_quote(d.description)
      << ", \"memory_free_bytes\": " << d.memory_free
      << ", \"memory_total_bytes\": " << d.memory_total << ", \"pool\": {\"host\": ";
  write_pool_stats(out, d.host_pool);
  out << ", \"device\": ";
  write_pool_stats(out, d.device_pool);
  out << "}, \"host_memory\": {\"locked_bytes\": " << d.host_locks.locked_bytes
      << ", \"total_bytes\": " << d.host_locks.total_bytes << ", \"probe_buffer_locked\": "
      << (d.host_locks.probe_locked ? json_bool(*d.host_locks.probe_locked) : "null") << "}";
  out << ", \"api_version\": " << json_quote(d.api_version)
      << ", \"uuid\": " << (d.uuid.empty() ? std::string("null") : json_quote(d.uuid))
      << ", \"pci_bus_id\": "
      << (d.pci_bus_id.empty() ? std::string("null") : json_quote(d.pci_bus_id))
      << ", \"attributes\": {";
  bool first = true;
  for (const auto& [name, value] : d.attributes) {
    out << (first ? "" : ", ") << json_quote(name) << ": "
        << (value ? std::to_string(*value) : std::string("null"));
    first = false;
  }
  out << "}}";
}

void write_backend(std::ostream& out, const BackendReport& b) {
  out << "    {\"name\": " << json_quote(b.name) << ", \"available\": " << json_bool(b.available)
      << ", \"device_count\": " << b.device_count << ",\n"
      << "     \"library\": " << json_quote(b.library) << ",\n"
      << "     \"reason\": " << json_quote(b.reason) << ",\n"
      << "     \"devices\": [";
  for (std::size_t i = 0; i < b.devices.size(); ++i) {
    out << (i == 0 ? "" : ", ");
    write_device(out, b.devices[i]);
  }
  out << "]}";
}

void write_plugin_folder(std::ostream& out, const PluginFolderReport& f) {
  out << "    {\"path\": " << json_quote(f.path) << ", \"exists\": " << json_bool(f.exists)
      << ", \"plugins\": [";
  for (std::size_t i = 0; i < f.plugins.size(); ++i) {
    out << (i == 0 ? "" : ", ") << json_quote(f.plugins[i]);
  }
  out << "]}";
}

void write_selection(std::ostream& out, const SelectionReport& s) {
  if (s.error) {
    out << "{\"error\": " << json_error(*s.error) << "}";
    return;
  }
  out << "{\"backend\": " << json_quote(s.api) << ", \"device\": " << s.device
      << ", \"name\": " << json_quote(s.device_name) << "}";
}

}  // namespace

std::string json_quote(std::string_view text) {
  std::string quoted = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      // JSON text must be UTF-8: a byte that is not shows as the characters
      // "\xHH" (its backslash escaped for JSON), as in anydev's messages.
      if (const std::size_t length = utf8_sequence_length(text, i); length > 0) {
        quoted.append(text.substr(i, length));
        i += length;
      } else {
        quoted += '\\';
        append_hex_escape(quoted, u);
        ++i;
      }
      continue;
    }
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      case '\t':
        quoted += "\\t";
        break;
      case '\r':
        quoted += "\\r";
        break;
      default:
        if (u < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(u));
          quoted += escape;
        } else {
          quoted += c;
        }
    }
    ++i;
  }
  quoted += '"';
  return quoted;
}

void write_json_report(std::ostream& out, const SystemReport& report) {
  out << "{\n  \"version\": " << json_quote(report.version) << ",\n  \"backends\": [";
  for (std::size_t i = 0; i < report.backends.size(); ++i) {
    out << (i == 0 ? "\n" : ",\n");
    write_backend(out, report.backends[i]);
  }
  out << "\n  ],\n  \"backends_error\": "
      << (report.backends_error ? json_error(*report.backends_error) : "null")
      << ",\n  \"plugin_folders\": [";
  for (std::size_t i = 0; i < report.plugin_folders.size(); ++i) {
    out << (i == 0 ? "\n" : ",\n");
    write_plugin_folder(out, report.plugin_folders[i]);
  }
  out << "\n  ],\n  \"environment\": {";
  for (std::size_t i = 0; i < report.environment.size(); ++i) {
    const EnvVarReport& v = report.environment[i];
    out << (i == 0 ? "\n    " : ",\n    ") << json_quote(v.name) << ": "
        << (v.value ? json_quote(*v.value) : "null");
  }
  out << "\n  },\n  \"pools_enabled\": " << json_bool(report.pools_enabled);
  out << ",\n  \"transport\": {\"name\": \"ucx\", \"available\": "
      << json_bool(report.transport.available)
      << ", \"memory_types\": " << json_quote(report.transport.memory_types)
      << ", \"error\": " << (report.transport.error ? json_error(*report.transport.error) : "null")
      << "}";
  out << ",\n  \"default_selection\": ";
  write_selection(out, report.selection);
  out << "\n}\n";
}

}  // namespace anydev_info
