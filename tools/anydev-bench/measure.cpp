// SPDX-License-Identifier: Apache-2.0
#include "measure.h"

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>

namespace anydev_bench {
namespace {

using Clock = std::chrono::steady_clock;

struct OpName {
  Op op;
  const char* name;
};

constexpr OpName kOpNames[] = {
    {Op::kCopyH2D, "copy_h2d"}, {Op::kCopyD2H, "copy_d2h"}, {Op::kCopyD2D, "copy_d2d"},
    {Op::kCopyH2H, "copy_h2h"}, {Op::kFill1, "fill_1"},     {Op::kFill4, "fill_4"},
    {Op::kFill8, "fill_8"},     {Op::kFill16, "fill_16"},
};

// Runs `once` until min_seconds have passed (at least 3 times, at most
// 100000); the median time of one run.
double median_time(const std::function<void()>& once, double min_seconds) {
  std::vector<double> times;
  const Clock::time_point start = Clock::now();
  while (times.size() < 3 ||
         (std::chrono::duration<double>(Clock::now() - start).count() < min_seconds &&
          times.size() < 100000)) {
    const Clock::time_point t0 = Clock::now();
    once();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// Pattern bytes that are not all equal, so no fill reduces to memset.
template <class T>
T pattern_value() {
  unsigned char bits[sizeof(T)];
  for (std::size_t i = 0; i < sizeof(T); ++i) bits[i] = static_cast<unsigned char>(0x5A + i);
  T value;
  std::memcpy(&value, bits, sizeof(T));
  return value;
}

template <class T>
double fill_median(const anydev::DeviceContext& ctx, std::size_t bytes, double min_seconds) {
  auto buffer = ctx.enqueue_create_buffer<T>(bytes / sizeof(T));
  const T value = pattern_value<T>();
  auto once = [&] {
    ctx.enqueue_memset(buffer, value);
    ctx.synchronize();
  };
  once();  // first touch of the memory is not timed
  return median_time(once, min_seconds);
}

}  // namespace

const char* op_name(Op op) {
  for (const OpName& n : kOpNames) {
    if (n.op == op) return n.name;
  }
  return "?";
}

bool parse_op(const std::string& name, Op* out) {
  for (const OpName& n : kOpNames) {
    if (name == n.name) {
      *out = n.op;
      return true;
    }
  }
  return false;
}

bool is_fill(Op op) {
  return op == Op::kFill1 || op == Op::kFill4 || op == Op::kFill8 || op == Op::kFill16;
}

const std::vector<Op>& all_ops() {
  static const std::vector<Op> ops = [] {
    std::vector<Op> v;
    for (const OpName& n : kOpNames) v.push_back(n.op);
    return v;
  }();
  return ops;
}

Measurer::Measurer(anydev::DeviceContext context, double min_seconds)
    : context_(std::move(context)), min_seconds_(min_seconds) {}

double Measurer::anydev_median(Op op, std::size_t bytes) {
  const anydev::DeviceContext& ctx = context_;
  switch (op) {
    case Op::kFill1:
      return fill_median<std::uint8_t>(ctx, bytes, min_seconds_);
    case Op::kFill4:
      return fill_median<std::uint32_t>(ctx, bytes, min_seconds_);
    case Op::kFill8:
      return fill_median<std::uint64_t>(ctx, bytes, min_seconds_);
    case Op::kFill16:
      return fill_median<std::complex<double>>(ctx, bytes, min_seconds_);
    default:
      break;
  }
  const bool host_src = op == Op::kCopyH2D || op == Op::kCopyH2H;
  const bool host_dst = op == Op::kCopyD2H || op == Op::kCopyH2H;
  std::optional<anydev::HostBuffer<std::uint8_t>> hs, hd;
  std::optional<anydev::DeviceBuffer<std::uint8_t>> ds, dd;
  if (host_src) {
    hs.emplace(ctx.enqueue_create_host_buffer<std::uint8_t>(bytes));
    ctx.enqueue_memset(*hs, std::uint8_t{1});
  } else {
    ds.emplace(ctx.enqueue_create_buffer<std::uint8_t>(bytes));
    ctx.enqueue_memset(*ds, std::uint8_t{1});
  }
  if (host_dst) {
    hd.emplace(ctx.enqueue_create_host_buffer<std::uint8_t>(bytes));
    ctx.enqueue_memset(*hd, std::uint8_t{2});
  } else {
    dd.emplace(ctx.enqueue_create_buffer<std::uint8_t>(bytes));
    ctx.enqueue_memset(*dd, std::uint8_t{2});
  }
  ctx.synchronize();
  auto once = [&] {
    if (hd && hs) ctx.enqueue_copy(*hd, *hs);
    if (hd && ds) ctx.enqueue_copy(*hd, *ds);
    if (dd && hs) ctx.enqueue_copy(*dd, *hs);
    if (dd && ds) ctx.enqueue_copy(*dd, *ds);
    ctx.synchronize();
  };
  return median_time(once, min_seconds_);
}

double Measurer::baseline_median(bool fill, std::size_t bytes, bool all_cores) {
  MappedBytes dst(bytes);
  if (fill) {
    return median_time(
        [&] {
          if (all_cores) {
            parallel_memset(threads_, dst.data(), 0x5A, bytes);
          } else {
            std::memset(dst.data(), 0x5A, bytes);
          }
        },
        min_seconds_);
  }
  MappedBytes src(bytes);
  return median_time(
      [&] {
        if (all_cores) {
          parallel_memcpy(threads_, dst.data(), src.data(), bytes);
        } else {
          std::memcpy(dst.data(), src.data(), bytes);
        }
      },
      min_seconds_);
}

Result Measurer::measure(Op op, std::size_t bytes) {
  Result r;
  r.op = op;
  r.bytes = bytes;
  r.anydev_seconds = anydev_median(op, bytes);
  const bool fill = is_fill(op);
  const double one = baseline_median(fill, bytes, false);
  const double all = threads_.threads() > 1 ? baseline_median(fill, bytes, true) : one;
  const bool all_wins = all < one;
  r.baseline_seconds = all_wins ? all : one;
  r.baseline = std::string(fill ? "memset" : "memcpy") + " x" +
               std::to_string(all_wins ? threads_.threads() : 1u);
  return r;
}

}  // namespace anydev_bench
