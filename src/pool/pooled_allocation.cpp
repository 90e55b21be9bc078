// SPDX-License-Identifier: Apache-2.0
#include "pool/pooled_allocation.h"

#include "pool/pool_registry.h"

namespace anydev::core {
namespace {

// The pooled release strategy: the block and its bookkeeping, lent by the
// pool while the Allocation lives. Lives beside its Allocation
// (make_allocation); `in_use` is guarded by the allocation's mutex.
class PooledRelease final : public ReleaseStrategy {
 public:
  explicit PooledRelease(const PoolBlock& block) noexcept
      : pool_(block.pool), bytes_(block.bytes), node_(block.node) {}

  void release(Allocation& allocation) noexcept override {
    order_release_after_last_use(allocation);
    const PoolBlock block{pool_, allocation.handle, allocation.address, bytes_, node_};
    node_ = nullptr;  // the pool's again (kept or recycled)
    if (pool_->give_back(block, allocation.owner_stream, allocation.last_stream != nullptr,
                         in_use_)) {
      return;  // cached for reuse (pool/caching_pool.h)
    }
    free_after_owner_stream(allocation);
  }

  void forget_in_use() noexcept override {
    if (!in_use_) return;
    pool_->forget_in_use(bytes_);
    in_use_ = false;
  }

 private:
  CachingPool* const pool_;
  const std::size_t bytes_;  // the block size
  PoolNode* node_;           // the block's bookkeeping (null when not caching)
  bool in_use_ = true;       // cleared when take_ptr hands the memory to the user
};

}  // namespace

anydev_status_t pool_allocate(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                              const std::shared_ptr<Stream>& stream, std::size_t bytes,
                              PoolBlock* out) {
  return pool_for(backend, device, kind).allocate(stream, bytes, out);
}

std::shared_ptr<Allocation> make_pooled_allocation(const Backend* backend, int device,
                                                   anydev_bk_memory_kind_t kind,
                                                   const PoolBlock& block, std::size_t bytes,
                                                   std::shared_ptr<Stream> owner) {
  if (block.pool == nullptr) {
    return make_plain_allocation(backend, device, kind, block.handle, block.address, bytes,
                                 std::move(owner));
  }
  return make_allocation(PooledRelease(block), backend, device, kind, block.handle, block.address,
                         bytes, std::move(owner));
}

void forget_pool_in_use(Allocation& allocation) {
  std::lock_guard lock(allocation.mutex);
  allocation.strategy().forget_in_use();
}

}  // namespace anydev::core
