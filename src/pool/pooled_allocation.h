// The glue between Allocation (allocation.h) and the caching pools: where a
// buffer's memory comes from and where it goes when the last reference to it
// is released. Thread-safe (the pools are).
#ifndef ANYDEV_SRC_POOL_POOLED_ALLOCATION_H_
#define ANYDEV_SRC_POOL_POOLED_ALLOCATION_H_

#include <cstddef>
#include <memory>

#include "anydev/backend.h"
#include "pool/caching_pool.h"

namespace anydev::core {

struct Allocation;
struct Backend;
struct Stream;

// `bytes` (> 0) of `kind` on (backend, device) for use by `stream`, from the
// pool of (backend, device, kind). On failure the backend's status, with its
// last error set.
anydev_status_t pool_allocate(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                              const std::shared_ptr<Stream>& stream, std::size_t bytes,
                              PoolBlock* out);

// Records on a new Allocation (not yet shared) the block it holds.
void attach_pool_block(Allocation& allocation, const PoolBlock& block);

// From ~Allocation, after the owner stream was made to wait for the last
// user: hands the block back to its pool. True when the pool kept it; false
// when the caller must free it itself (not pooled, or caching off). Never
// throws.
bool return_pool_block(Allocation& allocation) noexcept;

// take_ptr: the memory is the user's now and leaves the pool's bytes in use.
// When freed (anydev_context_free) it goes back into the pool's cache.
void forget_pool_in_use(Allocation& allocation);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_POOL_POOLED_ALLOCATION_H_
