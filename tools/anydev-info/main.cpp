// SPDX-License-Identifier: Apache-2.0
// anydev-info: what anydev sees on this machine, like sycl-ls or clinfo.
//
// Exit status: 0 when the report is complete and the default selection
// works; 1 when the backends could not be enumerated; 2 when the default
// selection (DeviceContext()) fails, e.g. a malformed ANYDEV_BACKEND; with
// --list, 3 when no device is found; 64 for a bad command line.
#include <iostream>
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

std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

void print_help(std::ostream& out) {
  out << "Usage: anydev-info [--json | --list] [--help] [--version]\n"
         "\n"
         "Reports what anydev sees on this machine: its version; every backend, available\n"
         "or not, with the library it tried and why it is unavailable; each device of each\n"
         "available backend with its free and total memory; the plugin folders searched;\n"
         "every anydev environment variable; and the backend and device that\n"
         "DeviceContext() picks by default.\n"
         "\n"
         "Options:\n"
         "  --json     print the report as one JSON object\n"
         "  --list     print one line per device, \"[backend:index] name, memory\" (like\n"
         "             sycl-ls or nvidia-smi -L); exit status 3 when there is none\n"
         "  --version  print the library version and exit\n"
         "  --help     print this help and exit\n"
         "\n"
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
    if (arg == "--help" || arg == "-h") {
      print_help(std::cout);
      return 0;
    }
    if (arg == "--version") {
      std::cout << "anydev " << anydev_info::collect_version() << '\n';
      return 0;
    }
    if (arg == "--json") {
      json = true;
      continue;
    }
    if (arg == "--list" || arg == "-L") {
      list = true;
      continue;
    }
    std::cerr << "anydev-info: unknown argument '" << arg << "'\n\n";
    print_help(std::cerr);
    return kExitUsage;
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

  // The full messages are in the report; stderr gets their first lines.
  if (const auto& error = report.selection.error) {
    std::cerr << "anydev-info: the default selection (DeviceContext()) failed: " << error->status
              << ": " << first_line(error->message) << '\n';
    return kExitSelectionFailed;
  }
  if (const auto& error = report.backends_error) {
    std::cerr << "anydev-info: enumerating the backends failed: " << error->status << ": "
              << first_line(error->message) << '\n';
    return kExitEnumerationFailed;
  }
  return 0;
}
