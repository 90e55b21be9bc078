// SPDX-License-Identifier: Apache-2.0
#include "host_baseline.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <new>

namespace anydev_bench {

HostThreads::HostThreads(unsigned threads) {
  if (threads == 0) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    threads = online > 0 ? static_cast<unsigned>(online) : 1u;
  }
  for (unsigned part = 1; part < threads; ++part) {
    helpers_.emplace_back([this, part] { loop(part); });
  }
}

HostThreads::~HostThreads() {
  {
    std::lock_guard<std::mutex> hold(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

void HostThreads::run(const std::function<void(unsigned)>& fn) {
  if (helpers_.empty()) {
    fn(0);
    return;
  }
  pending_.store(static_cast<unsigned>(helpers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> hold(mutex_);
    job_ = &fn;
    ++generation_;
  }
  cv_.notify_all();
  fn(0);
  for (unsigned left = pending_.load(std::memory_order_acquire); left != 0;
       left = pending_.load(std::memory_order_acquire)) {
    pending_.wait(left, std::memory_order_acquire);
  }
}

void HostThreads::loop(unsigned part) {
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(unsigned)>* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    (*job)(part);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_all();
  }
}

Range part_range(std::size_t bytes, unsigned part, unsigned parts) {
  std::size_t chunk = (bytes + parts - 1) / parts;
  chunk = (chunk + 4095) & ~std::size_t{4095};
  const std::size_t begin = std::min(bytes, chunk * part);
  return {begin, std::min(bytes, begin + chunk)};
}

void parallel_memcpy(HostThreads& threads, void* dst, const void* src, std::size_t bytes) {
  const unsigned parts = threads.threads();
  threads.run([&](unsigned part) {
    const Range r = part_range(bytes, part, parts);
    std::memcpy(static_cast<unsigned char*>(dst) + r.begin,
                static_cast<const unsigned char*>(src) + r.begin, r.end - r.begin);
  });
}

void parallel_memset(HostThreads& threads, void* dst, int value, std::size_t bytes) {
  const unsigned parts = threads.threads();
  threads.run([&](unsigned part) {
    const Range r = part_range(bytes, part, parts);
    std::memset(static_cast<unsigned char*>(dst) + r.begin, value, r.end - r.begin);
  });
}

MappedBytes::MappedBytes(std::size_t bytes) : bytes_(bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<unsigned char*>(p);
  std::memset(data_, 0x11, bytes);  // fault every page in before anything is timed
}

MappedBytes::~MappedBytes() { munmap(data_, bytes_); }

}  // namespace anydev_bench
