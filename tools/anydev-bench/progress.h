// SPDX-License-Identifier: Apache-2.0
// anydev-bench's progress on stderr: "done/total, operation size, about N s
// left", shown once the run has lasted a second (a short run prints
// nothing), with --json too (stdout carries only the results). On a
// terminal one line is rewritten in place and cleared at the end; elsewhere
// (a CI log) each step is its own line. The estimate is the mean time per
// measurement so far times those left. Not thread-safe: one per run.
#ifndef ANYDEV_TOOLS_ANYDEV_BENCH_PROGRESS_H_
#define ANYDEV_TOOLS_ANYDEV_BENCH_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace anydev_bench {

class Progress {
 public:
  // `enabled` false: prints nothing at all (--no-progress).
  Progress(std::ostream& out, bool terminal, std::size_t total, bool enabled);

  // Says that `done` measurements of `total` are finished, the last being
  // `what`.
  void step(std::size_t done, const std::string& what);
  // Clears the terminal line, if one was written.
  void finish();

  // The line for `done` of `total` after `elapsed_seconds`: "anydev-bench:
  // 3/16 fill_4 64 KiB, about 12 s left". Pure.
  static std::string line(std::size_t done, std::size_t total, const std::string& what,
                          double elapsed_seconds);

 private:
  std::ostream& out_;
  bool terminal_;
  std::size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::size_t width_ = 0;  // of the terminal line written last
};

}  // namespace anydev_bench

#endif  // ANYDEV_TOOLS_ANYDEV_BENCH_PROGRESS_H_
