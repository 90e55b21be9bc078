// SPDX-License-Identifier: Apache-2.0
#include "memory/pool/pooled_allocation.h"

#include <cstdint>
#include <optional>

#include "memory/pool/pool_registry.h"

namespace anydev::core {
namespace {

// The pooled release strategy: where the block goes back, lent by the pool
// while the Allocation lives (the pool keeps no node for it meanwhile).
// Lives beside its Allocation (make_allocation); immutable (whether the
// block still counts as in use is the Allocation's `taken`, under its mutex).
class PooledRelease final : public ReleaseStrategy {
 public:
  explicit PooledRelease(const PoolBlock& block) noexcept
      : pool_(block.pool), size_class_(block.size_class) {}

  void release(Allocation& allocation) noexcept override {
    // Last used on its owner stream: its use epoch there says whether an
    // earlier release's event covers it (release_event.h). Otherwise the
    // ordering below enqueues a wait on the owner now: an event of its own.
    std::optional<std::uint16_t> use_epoch;
    if (allocation.last_stream == allocation.owner_stream) use_epoch = allocation.use_epoch;
    order_release_after_last_use(allocation);
    const PoolBlock block{pool_, allocation.handle, allocation.address, block_bytes(allocation),
                          size_class_};
    if (pool_->give_back(block, allocation.owner_stream, allocation.last_stream != nullptr,
                         !allocation.taken, use_epoch)) {
      return;  // cached for reuse (pool/caching_pool.h)
    }
    free_after_owner_stream(allocation, pool_->waiting_releases());
  }

  void forget_in_use(Allocation& allocation) noexcept override {
    if (allocation.taken) return;
    pool_->forget_in_use(block_bytes(allocation));
    allocation.taken = true;
  }

 private:
  // The block size: its size class, or the request when the pool does not
  // cache (then the block is exactly the request, the Allocation's bytes).
  std::size_t block_bytes(const Allocation& allocation) const noexcept {
    return size_class_ != nullptr ? size_class_->bytes : allocation.bytes;
  }

  // Three words beside the Allocation: there is one per live buffer.
  CachingPool* const pool_;
  PoolSizeClass* const size_class_;  // where it is cached (null when not caching)
};

static_assert(sizeof(PooledRelease) <= 3 * sizeof(void*), "PooledRelease grew");

}  // namespace

anydev_status_t pool_allocate(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                              const std::shared_ptr<Stream>& stream, std::size_t bytes,
                              PoolBlock* out) {
  return pool_for(backend, device, kind).allocate(stream, bytes, out);
}

std::shared_ptr<Allocation> make_pooled_allocation(const Backend* backend, int device,
                                                   anydev_bk_memory_kind_t kind,
                                                   const PoolBlock& block, std::size_t bytes,
                                                   const std::shared_ptr<Stream>& owner) {
  if (block.pool == nullptr) {
    return make_plain_allocation(backend, device, kind, block.handle, block.address, bytes, owner);
  }
  std::shared_ptr<Allocation> allocation;
  try {
    allocation = make_allocation(PooledRelease(block), backend, device, kind, block.handle,
                                 block.address, bytes, owner);
  } catch (...) {
    block.pool->return_unused(block, owner);
    throw;
  }
  allocation->object_block = block.handle != block.address && block.pool->carves_objects();
  return allocation;
}

void forget_pool_in_use(Allocation& allocation) {
  std::lock_guard lock(allocation.mutex);
  allocation.strategy().forget_in_use(allocation);
}

}  // namespace anydev::core
