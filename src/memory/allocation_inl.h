// SPDX-License-Identifier: Apache-2.0
// Template part of allocation.h. Include allocation.h, not this file.
#ifndef ANYDEV_SRC_MEMORY_ALLOCATION_INL_H_
#define ANYDEV_SRC_MEMORY_ALLOCATION_INL_H_

#include <array>
#include <utility>

#include "memory/record_slab.h"

namespace anydev::core {

namespace detail {
// The strategy and the Allocation in one block; the Allocation (declared
// last) is destroyed first, while its strategy still lives.
template <class Strategy>
struct AllocationWith {
  template <class... Args>
  explicit AllocationWith(Strategy&& s, Args&&... args)
      : strategy(std::move(s)), allocation(strategy, std::forward<Args>(args)...) {}
  Strategy strategy;
  Allocation allocation;
};
}  // namespace detail

template <class Strategy, class... Args>
std::shared_ptr<Allocation> make_allocation(Strategy strategy, Args&&... args) {
  auto both = std::allocate_shared<detail::AllocationWith<Strategy>>(
      RecordAllocator<detail::AllocationWith<Strategy>>{}, std::move(strategy),
      std::forward<Args>(args)...);
  Allocation* const allocation = &both->allocation;
  return std::shared_ptr<Allocation>(std::move(both), allocation);  // aliasing: no count change
}

template <class Enqueue>
anydev_status_t use_allocations(const StreamUse& use, std::span<Allocation* const> allocations,
                                Enqueue&& enqueue) {
  // At most two allocations per operation (a copy); lock them in address
  // order so that concurrent copies a->b and b->a cannot deadlock.
  std::array<Allocation*, 2> unique{nullptr, nullptr};
  std::size_t n = 0;
  for (Allocation* allocation : allocations) {
    if (allocation == nullptr || (n > 0 && unique[0] == allocation)) continue;
    unique[n++] = allocation;
  }
  if (n == 2 && unique[1] < unique[0]) std::swap(unique[0], unique[1]);
  std::unique_lock<SmallMutex> first, second;
  if (n > 0) first = std::unique_lock(unique[0]->mutex);
  if (n > 1) second = std::unique_lock(unique[1]->mutex);
  for (std::size_t i = 0; i < n; ++i) {
    Stream* const last = unique[i]->last_stream.get();
    if (last != nullptr && last != use.stream) {
      if (anydev_status_t status = order_after(*use.stream, *last); status != ANYDEV_SUCCESS) {
        return status;
      }
    }
  }
  const anydev_status_t status = enqueue();
  if (status == ANYDEV_SUCCESS) {
    for (std::size_t i = 0; i < n; ++i) note_use(*unique[i], *use.stream, *use.shared);
  }
  return status;
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_ALLOCATION_INL_H_
