#include "pool/caching_pool.h"

#include <algorithm>
#include <utility>

#include "host_memory_locks.h"
#include "logging.h"
#include "objects.h"
#include "pool/size_classes.h"
#include "status.h"
#include "stream_ordered_release.h"

namespace anydev::core {
namespace {

// Events kept for reuse per pool; more are destroyed.
constexpr std::size_t kMaxIdleEvents = 32;

bool same_stream(const std::weak_ptr<Stream>& a, const std::shared_ptr<Stream>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

const char* kind_name(anydev_bk_memory_kind_t kind) {
  return kind == ANYDEV_BK_MEMORY_HOST ? "host" : "device";
}

}  // namespace

CachingPool::CachingPool(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                         bool caching)
    : backend_(backend), table_(backend->table), device_(device), kind_(kind), caching_(caching) {}

CachingPool::~CachingPool() {
  release_cached(true);
  for (anydev_bk_event_t event : idle_events_) table_->event_destroy(event);
}

void CachingPool::free_now(void* handle, const char* why) {
  note_host_free(backend_, device_, kind_, handle);
  if (table_->memory_free(device_, kind_, handle) != ANYDEV_SUCCESS) {
    log(ANYDEV_LOG_ERROR, cat(backend_->name, ": pool: memory_free of a cached ", kind_name(kind_),
                              " block (", why, ") failed: ", last_error_message()));
  }
}

anydev_bk_event_t CachingPool::acquire_event() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_events_.empty()) {
      anydev_bk_event_t event = idle_events_.back();
      idle_events_.pop_back();
      return event;
    }
  }
  anydev_bk_event_t event = nullptr;
  if (table_->event_create(device_, &event) != ANYDEV_SUCCESS) return nullptr;
  return event;
}

void CachingPool::recycle_event(anydev_bk_event_t event, bool known_complete) {
  if (event == nullptr) return;
  if (known_complete) {
    std::lock_guard lock(mutex_);
    if (idle_events_.size() < kMaxIdleEvents) {
      idle_events_.push_back(event);
      return;
    }
  }
  // The backend allows destroying an event whose work is still pending.
  table_->event_destroy(event);
}

bool CachingPool::take_cached_locked(std::size_t bytes, const std::shared_ptr<Stream>& stream,
                                     Cached* out, bool* event_done) {
  const auto bucket_it = cached_.find(bytes);
  if (bucket_it == cached_.end() || bucket_it->second.empty()) return false;
  std::vector<Cached>& bucket = bucket_it->second;
  auto take = [&](std::size_t i, bool done) {
    *out = std::move(bucket[i]);
    bucket[i] = std::move(bucket.back());
    bucket.pop_back();
    *event_done = done;
    return true;
  };
  // Newest first, without asking the backend: never used by a stream, or
  // device memory that stays on its owner stream.
  for (std::size_t i = bucket.size(); i-- > 0;) {
    if (bucket[i].event == nullptr) return take(i, true);
    if (kind_ == ANYDEV_BK_MEMORY_DEVICE && same_stream(bucket[i].owner, stream)) {
      return take(i, false);
    }
  }
  // Oldest first (the most likely to be done): a block whose event completed.
  for (std::size_t i = 0; i < bucket.size(); ++i) {
    int complete = 0;
    if (table_->event_query(bucket[i].event, &complete) == ANYDEV_SUCCESS && complete != 0) {
      return take(i, true);
    }
  }
  return false;
}

anydev_status_t CachingPool::backend_allocate(const std::shared_ptr<Stream>& stream,
                                              std::size_t bytes, void** handle, void** address) {
  if (kind_ != ANYDEV_BK_MEMORY_HOST) {
    return table_->device_alloc(device_, bytes, stream->native, handle, address);
  }
  const anydev_status_t s = table_->host_alloc(device_, bytes, handle, address);
  if (s == ANYDEV_SUCCESS) note_host_alloc(backend_, device_, *handle, bytes);
  return s;
}

