// SPDX-License-Identifier: Apache-2.0
// The caching pools of the process: one CachingPool per (backend, device,
// memory kind), made on first use and never destroyed (releases may arrive
// during exit). ANYDEV_POOL (0 or 1, default 1) is read once, on first use:
// with 0 the pools keep statistics but cache nothing.
// ANYDEV_POOL_RELEASE_THRESHOLD (bytes, default 16 MiB) is each new pool's
// release threshold (CachingPool::set_release_threshold), read once too.
// ANYDEV_POOL_CARVE (0 or 1, default 1; read once): whether caching device
// pools of backends with ANYDEV_BK_FLAG_DEVICE_ADDRESS_HANDLES or
// ANYDEV_BK_FLAG_DEVICE_OBJECT_OFFSETS carve small blocks out of larger
// driver allocations (block_carver.h); with 0 every block is a driver
// allocation of its own.
//
// Fork: a child of fork() starts with fresh, empty pools; the parent's pools
// and their cached blocks are left untouched (they belong to the parent).
// Thread-safe.
#ifndef ANYDEV_SRC_MEMORY_POOL_POOL_REGISTRY_H_
#define ANYDEV_SRC_MEMORY_POOL_POOL_REGISTRY_H_

#include <cstddef>
#include <optional>
#include <string_view>

#include "anydev/backend.h"
#include "memory/pool/caching_pool.h"
#include "support/pool_settings.h"  // the parsers of ANYDEV_POOL and the threshold

namespace anydev::core {

struct Backend;

// The release threshold new pools start with (the variable, read once, or
// kPoolDefaultReleaseThreshold).
std::size_t default_release_threshold();

// Whether the pools cache (ANYDEV_POOL, read once).
bool pools_enabled();

// Whether caching device pools carve small blocks (ANYDEV_POOL_CARVE, read once).
bool carving_enabled();

// The pool of (backend, device, kind); made on first use.
CachingPool& pool_for(const Backend* backend, int device, anydev_bk_memory_kind_t kind);

// Releases the cached blocks of both kinds of (backend, device) without
// waiting (see CachingPool::release_cached). Makes no pool.
void release_cached_memory(const Backend* backend, int device);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_POOL_POOL_REGISTRY_H_
