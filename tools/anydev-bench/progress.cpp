// SPDX-License-Identifier: Apache-2.0
#include "progress.h"

#include <cmath>

namespace anydev_bench {

namespace {
// A run shorter than this prints no progress.
constexpr double kQuietSeconds = 1.0;
}  // namespace

Progress::Progress(std::ostream& out, bool terminal, std::size_t total, bool enabled)
    : out_(out),
      terminal_(terminal),
      total_(total),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()) {}

std::string Progress::line(std::size_t done, std::size_t total, const std::string& what,
                           double elapsed_seconds) {
  std::string text =
      "anydev-bench: " + std::to_string(done) + "/" + std::to_string(total) + " " + what;
  if (done == 0 || done >= total) return text;
  const double left =
      elapsed_seconds / static_cast<double>(done) * static_cast<double>(total - done);
  const long rounded = std::lround(std::ceil(left));
  if (rounded >= 120) {
    text += ", about " + std::to_string((rounded + 59) / 60) + " min left";
  } else {
    text += ", about " + std::to_string(rounded) + " s left";
  }
  return text;
}

void Progress::step(std::size_t done, const std::string& what) {
  if (!enabled_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed < kQuietSeconds) return;
  const std::string text = line(done, total_, what, elapsed);
  if (terminal_) {
    out_ << '\r' << text;
    if (text.size() < width_) out_ << std::string(width_ - text.size(), ' ');
    width_ = text.size();
    out_ << std::flush;
  } else {
    out_ << text << '\n' << std::flush;
  }
}

void Progress::finish() {
  if (width_ == 0) return;
  out_ << '\r' << std::string(width_, ' ') << '\r' << std::flush;
  width_ = 0;
}

}  // namespace anydev_bench
