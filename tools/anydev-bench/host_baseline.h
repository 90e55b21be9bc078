// SPDX-License-Identifier: Apache-2.0
// Host baselines for anydev's bandwidth figures: memcpy and memset on one
// thread, and split across every core by persistent threads (woken once per
// operation, as a tuned program would do it), plus page-aligned, pre-touched
// host memory to run them on.
//
// HostThreads owns its helper threads and joins them on destruction. run() is
// not reentrant: one caller at a time (the benchmark thread). Shared by
// tools/anydev-bench and bench/.
#ifndef ANYDEV_TOOLS_ANYDEV_BENCH_HOST_BASELINE_H_
#define ANYDEV_TOOLS_ANYDEV_BENCH_HOST_BASELINE_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace anydev_bench {

class HostThreads {
 public:
  // `threads` counts the caller; 0 means the online CPUs.
  explicit HostThreads(unsigned threads = 0);
  ~HostThreads();
  HostThreads(const HostThreads&) = delete;
  HostThreads& operator=(const HostThreads&) = delete;

  unsigned threads() const { return static_cast<unsigned>(helpers_.size()) + 1; }

  // Runs fn(part) for part = 0 .. threads()-1, part 0 on the caller, the
  // others on the helpers; returns when all have returned.
  void run(const std::function<void(unsigned part)>& fn);

 private:
  void loop(unsigned part);

  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable cv_;
  const std::function<void(unsigned)>* job_ = nullptr;  // guarded by mutex_
  std::uint64_t generation_ = 0;                        // guarded by mutex_
  bool stopping_ = false;                               // guarded by mutex_
  std::atomic<unsigned> pending_{0};
};

// [begin, end) of part `part` of `parts` over `bytes`, cut at 4096-byte
// boundaries.
struct Range {
  std::size_t begin = 0;
  std::size_t end = 0;
};
Range part_range(std::size_t bytes, unsigned part, unsigned parts);

void parallel_memcpy(HostThreads& threads, void* dst, const void* src, std::size_t bytes);
void parallel_memset(HostThreads& threads, void* dst, int value, std::size_t bytes);

// Page-aligned anonymous memory, every page touched; freed by its destructor.
// Throws std::bad_alloc when the mapping fails.
class MappedBytes {
 public:
  explicit MappedBytes(std::size_t bytes);
  ~MappedBytes();
  MappedBytes(const MappedBytes&) = delete;
  MappedBytes& operator=(const MappedBytes&) = delete;
  unsigned char* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  unsigned char* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace anydev_bench

#endif  // ANYDEV_TOOLS_ANYDEV_BENCH_HOST_BASELINE_H_
