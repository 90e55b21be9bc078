// SPDX-License-Identifier: Apache-2.0
#include "memory/pool/pool_registry.h"

#include <pthread.h>

#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "memory/event_pool.h"
#include "runtime/registry.h"
#include "support/core_mutex.h"
#include "support/environment.h"
#include "support/fork_guard.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

struct Entry {
  const Backend* backend;
  int device;
  anydev_bk_memory_kind_t kind;
  CachingPool* pool;  // never destroyed
};

// Never destroyed: buffers may be released during exit.
struct Pools {
  CoreMutex mutex;
  std::vector<Entry> entries;

  // A ProcessObject, not a guarded static (fork-safe, fork_guard.h); made
  // when the library is loaded (below), so its fork handlers come first.
  static Pools& instance() {
    static ProcessObject<Pools> pools;
    return pools.get([] { return new Pools(); },
                     [](Pools&) {
                       // A forked child must not inherit a locked mutex nor use
                       // the parent's cached memory: it forgets every pool
                       // (leaking the objects, whose mutexes may be held by
                       // threads that do not exist in the child).
                       pthread_atfork([] { instance().mutex.lock(); },
                                      [] { instance().mutex.unlock(); },
                                      [] {
                                        Pools& p = instance();
                                        p.entries.clear();
                                        p.mutex.unlock();
                                      });
                     });
  }

  CachingPool* find_locked(const Backend* backend, int device, anydev_bk_memory_kind_t kind) {
    for (const Entry& e : entries) {
      if (e.backend == backend && e.device == device && e.kind == kind) return e.pool;
    }
    return nullptr;
  }
};

// Made when libanydev.so is loaded, before any thread can use it.
[[maybe_unused]] const bool g_pools_made_at_load = (Pools::instance(), true);

// A 0-or-1 variable read once into `cache` (-1: not read yet; no C++ static
// guard, fork-safe as fork_guard.h wants: racing threads read the same
// value). Malformed: every backend is unavailable with the reason
// (core_environment_errors in environment.h), so no pool is ever made.
bool switch_on(std::atomic<int>& cache, const char* variable) {
  if (const int known = cache.load(std::memory_order_relaxed); known >= 0) return known != 0;
  const std::optional<std::string> value = env(variable);
  const bool on = value ? parse_pool_setting(*value).value_or(true) : true;
  cache.store(on ? 1 : 0, std::memory_order_relaxed);
  return on;
}

}  // namespace

bool pools_enabled() {
  static std::atomic<int> enabled{-1};
  return switch_on(enabled, kEnvPool);
}

bool carving_enabled() {
  static std::atomic<int> enabled{-1};
  return switch_on(enabled, kEnvPoolCarve);
}

std::size_t default_release_threshold() {
  // No C++ static guard (fork-safe, fork_guard.h): racing threads read the
  // same value. A malformed value makes every backend unavailable
  // (core_environment_errors in environment.h), so no pool is ever made.
  static std::atomic<bool> known{false};
  static std::atomic<std::size_t> threshold{kPoolDefaultReleaseThreshold};
  if (known.load(std::memory_order_acquire)) return threshold.load(std::memory_order_relaxed);
  const std::optional<std::string> value = env(kEnvPoolReleaseThreshold);
  const std::size_t bytes =
      value ? parse_release_threshold(*value).value_or(kPoolDefaultReleaseThreshold)
            : kPoolDefaultReleaseThreshold;
  threshold.store(bytes, std::memory_order_relaxed);
  known.store(true, std::memory_order_release);
  return bytes;
}

CachingPool& pool_for(const Backend* backend, int device, anydev_bk_memory_kind_t kind) {
  const bool caching = pools_enabled();  // outside the lock: may log
  // The pool carves only device memory, and only when it caches.
  const std::uint64_t flags = backend->table->flags;
  const CarveMode carve =
      !carving_enabled()                                     ? CarveMode::kNone
      : (flags & ANYDEV_BK_FLAG_DEVICE_ADDRESS_HANDLES) != 0 ? CarveMode::kAddresses
      : (flags & ANYDEV_BK_FLAG_DEVICE_OBJECT_OFFSETS) != 0  ? CarveMode::kObjectOffsets
                                                             : CarveMode::kNone;
  const std::size_t threshold = default_release_threshold();
  EventPool& events = event_pool_for(backend, device);  // shared with ordering and the reclaimer
  Pools& pools = Pools::instance();
  std::lock_guard lock(pools.mutex);
  if (CachingPool* pool = pools.find_locked(backend, device, kind)) return *pool;
  auto* pool = new CachingPool(backend, device, kind, caching, threshold, &events, carve);
  pools.entries.push_back(Entry{backend, device, kind, pool});
  return *pool;
}

void release_cached_memory(const Backend* backend, int device) {
  std::vector<CachingPool*> found;
  {
    Pools& pools = Pools::instance();
    std::lock_guard lock(pools.mutex);
    for (anydev_bk_memory_kind_t kind : {ANYDEV_BK_MEMORY_HOST, ANYDEV_BK_MEMORY_DEVICE}) {
      if (CachingPool* pool = pools.find_locked(backend, device, kind)) found.push_back(pool);
    }
  }
  for (CachingPool* pool : found) pool->release_cached(false);
}

}  // namespace anydev::core
