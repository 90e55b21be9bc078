// SPDX-License-Identifier: Apache-2.0
// The emulator's memory pools: each device's default pool (created by cuInit)
// and the pools cuMemPoolCreate makes.
//
// Pools are never freed: cuMemPoolDestroy marks one destroyed, so that a
// stale handle is recognized and refused, and memory allocated from it may
// still be freed afterwards (as the real driver allows). A Pool's fields are
// guarded by its own mutex; the registry is thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_POOL_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_POOL_H_

#include <cuda.h>

#include <mutex>
#include <set>

namespace anydev_emu {

struct Pool {
  int device = 0;
  bool is_default = false;
  std::mutex mutex;
  bool destroyed = false;
  cuuint64_t release_threshold = 0;  // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
  int reuse_flags[3] = {1, 1, 1};    // the three CU_MEMPOOL_ATTR_REUSE_* switches
  std::set<int> access;              // other devices granted read-write access
};

// A new pool of `device`, registered; never null.
Pool* create_pool(int device, bool is_default);

// The live pool behind `handle`; CUDA_ERROR_INVALID_VALUE (reported with
// `api`) for an unknown or destroyed one.
CUresult lookup_pool(CUmemoryPool handle, const char* api, Pool** out);

CUmemoryPool to_handle(Pool* pool);

}  // namespace anydev_emu

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_POOL_H_
