// SPDX-License-Identifier: Apache-2.0
// anydev-info: what anydev sees on this machine, like sycl-ls or clinfo.
//
// Exit status: 0 when the report is complete and the default selection
// works; 1 when the backends could not be enumerated; 2 when the default
// selection (DeviceContext()) fails, e.g. a malformed ANYDEV_BACKEND; with
// --list, 3 when no device is found; 64 for a bad command line.
#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>

#include "device_list.h"
#include "json_report.h"
#include "system_report.h"
#include "text_report.h"

namespace {

constexpr int kExitEnumerationFailed = 1;
constexpr int kExitSelectionFailed = 2;
constexpr int kExitNoDevice = 3;  // --list found no device
constexpr int kExitUsage = 64;

// Every option the parser accepts, with its help text: print_help and the
// parser both read this table, so --help cannot leave one out.
enum class Option { json, list, version, help };
struct OptionSpec {
  Option option;
  std::string_view name;
  std::string_view alias;  // empty: none
  std::string_view help;   // lines after the first are indented under it
};
constexpr OptionSpec kOptions[] = {
    {Option::json, "--json", "", "print the report as one JSON object"},
    {Option::list, "--list", "-L",
     "print one line per device, \"[backend:index] name, memory\" (like\n"
     "sycl-ls or nvidia-smi -L); exit status 3 when there is none"},
    {Option::version, "--version", "", "print the library version and exit"},
    {Option::help, "--help", "-h", "print this help and exit"},
};

const OptionSpec* find_option(std::string_view arg) {
  for (const OptionSpec& spec : kOptions) {
    if (arg == spec.name || (!spec.alias.empty() && arg == spec.alias)) return &spec;
  }
  return nullptr;
}

std::string option_label(const OptionSpec& spec) {
  std::string label(spec.name);
  if (!spec.alias.empty()) label += ", " + std::string(spec.alias);
  return label;
}

// The error's message on one line: its later lines (where the reason often
// is, e.g. under `ANYDEV_BACKEND="cuda":`) joined to the first with "; ".
std::string one_line(std::string_view message) {
  std::string line;
  std::size_t start = 0;
  while (start <= message.size()) {
    const std::size_t end = std::min(message.find('\n', start), message.size());
    std::string_view part = message.substr(start, end - start);
    while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);
    while (!part.empty() && (part.back() == ' ' || part.back() == '\t')) part.remove_suffix(1);
    if (!part.empty()) {
      if (!line.empty()) line += line.back() == ':' ? " " : "; ";
      line += part;
    }
    start = end + 1;
  }
  return line;
}

void print_help(std::ostream& out) {
  std::size_t width = 0;
  for (const OptionSpec& spec : kOptions) width = std::max(width, option_label(spec).size());
  out << "Usage: anydev-info";
  for (const OptionSpec& spec : kOptions) {
    out << " [" << spec.name;
    if (!spec.alias.empty()) out << " | " << spec.alias;
    out << "]";
  }
  out << "\n"
         "\n"
         "Reports what anydev sees on this machine: its version; every backend, available\n"
         "or not, with the library it tried and why it is unavailable; each device of each\n"
         "available backend with its free and total memory; the plugin folders searched;\n"
         "every anydev environment variable; and the backend and device that\n"
         "DeviceContext() picks by default. --json and --list exclude each other.\n"
         "\n"
         "Options:\n";
  for (const OptionSpec& spec : kOptions) {
    const std::string label = option_label(spec);
    std::string_view help = spec.help;
    out << "  " << label << std::string(width - label.size() + 2, ' ');
    for (std::size_t newline; (newline = help.find('\n')) != std::string_view::npos;) {
      out << help.substr(0, newline) << '\n' << std::string(width + 4, ' ');
      help.remove_prefix(newline + 1);
    }
    out << help << '\n';
  }
  out << "\n"
         "Exit status: 0 when the default selection works; 1 when the backends could not\n"
         "be enumerated; 2 when the default selection fails (for example a malformed\n"
         "ANYDEV_BACKEND: its error is printed); with --list, 3 when no device is found;\n"
         "64 for a bad command line.\n"
         "The environment variables are described in docs/environment.md.\n";
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const OptionSpec* spec = find_option(arg);
    if (spec == nullptr) {
      std::cerr << "anydev-info: unknown argument '" << arg << "'\n\n";
      print_help(std::cerr);
      return kExitUsage;
    }
    switch (spec->option) {
      case Option::help:
        print_help(std::cout);
        return 0;
      case Option::version:
        std::cout << "anydev " << anydev_info::collect_version() << '\n';
        return 0;
      case Option::json:
        json = true;
        break;
      case Option::list:
        list = true;
        break;
    }
  }

  if (json && list) {
    std::cerr << "anydev-info: --json and --list exclude each other\n\n";
    print_help(std::cerr);
    return kExitUsage;
  }

  const anydev_info::SystemReport report = anydev_info::collect_system_report();
  if (list) {
    // Only the devices: the selection is not what --list is asked about.
    if (anydev_info::write_device_list(std::cout, report) > 0) return 0;
    std::cout.flush();
    std::cerr << "anydev-info: no device found (run anydev-info for why each backend is "
                 "unavailable)\n";
    return report.backends_error ? kExitEnumerationFailed : kExitNoDevice;
  }
  if (json) {
    anydev_info::write_json_report(std::cout, report);
  } else {
    anydev_info::write_text_report(std::cout, report);
  }
  std::cout.flush();

  // The full messages are in the report; stderr gets each on one line.
  if (const auto& error = report.selection.error) {
    std::cerr << "anydev-info: the default selection (DeviceContext()) failed: " << error->status
              << ": " << one_line(error->message) << '\n';
    return kExitSelectionFailed;
  }
  if (const auto& error = report.backends_error) {
    std::cerr << "anydev-info: enumerating the backends failed: " << error->status << ": "
              << one_line(error->message) << '\n';
    return kExitEnumerationFailed;
  }
  return 0;
}
