// SPDX-License-Identifier: Apache-2.0
#include "memory/pool/caching_pool.h"

#include <algorithm>
#include <new>
#include <utility>

#include "memory/event_pool.h"
#include "memory/host_memory_locks.h"
#include "memory/pool/size_classes.h"
#include "memory/release_event.h"
#include "memory/stream.h"
#include "memory/stream_ordered_release.h"
#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/logging.h"
#include "support/release_log.h"
#include "support/status.h"

namespace anydev::core {
namespace {

const char* kind_name(anydev_bk_memory_kind_t kind) {
  return kind == ANYDEV_BK_MEMORY_HOST ? "host" : "device";
}

}  // namespace

CachingPool::CachingPool(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                         bool caching, std::size_t release_threshold, EventPool* events,
                         CarveMode carve)
    : backend_(backend),
      table_(backend->table),
      device_(device),
      kind_(kind),
      caching_(caching),
      own_events_(events == nullptr ? std::make_unique<EventPool>(backend->table, device)
                                    : nullptr),
      events_(events == nullptr ? *own_events_ : *events),
      carver_(carve != CarveMode::kNone && caching && kind == ANYDEV_BK_MEMORY_DEVICE
                  ? std::make_unique<BlockCarver>(backend, device, events_, carve)
                  : nullptr),
      release_threshold_(release_threshold) {}

CachingPool::~CachingPool() {
  drain_releases();  // lists handed to the reclaimer use this pool
  release_cached(true);
}

void CachingPool::free_now(void* key, const char* why) noexcept {
  if (carver_ != nullptr && carver_->take_back(key)) return;
  note_host_free(backend_, device_, kind_, key);
  if (bk(table_).memory_free(device_, kind_, key) != ANYDEV_SUCCESS) {
    release_log(ANYDEV_LOG_ERROR, backend_->name, ": pool: memory_free of a cached ",
                kind_name(kind_), " block (", why, ") failed: ", last_error_message());
  }
}

void CachingPool::unlink_locked(PoolNode* node) noexcept {
  PoolSizeClass& size_class = *node->size_class;
  (node->event == nullptr ? size_class.ready : size_class.pending).remove(node);
  age_.remove(node);
}

PoolNode* CachingPool::take_cached_locked(PoolSizeClass& size_class,
                                          const std::shared_ptr<Stream>& stream, bool* event_done) {
  auto take = [&](PoolNode* node, bool done) {
    unlink_locked(node);
    *event_done = done;
    return node;
  };
  // Without asking the backend: never used by a stream (newest: warmest)...
  if (!size_class.ready.empty()) return take(size_class.ready.back, true);
  if (size_class.pending.empty()) return nullptr;
  // ... or device memory that stays on its owner stream.
  if (kind_ == ANYDEV_BK_MEMORY_DEVICE && same_stream(size_class.pending.back->owner, stream)) {
    return take(size_class.pending.back, false);
  }
  // Oldest first (the most likely to be done): a block whose event completed.
  // One still running goes to the back, so that a slow stream does not hide
  // the blocks of the others.
  for (int i = 0; i < kQueriesPerRequest && !size_class.pending.empty(); ++i) {
    PoolNode* oldest = size_class.pending.front;
    if (shared_event_complete(oldest->event)) return take(oldest, true);
    if (oldest == size_class.pending.back) break;
    size_class.pending.remove(oldest);
    size_class.pending.push_back(oldest);
  }
  return nullptr;
}

PoolNode* CachingPool::trim_locked(bool with_slack, std::size_t* count) noexcept {
  *count = 0;
  const std::size_t quarter = stats_.bytes_in_use / 4;
  const std::size_t limit =
      release_threshold_ > kPoolNoTrim - quarter ? kPoolNoTrim : release_threshold_ + quarter;
  if (stats_.bytes_cached <= limit) return nullptr;
  // Past the limit: down to an eighth below it, so that the next releases
  // do not trim one block each (see Trimming in caching_pool.h).
  const std::size_t target = with_slack ? limit - limit / kTrimSlackDivisor : limit;
  PoolNode* detached = nullptr;
  PoolNode* last = nullptr;
  while (stats_.bytes_cached > target && age_.front != age_.back) {
    PoolNode* oldest = age_.front;
    unlink_locked(oldest);
    stats_.bytes_cached -= oldest->size_class->bytes;
    (last != nullptr ? last->newer : detached) = oldest;
    last = oldest;
    ++*count;
  }
  return detached;
}

void CachingPool::free_list(PoolNode* list) noexcept {
  // First the blocks no stream uses any more, so that one busy block does
  // not hold back the others; then the rest, each after its event.
  PoolNode* busy = nullptr;
  PoolNode* busy_last = nullptr;
  for (int pass = 0; pass < 2; ++pass) {
    while (list != nullptr) {
      PoolNode* node = list;
      list = node->newer;
      if (node->event != nullptr) {
        if (pass == 0) {
          if (!shared_event_complete(node->event)) {
            node->newer = nullptr;
            (busy_last != nullptr ? busy_last->newer : busy) = node;
            busy_last = node;
            continue;
          }
        } else if (!shared_event_wait(node->event)) {
          release_log(ANYDEV_LOG_ERROR, backend_->name,
                      ": pool: event_synchronize failed: ", last_error_message());
        }
        shared_event_unref(node->event);  // destroyed, not reused, by its last holder if it failed
      }
      free_now(return_key(node->handle, node->address), "release");
      recycle_node(node);
    }
    list = busy;
  }
}

PoolNode* CachingPool::new_node_locked() noexcept {
  if (spare_nodes_ == nullptr) {
    constexpr std::size_t kChunk = 64;
    std::unique_ptr<PoolNode[]> chunk(new (std::nothrow) PoolNode[kChunk]);
    if (chunk == nullptr) return nullptr;
    try {
      node_chunks_.push_back(std::move(chunk));
    } catch (...) {
      return nullptr;  // nothing changed
    }
    PoolNode* nodes = node_chunks_.back().get();
    for (std::size_t i = 0; i < kChunk; ++i) {
      nodes[i].newer = spare_nodes_;
      spare_nodes_ = &nodes[i];
    }
  }
  PoolNode* node = spare_nodes_;
  spare_nodes_ = node->newer;
  node->newer = nullptr;
  return node;
}

void CachingPool::clear_node(PoolNode* node) noexcept {
  node->owner.reset();
  node->event = nullptr;
  node->handle = nullptr;
  node->address = nullptr;
  node->prev = node->next = node->older = nullptr;
}

void CachingPool::recycle_node(PoolNode* node) noexcept {
  if (node == nullptr) return;
  clear_node(node);
  std::lock_guard lock(mutex_);
  node->newer = spare_nodes_;
  spare_nodes_ = node;
}

void CachingPool::hand_to_reclaimer(PoolNode* list, std::size_t count) noexcept {
  // Each block is a release of its own: the reclaimer frees it once its own
  // event has completed (polled, stream_ordered_release.h), so a block that a
  // slow stream still uses holds up no other release. The event goes back to
  // the event pool afterwards; the node is the pool's again at once. The
  // blocks go over as one batch (one request, at most one wake-up); when
  // there is no memory for the batch, one request each.
  // release_after_event(s) never throw: without memory or a thread they
  // free on this thread instead.
  if (list == nullptr) return;
  std::vector<EventRelease> batch;
  try {
    if (count == 0) {
      for (PoolNode* node = list; node != nullptr; node = node->newer) ++count;
    }
    batch.reserve(count);
  } catch (const std::bad_alloc&) {
    while (list != nullptr) {
      PoolNode* node = list;
      list = node->newer;
      release_after_shared_event(backend_, device_, node->event, kind_,
                                 return_key(node->handle, node->address), node->size_class->bytes,
                                 &waiting_, carver_.get());
      recycle_node(node);
    }
    return;
  }
  PoolNode* last = nullptr;
  for (PoolNode* node = list; node != nullptr; node = node->newer) {
    batch.push_back(EventRelease{nullptr, return_key(node->handle, node->address),
                                 node->size_class->bytes, node->event});
    clear_node(node);  // keeps `newer`: the list joins the spares below
    last = node;
  }
  release_after_events(backend_, device_, kind_, std::move(batch), &events_, &waiting_,
                       carver_.get());
  std::lock_guard lock(mutex_);
  last->newer = spare_nodes_;  // the list, linked through `newer`, joins the spares
  spare_nodes_ = list;
}

anydev_status_t CachingPool::backend_allocate(const std::shared_ptr<Stream>& stream,
                                              std::size_t bytes, void** handle, void** address) {
  if (kind_ != ANYDEV_BK_MEMORY_HOST) {
    if (carver_ != nullptr && BlockCarver::carves(bytes)) {
      // Where no 2 MiB segment fits any more, the block alone may still
      // fit: a driver allocation of its own (the carver does not know it,
      // so it is freed with memory_free as usual).
      const anydev_status_t s = carver_->allocate(stream, bytes, handle, address);
      if (s != ANYDEV_ERROR_OUT_OF_MEMORY) return s;
    }
    return bk(table_).device_alloc(device_, bytes, stream->native, handle, address);
  }
  const anydev_status_t s = bk(table_).host_alloc(device_, bytes, handle, address);
  if (s == ANYDEV_SUCCESS) note_host_alloc(backend_, device_, *handle, bytes);
  return s;
}

anydev_status_t CachingPool::allocate(const std::shared_ptr<Stream>& stream, std::size_t bytes,
                                      PoolBlock* out) {
  if (bytes > kPoolLargestRequest) {
    return set_error(
        ANYDEV_ERROR_OUT_OF_MEMORY,
        cat("no ", kind_name(kind_), " memory can hold a request of ", bytes,
            " bytes (more than half the address space, ", kPoolLargestRequest, " bytes at most)"));
  }
  std::size_t block_bytes = bytes;
  PoolSizeClass* size_class = nullptr;
  if (caching_) {
    block_bytes = *pool_size_class(bytes);  // cannot overflow below kPoolLargestRequest
    bool event_done = false;
    PoolBlock cached{this, nullptr, nullptr, block_bytes, nullptr};
    SharedEvent* event = nullptr;
    std::weak_ptr<Stream> owner;  // reset outside the lock
    {
      std::lock_guard lock(mutex_);
      const auto [entry, added] = classes_.try_emplace(block_bytes);
      size_class = &entry->second;
      if (added) size_class->bytes = block_bytes;  // never written again: read unlocked
      if (PoolNode* node = take_cached_locked(*size_class, stream, &event_done)) {
        stats_.bytes_cached -= block_bytes;
        stats_.bytes_in_use += block_bytes;
        stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
        ++stats_.cache_hits;
        ++stats_.allocation_count;
        // The block in use needs no node: it goes back to the spares.
        cached = PoolBlock{this, node->handle, node->address, block_bytes, size_class};
        event = node->event;
        owner.swap(node->owner);
        node->event = nullptr;
        node->handle = node->address = nullptr;
        node->prev = node->next = node->older = nullptr;
        node->newer = spare_nodes_;
        spare_nodes_ = node;
      }
    }
    if (cached.size_class != nullptr) {
      shared_event_unref(event);
      *out = cached;
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
  *out = PoolBlock{this, handle, address, block_bytes, size_class};
  return ANYDEV_SUCCESS;
}

bool CachingPool::give_back(const PoolBlock& block, const std::shared_ptr<Stream>& owner,
                            bool used_by_streams, bool in_use,
                            std::optional<std::uint16_t> use_epoch) noexcept {
  if (!caching_ || block.size_class == nullptr) {
    if (in_use) forget_in_use(block.bytes);
    return false;
  }
  // Null when the stream's release event has already been seen complete:
  // cached as ready (see Cost).
  SharedEvent* event = nullptr;
  if (used_by_streams &&
      owner->release.event_for_release(backend_, owner->device, owner->native,
                                       owner->events != nullptr ? owner->events : shared_events(),
                                       use_epoch, &event) != ANYDEV_SUCCESS) {
    release_log(ANYDEV_LOG_ERROR, backend_->name, ": pool: recording the release event of a ",
                kind_name(kind_), " block failed (", last_error_message(),
                "); freeing it instead of caching it");
    if (in_use) forget_in_use(block.bytes);
    return return_carved_now(block, owner);
  }
  PoolNode* trimmed = nullptr;
  std::size_t trimmed_count = 0;
  PoolNode* node = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (in_use) stats_.bytes_in_use -= block.bytes;
    node = new_node_locked();  // a spare, or a new chunk of them (nothrow)
    if (node != nullptr) {
      node->size_class = block.size_class;
      node->handle = block.handle;
      node->address = block.address;
      node->owner = owner;
      node->event = event;
      (event == nullptr ? block.size_class->ready : block.size_class->pending).push_back(node);
      age_.push_back(node);
      stats_.bytes_cached += block.bytes;
      trimmed = trim_locked(/*with_slack=*/true, &trimmed_count);
    }
  }
  if (node == nullptr) {
    release_log(ANYDEV_LOG_ERROR, backend_->name,
                ": pool: no memory for the bookkeeping of a cached ", kind_name(kind_),
                " block of ", block.bytes, " bytes; freeing it instead");
    shared_event_unref(event);
    return return_carved_now(block, owner);
  }
  hand_to_reclaimer(trimmed, trimmed_count);
  return true;
}

bool CachingPool::return_carved_now(const PoolBlock& block,
                                    const std::shared_ptr<Stream>& owner) noexcept {
  void* const key = return_key(block.handle, block.address);
  // A block of a carved size that is a driver allocation of its own (no
  // segment had room) is freed as usual: no wait here.
  if (carver_ == nullptr || !BlockCarver::carves(block.bytes) || !carver_->holds(key)) {
    return false;
  }
  // The owner stream's work covers every use of the block (give_back).
  wait_for_owner(owner, "taking back a carved block", block.bytes);
  return carver_->take_back(key);
}

void CachingPool::wait_for_owner(const std::shared_ptr<Stream>& owner, const char* before,
                                 std::size_t bytes) noexcept {
  if (bk(table_).stream_synchronize(owner->native) != ANYDEV_SUCCESS) {
    release_log(ANYDEV_LOG_ERROR, backend_->name, ": pool: stream_synchronize before ", before,
                " of ", bytes, " bytes failed: ", last_error_message());
  }
}

void CachingPool::return_unused(const PoolBlock& block,
                                const std::shared_ptr<Stream>& owner) noexcept {
  // Device memory is allocated in order on `owner`: the release event covers it.
  if (give_back(block, owner, /*used_by_streams=*/true, /*in_use=*/true)) return;
  wait_for_owner(owner, "freeing an unused block", block.bytes);
  free_now(return_key(block.handle, block.address), "unused");
}

void CachingPool::forget_in_use(std::size_t bytes) noexcept {
  std::lock_guard lock(mutex_);
  stats_.bytes_in_use -= bytes;
}

std::size_t CachingPool::release_cached(bool wait) noexcept {
  PoolNode* list = nullptr;
  std::size_t released = 0;
  {
    std::lock_guard lock(mutex_);
    // The age list holds every cached block: detach it whole (linked
    // through `newer`) and empty the class lists.
    list = age_.front;
    age_ = PoolAgeList{};
    for (auto& [bytes, size_class] : classes_) {
      size_class.ready = PoolClassList{};
      size_class.pending = PoolClassList{};
    }
    released = stats_.bytes_cached;
    stats_.bytes_cached = 0;
  }
  if (wait) {
    free_list(list);
  } else {
    hand_to_reclaimer(list, 0);
  }
  return released;
}

void CachingPool::set_release_threshold(std::size_t bytes) noexcept {
  PoolNode* trimmed = nullptr;
  std::size_t count = 0;
  {
    std::lock_guard lock(mutex_);
    release_threshold_ = bytes;
    trimmed = trim_locked(/*with_slack=*/false, &count);
  }
  hand_to_reclaimer(trimmed, count);
}

std::size_t CachingPool::release_threshold() const noexcept {
  std::lock_guard lock(mutex_);
  return release_threshold_;
}

PoolStats CachingPool::stats() const {
  PoolStats stats;
  {
    std::lock_guard lock(mutex_);
    stats = stats_;
  }
  stats.bytes_waiting = waiting_.bytes.load(std::memory_order_relaxed);
  stats.blocks_waiting = waiting_.blocks.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace anydev::core
