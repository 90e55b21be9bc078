// SPDX-License-Identifier: Apache-2.0
// anydev-bench: the bandwidth of copies and fills through anydev on one
// device, beside the host's memcpy/memset baseline (like nvbandwidth).
//
// Exit status: 0 when every measurement ran; 1 when the device cannot be
// opened or a measurement fails; 64 for a bad command line.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "anydev/anydev.hpp"
#include "measure.h"
#include "progress.h"
#include "report.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 64;

void print_help(std::ostream& out) {
  out << "Usage: anydev-bench [options]\n"
         "\n"
         "Measures the bandwidth of copies (host->device, device->host, device->device,\n"
         "host->host) and fills (1, 4, 8 and 16-byte patterns) through anydev, each as\n"
         "one enqueue plus synchronize(), beside the host baseline of the same size:\n"
         "memcpy for copies, memset for fills, the faster of one thread and every core.\n"
         "\n"
         "Options:\n"
         "  --backend NAME    backend to measure (cpu, opencl, cuda, ...); default: the\n"
         "                    default selection (ANYDEV_BACKEND, else the first accelerator)\n"
         "  --device N        device index within the backend (default 0)\n"
         "  --sizes LIST      comma-separated sizes with K, M or G suffixes (powers of 1024),\n"
         "                    multiples of 16 bytes (default 4K,64K,1M,16M,256M)\n"
         "  --ops LIST        comma-separated operations (default: all): copy_h2d, copy_d2h,\n"
         "                    copy_d2d, copy_h2h, fill_1, fill_4, fill_8, fill_16\n"
         "  --min-time SEC    time spent on each measurement, at least 3 repetitions\n"
         "                    (default 0.2)\n"
         "  --json            print the results as one JSON object instead of a table\n"
         "  --plot FILE       also write an SVG plot of bandwidth against size (checked to be\n"
         "                    writable before measuring)\n"
         "  --no-progress     no progress on stderr (shown once a run lasts a second)\n"
         "  --version         print the anydev version and exit\n"
         "  --help            print this help and exit\n"
         "Every option that takes a value accepts --opt VALUE and --opt=VALUE.\n"
         "\n"
         "Bandwidth is in GB/s (10^9 bytes per second), from the median repetition.\n"
         "Exit status: 0 on success; 1 when the device cannot be opened or an operation\n"
         "fails; 64 for a bad command line. See docs/performance.md.\n";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// "64K" -> 65536. False for anything else than digits and one suffix.
bool parse_size(const std::string& text, std::size_t* out) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 12) return false;
  std::size_t value = std::stoull(text.substr(0, digits));
  const std::string suffix = text.substr(digits);
  if (suffix == "K" || suffix == "k" || suffix == "KiB") {
    value <<= 10;
  } else if (suffix == "M" || suffix == "MiB") {
    value <<= 20;
  } else if (suffix == "G" || suffix == "GiB") {
    value <<= 30;
  } else if (!suffix.empty() && suffix != "B") {
    return false;
  }
  *out = value;
  return true;
}

