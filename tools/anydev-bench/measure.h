// SPDX-License-Identifier: Apache-2.0
// What anydev-bench measures: one operation (a copy in one direction or a
// fill with one pattern size) of one size through anydev, and the host
// baseline for the same size (memcpy for copies, memset for fills, the better
// of one thread and every core).
//
// Each measurement repeats "enqueue + synchronize()" (or the baseline call)
// until `min_seconds` have passed and at least 3 times, and reports the median
// time of one repetition. Not thread-safe: one Measurer per thread.
#ifndef ANYDEV_TOOLS_ANYDEV_BENCH_MEASURE_H_
#define ANYDEV_TOOLS_ANYDEV_BENCH_MEASURE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"
#include "host_baseline.h"

namespace anydev_bench {

enum class Op { kCopyH2D, kCopyD2H, kCopyD2D, kCopyH2H, kFill1, kFill4, kFill8, kFill16 };

// "copy_h2d", ..., "fill_16".
const char* op_name(Op op);
// The Op named `name`; false when there is none.
bool parse_op(const std::string& name, Op* out);
bool is_fill(Op op);
const std::vector<Op>& all_ops();

struct Result {
  Op op;
  std::size_t bytes = 0;
  double anydev_seconds = 0;    // median time of one operation
  double baseline_seconds = 0;  // median of the better baseline
  std::string baseline;         // "memcpy" or "memset", "x1" or "xN" threads
};

class Measurer {
 public:
  Measurer(anydev::DeviceContext context, double min_seconds);

  Result measure(Op op, std::size_t bytes);
  unsigned baseline_threads() const { return threads_.threads(); }

 private:
  double anydev_median(Op op, std::size_t bytes);
  double baseline_median(bool fill, std::size_t bytes, bool all_cores);

  anydev::DeviceContext context_;
  double min_seconds_;
  HostThreads threads_;
};

}  // namespace anydev_bench

#endif  // ANYDEV_TOOLS_ANYDEV_BENCH_MEASURE_H_