anydev_status_t CachingPool::allocate(const std::shared_ptr<Stream>& stream, std::size_t bytes,
                                      PoolBlock* out) {
  std::size_t block_bytes = bytes;
  if (caching_) {
    const std::optional<std::size_t> size_class = pool_size_class(bytes);
    if (!size_class) {
      return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                       cat("pool: ", bytes, " bytes cannot be rounded up to a block size"));
    }
    block_bytes = *size_class;
    Cached hit{};
    bool event_done = false;
    bool found = false;
    {
      std::lock_guard lock(mutex_);
      found = take_cached_locked(block_bytes, stream, &hit, &event_done);
      if (found) {
        stats_.bytes_cached -= block_bytes;
        stats_.bytes_in_use += block_bytes;
        stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
        ++stats_.cache_hits;
        ++stats_.allocation_count;
      }
    }
    if (found) {
      recycle_event(hit.event, event_done);
      *out = PoolBlock{this, hit.handle, hit.address, block_bytes};
      return ANYDEV_SUCCESS;
    }
  }
  void* handle = nullptr;
  void* address = nullptr;
  anydev_status_t status = backend_allocate(stream, block_bytes, &handle, &address);
  if (status == ANYDEV_ERROR_OUT_OF_MEMORY && caching_) {
    const std::string first_error = last_error_message();
    const std::size_t released = release_cached(true);
    if (released > 0) {
      log(ANYDEV_LOG_INFO, cat(backend_->name, ':', device_, ": pool: ", kind_name(kind_),
                               " allocation of ", block_bytes, " bytes ran out of memory; freed ",
                               released, " cached bytes and trying once more"));
      status = backend_allocate(stream, block_bytes, &handle, &address);
    } else {
      set_error(status, first_error);
    }
  }
  if (status != ANYDEV_SUCCESS) return status;
  {
    std::lock_guard lock(mutex_);
    stats_.bytes_in_use += block_bytes;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    ++stats_.cache_misses;
    ++stats_.allocation_count;
  }
  *out = PoolBlock{this, handle, address, block_bytes};
  return ANYDEV_SUCCESS;
}

bool CachingPool::give_back(const PoolBlock& block, const std::shared_ptr<Stream>& owner,
                            bool used_by_streams, bool in_use) {
  if (!caching_) {
    if (in_use) forget_in_use(block.bytes);
    return false;
  }
  anydev_bk_event_t event = nullptr;
  if (used_by_streams) {
    event = acquire_event();
    if (event == nullptr || table_->event_record(event, owner->native) != ANYDEV_SUCCESS) {
      log(ANYDEV_LOG_ERROR,
          cat(backend_->name, ": pool: recording the release event of a ", kind_name(kind_),
              " block failed (", last_error_message(), "); freeing it instead of caching it"));
      if (event != nullptr) table_->event_destroy(event);
      if (in_use) forget_in_use(block.bytes);
      return false;
    }
  }
  std::lock_guard lock(mutex_);
  cached_[block.bytes].push_back(Cached{block.handle, block.address, owner, event});
  if (in_use) stats_.bytes_in_use -= block.bytes;
  stats_.bytes_cached += block.bytes;
  return true;
}

void CachingPool::forget_in_use(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  stats_.bytes_in_use -= bytes;
}

std::size_t CachingPool::release_cached(bool wait) {
  std::vector<Cached> blocks;
  std::size_t released = 0;
  {
    std::lock_guard lock(mutex_);
    for (auto& [bytes, bucket] : cached_) {
      for (Cached& block : bucket) blocks.push_back(std::move(block));
      bucket.clear();
    }
    cached_.clear();
    released = stats_.bytes_cached;
    stats_.bytes_cached = 0;
  }
  for (Cached& block : blocks) {
    if (block.event == nullptr) {
      free_now(block.handle, "release");
      continue;
    }
    int complete = 0;
    if (wait) {
      if (table_->event_synchronize(block.event) != ANYDEV_SUCCESS) {
        log(ANYDEV_LOG_ERROR,
            cat(backend_->name, ": pool: event_synchronize failed: ", last_error_message()));
      }
      complete = 1;
    } else if (table_->event_query(block.event, &complete) != ANYDEV_SUCCESS) {
      complete = 0;
    }
    if (complete != 0) {
      free_now(block.handle, "release");
      recycle_event(block.event, true);
    } else {
      // The reclaimer waits for the event, frees the memory and destroys the
      // event, off the caller's thread.
      release_after_event(backend_, device_, block.event, kind_, block.handle);
    }
  }
  return released;
}

PoolStats CachingPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace anydev::core
