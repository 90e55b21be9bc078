// SPDX-License-Identifier: Apache-2.0
// The glue between Allocation (allocation.h) and the caching pools: where a
// buffer's memory comes from and, through the pooled release strategy, where
// it goes when the last reference to it is released. Thread-safe (the pools
// are).
#ifndef ANYDEV_SRC_MEMORY_POOL_POOLED_ALLOCATION_H_
#define ANYDEV_SRC_MEMORY_POOL_POOLED_ALLOCATION_H_

#include <cstddef>
#include <memory>

#include "anydev/backend.h"
#include "memory/allocation.h"
#include "memory/pool/caching_pool.h"

namespace anydev::core {

struct Backend;
struct Stream;

// `bytes` (> 0) of `kind` on (backend, device) for use by `stream`, from the
// pool of (backend, device, kind). On failure the backend's status, with its
// last error set.
anydev_status_t pool_allocate(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                              const std::shared_ptr<Stream>& stream, std::size_t bytes,
                              PoolBlock* out);

// The Allocation of a block from pool_allocate, owned by `owner`: when its
// last reference goes, the block goes back to its pool (after its last use,
// see allocation.h) or, when the pool does not keep it, is freed as plain
// memory. An empty block (no pool: a zero-size buffer) makes a plain
// Allocation of nothing. When the Allocation's record cannot be allocated
// (std::bad_alloc, rethrown), the block goes back to its pool first.
std::shared_ptr<Allocation> make_pooled_allocation(const Backend* backend, int device,
                                                   anydev_bk_memory_kind_t kind,
                                                   const PoolBlock& block, std::size_t bytes,
                                                   const std::shared_ptr<Stream>& owner);

// take_ptr: the memory is the user's now and leaves the pool's bytes in use.
// When freed (anydev_context_free) it goes back into the pool's cache.
void forget_pool_in_use(Allocation& allocation);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_POOL_POOLED_ALLOCATION_H_
