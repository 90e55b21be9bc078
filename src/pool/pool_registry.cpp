#include "pool/pool_registry.h"

#include <pthread.h>

#include <charconv>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "environment.h"
#include "logging.h"
#include "status.h"

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
  std::mutex mutex;
  std::vector<Entry> entries;

  static Pools& instance() {
    static Pools* pools = [] {
      auto* created = new Pools();
      // A forked child must not inherit a locked mutex nor use the parent's
      // cached memory: it forgets every pool (leaking the objects, whose
      // mutexes may be held by threads that do not exist in the child).
      pthread_atfork([] { instance().mutex.lock(); }, [] { instance().mutex.unlock(); },
                     [] {
                       Pools& p = instance();
                       p.entries.clear();
                       p.mutex.unlock();
                     });
      return created;
    }();
    return *pools;
  }

  CachingPool* find_locked(const Backend* backend, int device, anydev_bk_memory_kind_t kind) {
    for (const Entry& e : entries) {
      if (e.backend == backend && e.device == device && e.kind == kind) return e.pool;
    }
    return nullptr;
  }
};

}  // namespace

std::optional<bool> parse_pool_setting(std::string_view value) noexcept {
  if (value == "1") return true;
  if (value == "0") return false;
  return std::nullopt;
}

bool pools_enabled() {
  static const bool enabled = [] {
    const std::optional<std::string> value = env(kEnvPool);
    if (!value) return true;
    if (const std::optional<bool> parsed = parse_pool_setting(*value)) return *parsed;
    log(ANYDEV_LOG_ERROR,
        cat("ANYDEV_POOL=\"", *value, "\" is not 0 or 1; the memory pools stay on (the default)"));
    return true;
  }();
  return enabled;
}

std::optional<std::size_t> parse_release_threshold(std::string_view value) noexcept {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  std::size_t bytes = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), bytes);
  if (error != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return bytes;
}

std::size_t default_release_threshold() {
  static const std::size_t threshold = [] {
    const std::optional<std::string> value = env(kEnvPoolReleaseThreshold);
    if (!value) return kPoolDefaultReleaseThreshold;
    if (const std::optional<std::size_t> parsed = parse_release_threshold(*value)) return *parsed;
    log(ANYDEV_LOG_ERROR,
        cat(kEnvPoolReleaseThreshold, "=\"", *value,
            "\" is not a number of bytes (decimal digits, at most ",
            std::numeric_limits<std::size_t>::max(), "); the pools keep the default of ",
            kPoolDefaultReleaseThreshold, " bytes"));
    return kPoolDefaultReleaseThreshold;
  }();
  return threshold;
}

CachingPool& pool_for(const Backend* backend, int device, anydev_bk_memory_kind_t kind) {
  const bool caching = pools_enabled();  // outside the lock: may log
  const std::size_t threshold = default_release_threshold();
  Pools& pools = Pools::instance();
  std::lock_guard lock(pools.mutex);
  if (CachingPool* pool = pools.find_locked(backend, device, kind)) return *pool;
  auto* pool = new CachingPool(backend, device, kind, caching, threshold);
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
