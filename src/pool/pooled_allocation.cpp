#include "pool/pooled_allocation.h"

#include "allocation.h"
#include "pool/pool_registry.h"

namespace anydev::core {

anydev_status_t pool_allocate(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                              const std::shared_ptr<Stream>& stream, std::size_t bytes,
                              PoolBlock* out) {
  return pool_for(backend, device, kind).allocate(stream, bytes, out);
}

void attach_pool_block(Allocation& allocation, const PoolBlock& block) {
  allocation.pool = block.pool;
  allocation.pool_bytes = block.bytes;
  allocation.pool_in_use = block.pool != nullptr;
  allocation.pool_node = block.node;
}

bool return_pool_block(Allocation& allocation) noexcept {
  if (allocation.pool == nullptr) return false;
  const PoolBlock block{allocation.pool, allocation.handle, allocation.address,
                        allocation.pool_bytes, allocation.pool_node};
  allocation.pool_node = nullptr;  // the pool's again (kept or deleted)
  return allocation.pool->give_back(block, allocation.owner_stream,
                                    allocation.last_stream != nullptr, allocation.pool_in_use);
}

void forget_pool_in_use(Allocation& allocation) {
  std::lock_guard lock(allocation.mutex);
  if (allocation.pool == nullptr || !allocation.pool_in_use) return;
  allocation.pool->forget_in_use(allocation.pool_bytes);
  allocation.pool_in_use = false;
}

}  // namespace anydev::core