int usage_error(const std::string& message) {
  std::cerr << "anydev-bench: " << message << "\nRun anydev-bench --help for the options.\n";
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend;
  int device = 0;
  std::vector<std::size_t> sizes = {std::size_t{4} << 10, std::size_t{64} << 10,
                                    std::size_t{1} << 20, std::size_t{16} << 20,
                                    std::size_t{256} << 20};
  std::vector<anydev_bench::Op> ops = anydev_bench::all_ops();
  double min_seconds = 0.2;
  bool json = false;
  std::string plot_path;

  bool show_progress = true;

  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    // --opt=value: the value is the rest of this argument.
    std::optional<std::string> inline_value;
    if (const std::size_t equals = arg.find('=');
        arg.starts_with("--") && equals != std::string_view::npos) {
      inline_value = std::string(arg.substr(equals + 1));
      arg = arg.substr(0, equals);
    }
    auto value = [&](std::string* out) {
      if (inline_value) {
        *out = *inline_value;
        return true;
      }
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    const bool takes_value = arg == "--backend" || arg == "--device" || arg == "--sizes" ||
                             arg == "--ops" || arg == "--min-time" || arg == "--plot";
    if (inline_value && !takes_value) {
      return usage_error(std::string(arg) + " takes no value (got '" + std::string(argv[i]) + "')");
    }
    std::string v;
    if (arg == "--help" || arg == "-h") {
      print_help(std::cout);
      return 0;
    } else if (arg == "--version") {
      std::cout << "anydev-bench (anydev " << anydev_version_string() << ")\n";
      return 0;
    } else if (arg == "--no-progress") {
      show_progress = false;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--backend") {
      if (!value(&backend)) return usage_error("--backend needs a name");
    } else if (arg == "--device") {
      if (!value(&v) || v.empty() || v.find_first_not_of("0123456789") != std::string::npos ||
          v.size() > 6) {
        return usage_error("--device needs a device index (0, 1, ...)");
      }
      device = std::stoi(v);
    } else if (arg == "--sizes") {
      if (!value(&v)) return usage_error("--sizes needs a list, e.g. 4K,1M,64M");
      sizes.clear();
      for (const std::string& item : split_list(v)) {
        std::size_t bytes = 0;
        if (!parse_size(item, &bytes) || bytes == 0 || bytes % 16 != 0) {
          return usage_error("--sizes: '" + item +
                             "' is not a size of a whole number of 16-byte patterns "
                             "(e.g. 4K, 1M, 1G)");
        }
        sizes.push_back(bytes);
      }
      if (sizes.empty()) return usage_error("--sizes: the list is empty");
    } else if (arg == "--ops") {
      if (!value(&v)) return usage_error("--ops needs a list, e.g. copy_h2d,fill_4");
      ops.clear();
      for (const std::string& item : split_list(v)) {
        anydev_bench::Op op;
        if (!anydev_bench::parse_op(item, &op)) {
          return usage_error("--ops: unknown operation '" + item + "'");
        }
        ops.push_back(op);
      }
      if (ops.empty()) return usage_error("--ops: the list is empty");
    } else if (arg == "--min-time") {
      char* end = nullptr;
      if (!value(&v) || (min_seconds = std::strtod(v.c_str(), &end), end == v.c_str()) ||
          *end != '\0' || !(min_seconds >= 0) || min_seconds > 3600) {
        return usage_error("--min-time needs seconds from 0 to 3600");
      }
    } else if (arg == "--plot") {
      if (!value(&plot_path) || plot_path.empty()) return usage_error("--plot needs a file");
    } else {
      return usage_error("unknown argument '" + std::string(argv[i]) + "'");
    }
  }

  // A plot that cannot be written fails now, not after the measurements.
  if (!plot_path.empty()) {
    if (const std::string why = anydev_bench::check_writable(plot_path); !why.empty()) {
      std::cerr << "anydev-bench: --plot " << plot_path << ": " << why << "\n";
      return kExitFailure;
    }
  }

  try {
    anydev::DeviceContext ctx = backend.empty() && device == 0
                                    ? anydev::DeviceContext()
                                    : anydev::DeviceContext(device, backend);
    anydev_bench::RunInfo info;
    info.backend = ctx.api();
    info.device = ctx.id();
    info.device_name = ctx.name();
    info.min_seconds = min_seconds;
    anydev_bench::Measurer measurer(ctx, min_seconds);
    info.baseline_threads = measurer.baseline_threads();
    std::vector<anydev_bench::Result> results;
    anydev_bench::Progress progress(std::cerr, isatty(STDERR_FILENO) == 1,
                                    ops.size() * sizes.size(), show_progress);
    for (anydev_bench::Op op : ops) {
      for (std::size_t bytes : sizes) {
        results.push_back(measurer.measure(op, bytes));
        progress.step(results.size(), std::string(anydev_bench::op_name(op)) + " " +
                                          anydev_bench::size_text(bytes));
      }
    }
    progress.finish();
    if (json) {
      anydev_bench::write_json(std::cout, info, results);
    } else {
      anydev_bench::write_table(std::cout, info, results);
    }
    if (!plot_path.empty()) {
      std::ostringstream plot;
      anydev_bench::write_svg(plot, info, results);
      if (const std::string why = anydev_bench::write_file_replacing(plot_path, plot.str());
          !why.empty()) {
        std::cerr << "anydev-bench: cannot write the plot: " << why << "\n";
        return kExitFailure;
      }
    }
  } catch (const anydev::Error& e) {
    std::cerr << "anydev-bench: " << e.what() << "\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "anydev-bench: " << e.what() << "\n";
    return kExitFailure;
  }
  return 0;
}
