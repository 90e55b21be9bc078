// SPDX-License-Identifier: Apache-2.0
#include "text_report.h"

#include <array>
#include <cstdio>
#include <string>

#include "table.h"
#include "utf8_text.h"

namespace anydev_info {
namespace {

// An environment value in double quotes for the terminal: a control
// character (an escape sequence, a newline) or a byte that is not UTF-8
// shows as \xHH, a backslash or quote is escaped, so a value never moves the
// cursor or forges a row.
std::string printable_quoted(const std::string& value) {
  std::string out = "\"";
  for (std::size_t i = 0; i < value.size();) {
    const char c = value[i];
    const auto u = static_cast<unsigned char>(c);
    if (const std::size_t length = utf8_sequence_length(value, i); length > 0) {
      out.append(value, i, length);
      i += length;
      continue;
    }
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7F) {
      append_hex_escape(out, u);
    } else {
      out += c;
    }
    ++i;
  }
  return out + "\"";
}

using Align = Table::Align;

// "status: message", with the message's later lines indented under `indent`.
std::string describe(const CallError& error, std::size_t indent = 4) {
  std::string text = error.status + ": ";
  for (char c : error.message) {
    text += c;
    if (c == '\n') text.append(indent, ' ');
  }
  return text;
}

std::string library_cell(const BackendReport& b) {
  if (!b.library.empty()) return b.library;
  return b.available ? "(built in)" : "-";
}

void write_backends(std::ostream& out, const SystemReport& report) {
  out << "Backends\n";
  if (report.backends_error) {
    out << "  error: " << describe(*report.backends_error) << "\n\n";
    return;
  }
  Table table({{"BACKEND"}, {"STATUS"}, {"DEVICES", Align::right}, {"LIBRARY"}});
  for (const BackendReport& b : report.backends) {
    table.add_row({b.name, b.available ? "available" : "unavailable",
                   std::to_string(b.device_count), library_cell(b)});
  }
  table.write(out);

  Table reasons({{"BACKEND"}, {"WHY UNAVAILABLE"}});
  for (const BackendReport& b : report.backends) {
    if (!b.available) reasons.add_row({b.name, b.reason.empty() ? "(no reason given)" : b.reason});
  }
  if (!reasons.empty()) {
    out << '\n';
    reasons.write(out);
  }
  out << '\n';
}

void write_devices(std::ostream& out, const SystemReport& report) {
  out << "Devices\n";
  Table table({{"BACKEND"},
               {"INDEX", Align::right},
               {"NAME"},
               {"MEMORY FREE", Align::right},
               {"MEMORY TOTAL", Align::right}});
  for (const BackendReport& b : report.backends) {
    for (const DeviceReport& d : b.devices) {
      if (d.error) {
        table.add_row({b.name, std::to_string(d.index), "error: " + describe(*d.error), "-", "-"});
      } else {
        table.add_row({b.name, std::to_string(d.index), d.name, format_bytes(d.memory_free),
                       format_bytes(d.memory_total)});
      }
    }
  }
  if (table.empty()) {
    out << "  (no device on any available backend)\n\n";
    return;
  }
  table.write(out);
  // The backends' free text (versions, compute capability, bus id), one
  // device a line, so that the table above stays narrow.
  bool any_description = false;
  for (const BackendReport& b : report.backends) {
    for (const DeviceReport& d : b.devices) {
      if (d.error || d.description.empty()) continue;
      if (!any_description) out << '\n';
      any_description = true;
      out << "  " << b.name << ':' << d.index << "  " << d.description << '\n';
    }
  }
  // Device attributes and the vendor API's version, one device a line;
  // "-" where the backend has no value.
  bool any_attributes = false;
  for (const BackendReport& b : report.backends) {
    for (const DeviceReport& d : b.devices) {
      if (d.error) continue;
      if (!any_attributes) out << '\n';
      any_attributes = true;
      out << "  " << b.name << ':' << d.index
          << "  API: " << (d.api_version.empty() ? "-" : d.api_version) << "; uuid "
          << (d.uuid.empty() ? "-" : d.uuid) << "; pci "
          << (d.pci_bus_id.empty() ? "-" : d.pci_bus_id) << '\n'
          << "  " << b.name << ':' << d.index << " ";
      for (const auto& [name, value] : d.attributes) {
        out << ' ' << name << '=' << (value ? std::to_string(*value) : std::string("-"));
      }
      out << '\n';
    }
  }
  // Whether host buffers are really page-locked (pinned), probed with one
  // 1-element host buffer per device.
  bool any_locks = false;
  for (const BackendReport& b : report.backends) {
    for (const DeviceReport& d : b.devices) {
      if (d.error) continue;
      if (!any_locks) out << '\n';
      any_locks = true;
      const HostLocksReport& h = d.host_locks;
      out << "  " << b.name << ':' << d.index << "  locked host memory: " << h.locked_bytes
          << " of " << h.total_bytes << " bytes ("
          << (!h.probe_locked ? "no probe host buffer could be made"
              : *h.probe_locked
                  ? "host buffers are page-locked"
                  : "host buffers are NOT page-locked: anydev logs why, once (a warning, or "
                    "info where it does not matter)")
          << ")\n";
    }
  }
  out << '\n';
}

void write_plugin_folders(std::ostream& out, const SystemReport& report) {
  out << "Plugin folders searched\n";
  Table table({{"FOLDER"}, {"PLUGINS"}});
  for (const PluginFolderReport& f : report.plugin_folders) {
    std::string plugins;
    if (!f.exists) {
      plugins = "(folder missing)";
    } else if (f.plugins.empty()) {
      plugins = "(none)";
    } else {
      for (const std::string& p : f.plugins) plugins += (plugins.empty() ? "" : " ") + p;
    }
    table.add_row({f.path, plugins});
  }
  if (table.empty()) {
    out << "  (none)\n\n";
    return;
  }
  table.write(out);
  out << '\n';
}

void write_environment(std::ostream& out, const SystemReport& report) {
  out << "Environment\n";
  Table table({{"VARIABLE"}, {"VALUE"}, {"MEANING"}});
  for (const EnvVarReport& v : report.environment) {
    table.add_row({v.name, v.value ? printable_quoted(*v.value) : "(unset)", v.meaning});
  }
  table.write(out);
  out << '\n';
}

void write_selection(std::ostream& out, const SystemReport& report) {
  out << "Default selection (DeviceContext())\n";
  const SelectionReport& s = report.selection;
  if (s.error) {
    out << "  error: " << describe(*s.error) << '\n';
    return;
  }
  Table table({{"BACKEND"}, {"DEVICE", Align::right}, {"NAME"}});
  table.add_row({s.api, std::to_string(s.device), s.device_name});
  table.write(out);
}

}  // namespace

std::string format_bytes(std::size_t bytes) {
  constexpr std::array<const char*, 6> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  return text;
}

void write_text_report(std::ostream& out, const SystemReport& report) {
  out << "anydev " << report.version << "\n\n";
  write_backends(out, report);
  write_devices(out, report);
  write_plugin_folders(out, report);
  write_environment(out, report);
  out << "Memory pools: " << (report.pools_enabled ? "on" : "off (ANYDEV_POOL=0)")
      << " (statistics per device: anydev-info --json)\n";
  if (report.transport.available) {
    out << "Transfers between processes (UCX): available, memory types: "
        << report.transport.memory_types << "\n\n";
  } else {
    const CallError none{"", ""};
    const CallError& why = report.transport.error ? *report.transport.error : none;
    out << "Transfers between processes (UCX): unavailable: " << why.message << "\n\n";
  }
  write_selection(out, report);
}

}  // namespace anydev_info
