// SPDX-License-Identifier: Apache-2.0
#include "report.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "support/file_output.h"
#include "table.h"

namespace anydev_bench {
namespace {

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string xml_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

double gb_per_s(std::size_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

std::string size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0) {
    return std::to_string(bytes >> 30) + " GiB";
  }
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

void write_table(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  out << "anydev-bench: " << info.backend << ":" << info.device << " " << info.device_name
      << "\nbandwidth in GB/s (10^9 bytes/s), median of repetitions; baseline: the faster of "
         "1 and "
      << info.baseline_threads << " host threads\n\n";
  using anydev_info::Table;
  Table table({{"operation", Table::Align::left},
               {"size", Table::Align::right},
               {"anydev GB/s", Table::Align::right},
               {"baseline", Table::Align::left},
               {"baseline GB/s", Table::Align::right},
               {"ratio", Table::Align::right}});
  for (const Result& r : results) {
    const double any = gb_per_s(r.bytes, r.anydev_seconds);
    const double base = gb_per_s(r.bytes, r.baseline_seconds);
    table.add_row({op_name(r.op), size_text(r.bytes), fixed(any, 2), r.baseline, fixed(base, 2),
                   base > 0 ? fixed(any / base, 3) : "-"});
  }
  table.write(out);
}

void write_json(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  out << "{\"schema_version\": " << kJsonSchemaVersion
      << ", \"anydev_version\": " << json_string(anydev_version_string())
      << ", \"backend\": " << json_string(info.backend) << ", \"device\": " << info.device
      << ", \"device_name\": " << json_string(info.device_name)
      << ", \"baseline_threads\": " << info.baseline_threads
      << ", \"min_seconds\": " << info.min_seconds << ", \"unit\": \"GB/s\", \"results\": [";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const double any = gb_per_s(r.bytes, r.anydev_seconds);
    const double base = gb_per_s(r.bytes, r.baseline_seconds);
    out << (i == 0 ? "\n  " : ",\n  ") << "{\"operation\": " << json_string(op_name(r.op))
        << ", \"bytes\": " << r.bytes << ", \"anydev_seconds\": " << r.anydev_seconds
        << ", \"anydev_gb_per_s\": " << any << ", \"baseline\": " << json_string(r.baseline)
        << ", \"baseline_seconds\": " << r.baseline_seconds << ", \"baseline_gb_per_s\": " << base
        << ", \"ratio\": " << (base > 0 ? any / base : 0.0) << "}";
  }
  out << "\n]}\n";
}

void write_svg(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  // Series: one per operation, plus the two baselines (best per size).
  struct Point {
    double log2_bytes;
    double gbps;
  };
  // Keyed by Op: the legend follows all_ops(), copies then fills by pattern
  // width (1, 4, 8, 16), not the names' string order.
  std::map<Op, std::vector<Point>> anydev_series;
  std::map<std::string, std::map<std::size_t, double>> baseline_best;
  for (const Result& r : results) {
    const double x = std::log2(static_cast<double>(r.bytes));
    anydev_series[r.op].push_back({x, gb_per_s(r.bytes, r.anydev_seconds)});
    const std::string base = is_fill(r.op) ? "memset" : "memcpy";
    double& best = baseline_best[base][r.bytes];
    best = std::max(best, gb_per_s(r.bytes, r.baseline_seconds));
  }
  double x_min = 1e9, x_max = -1e9, y_max = 0;
  for (const Result& r : results) {
    const double x = std::log2(static_cast<double>(r.bytes));
    x_min = std::min(x_min, x);
    x_max = std::max(x_max, x);
    y_max = std::max(
        {y_max, gb_per_s(r.bytes, r.anydev_seconds), gb_per_s(r.bytes, r.baseline_seconds)});
  }
  if (results.empty()) x_min = 12, x_max = 30;
  if (x_max <= x_min) x_max = x_min + 1;
  // A round top for the y axis: 1, 2 or 5 times a power of ten.
  double step = std::pow(10.0, std::floor(std::log10(std::max(y_max, 1e-3) / 5)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (y_max / (step * m) <= 6) {
      step *= m;
      break;
    }
  }
  const double y_top = std::max(step, std::ceil(y_max / step) * step);

  const double width = 860, height = 520, left = 70, right = 190, top = 50, bottom = 60;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  auto px = [&](double x) { return left + (x - x_min) / (x_max - x_min) * plot_w; };
  auto py = [&](double y) { return top + plot_h - y / y_top * plot_h; };

  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"24\" font-size=\"15\">"
      << xml_text("anydev " + info.backend + ":" + std::to_string(info.device) + " " +
                  info.device_name + ": bandwidth against size")
      << "</text>\n";
  // Grid and axes.
  for (double y = 0; y <= y_top + step / 2; y += step) {
    out << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << py(y) << "\" y2=\""
        << py(y) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << left - 8 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">"
        << fixed(y, step < 1 ? 1 : 0) << "</text>\n";
  }
  for (int x = static_cast<int>(std::ceil(x_min)); x <= static_cast<int>(std::floor(x_max));
       x += 2) {
    out << "<line x1=\"" << px(x) << "\" x2=\"" << px(x) << "\" y1=\"" << top << "\" y2=\""
        << top + plot_h << "\" stroke=\"#eee\"/>\n"
        << "<text x=\"" << px(x) << "\" y=\"" << top + plot_h + 18 << "\" text-anchor=\"middle\">"
        << xml_text(size_text(std::size_t{1} << x)) << "</text>\n";
  }
  out << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" fill=\"none\" stroke=\"#444\"/>\n"
      << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 18
      << "\" text-anchor=\"middle\">transfer size (log scale)</text>\n"
      << "<text transform=\"translate(18 " << top + plot_h / 2
      << ") rotate(-90)\" text-anchor=\"middle\">GB/s (10^9 bytes/s)</text>\n";

  static const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                        "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  // Each anydev series has its own colour, dash pattern and marker shape,
  // so curves that overlap (fills of every width often do) stay visible:
  // hollow markers of different shapes show through each other.
  static const char* const kDashes[] = {"", "10 3", "2 3", "10 3 2 3"};
  enum class Marker { circle, square, triangle, diamond, none };
  struct Style {
    std::string color;
    std::string dash;  // "" solid
    Marker marker;
  };
  auto marker_at = [&](double x, double y, const Style& style) {
    const std::string paint =
        "\" fill=\"white\" stroke=\"" + style.color + "\" stroke-width=\"1.5\"/>\n";
    switch (style.marker) {
      case Marker::circle:
        out << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"3.5" << paint;
        break;
      case Marker::square:
        out << "<rect x=\"" << x - 3.5 << "\" y=\"" << y - 3.5 << "\" width=\"7\" height=\"7"
            << paint;
        break;
      case Marker::triangle:
        out << "<polygon points=\"" << x << "," << y - 4.5 << " " << x - 4 << "," << y + 3 << " "
            << x + 4 << "," << y + 3 << paint;
        break;
      case Marker::diamond:
        out << "<polygon points=\"" << x << "," << y - 4.5 << " " << x + 4.5 << "," << y << " " << x
            << "," << y + 4.5 << " " << x - 4.5 << "," << y << paint;
        break;
      case Marker::none:
        break;
    }
  };
  auto stroke = [](const Style& style) {
    std::string text = "stroke=\"" + style.color + "\" stroke-width=\"2\"";
    if (!style.dash.empty()) text += " stroke-dasharray=\"" + style.dash + "\"";
    return text;
  };
  int legend_row = 0;
  auto legend = [&](const std::string& label, const Style& style) {
    const double y = top + 10 + legend_row++ * 20;
    out << "<line x1=\"" << left + plot_w + 12 << "\" x2=\"" << left + plot_w + 40 << "\" y1=\""
        << y << "\" y2=\"" << y << "\" " << stroke(style) << "/>\n";
    marker_at(left + plot_w + 26, y, style);
    out << "<text x=\"" << left + plot_w + 46 << "\" y=\"" << y + 4 << "\">" << xml_text(label)
        << "</text>\n";
  };
  auto polyline = [&](const std::vector<Point>& points, const Style& style) {
    out << "<polyline fill=\"none\" " << stroke(style) << " points=\"";
    for (const Point& p : points) out << px(p.log2_bytes) << "," << py(p.gbps) << " ";
    out << "\"/>\n";
    for (const Point& p : points) marker_at(px(p.log2_bytes), py(p.gbps), style);
  };
  int series = 0;
  for (const auto& [op, points] : anydev_series) {
    // (dash, marker) pairs differ for the 8 operations; colours too.
    const Style style{kColors[series % 8], kDashes[series % 4],
                      static_cast<Marker>((series + series / 4) % 4)};
    ++series;
    polyline(points, style);
    legend(std::string("anydev ") + op_name(op), style);
  }
  for (const auto& [name, by_size] : baseline_best) {
    std::vector<Point> points;
    for (const auto& [bytes, gbps] : by_size) {
      points.push_back({std::log2(static_cast<double>(bytes)), gbps});
    }
    const Style style{name == "memcpy" ? "#000000" : "#888888", "6 4", Marker::none};
    polyline(points, style);
    legend("baseline " + name, style);
  }
  out << "</svg>\n";
}

std::string check_writable(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return "is a folder";
  std::string name = path + ".XXXXXX";
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return "cannot create a file beside it: " + std::string(std::strerror(errno));
  ::close(fd);
  ::unlink(name.c_str());
  return std::string();
}

std::string write_file_replacing(const std::string& path, const std::string& content) {
  return anydev::core::write_file_replacing(path, [&](std::FILE* file) {
    return std::fwrite(content.data(), 1, content.size(), file) == content.size();
  });
}

}  // namespace anydev_bench
