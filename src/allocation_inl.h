// Template part of allocation.h. Include allocation.h, not this file.
#ifndef ANYDEV_SRC_ALLOCATION_INL_H_
#define ANYDEV_SRC_ALLOCATION_INL_H_

#include <algorithm>
#include <array>

namespace anydev::core {

template <class Enqueue>
anydev_status_t use_allocations(const std::shared_ptr<Stream>& stream,
                                std::span<Allocation* const> allocations, Enqueue&& enqueue) {
  // At most two allocations per operation (a copy); lock them in address
  // order so that concurrent copies a->b and b->a cannot deadlock.
  std::array<Allocation*, 2> unique{nullptr, nullptr};
  std::size_t n = 0;
  for (Allocation* allocation : allocations) {
    if (allocation == nullptr) continue;
    if (std::find(unique.begin(), unique.begin() + n, allocation) != unique.begin() + n) continue;
    unique[n++] = allocation;
  }
  std::sort(unique.begin(), unique.begin() + n);
  std::unique_lock<std::mutex> first, second;
  if (n > 0) first = std::unique_lock(unique[0]->mutex);
  if (n > 1) second = std::unique_lock(unique[1]->mutex);
  for (std::size_t i = 0; i < n; ++i) {
    const std::shared_ptr<Stream>& last = unique[i]->last_stream;
    if (last && last != stream) {
      if (anydev_status_t status = order_after(*stream, *last); status != ANYDEV_SUCCESS) {
        return status;
      }
    }
  }
  const anydev_status_t status = enqueue();
  if (status == ANYDEV_SUCCESS) {
    for (std::size_t i = 0; i < n; ++i) unique[i]->last_stream = stream;
  }
  return status;
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_ALLOCATION_INL_H_
