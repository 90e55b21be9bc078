// SPDX-License-Identifier: Apache-2.0
// anydev-bench's three outputs: a table for the terminal, one JSON object,
// and an SVG plot of bandwidth against size (anydev's operations as solid
// lines, the memcpy and memset baselines dashed). Bandwidth is in GB/s
// (10^9 bytes per second). Pure functions of their arguments: thread-safe.
#ifndef ANYDEV_TOOLS_ANYDEV_BENCH_REPORT_H_
#define ANYDEV_TOOLS_ANYDEV_BENCH_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include "measure.h"

namespace anydev_bench {

// What was measured on which device, for every output.
struct RunInfo {
  std::string backend;
  int device = 0;
  std::string device_name;
  unsigned baseline_threads = 1;
  double min_seconds = 0;
};

double gb_per_s(std::size_t bytes, double seconds);
// "4 KiB", "1 MiB", "1 GiB".
std::string size_text(std::size_t bytes);

void write_table(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);
void write_json(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);
void write_svg(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);

// Writes `content` to `path` through a temporary file created exclusively
// beside it (a symlink planted at a predictable name is never followed),
// renamed over `path` at the end: the core's writer (src/support/file_output.h), so
// a new plot gets the umask's permissions and a replaced one keeps its mode.
// Returns an empty string on success, else why (and `path` is unchanged).
std::string write_file_replacing(const std::string& path, const std::string& content);

// Whether write_file_replacing(path, ...) can succeed: creates and removes a
// temporary file beside `path`, and refuses a folder. Empty when it can,
// else why. Checked before measuring, so a bad --plot fails at once.
std::string check_writable(const std::string& path);

// The "schema_version" of write_json's object: 1 + every change that could
// break a reader (a field renamed, removed or changing meaning). Fields may
// be added without a bump.
inline constexpr int kJsonSchemaVersion = 1;

}  // namespace anydev_bench

#endif  // ANYDEV_TOOLS_ANYDEV_BENCH_REPORT_H_
