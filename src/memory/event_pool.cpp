// SPDX-License-Identifier: Apache-2.0
#include "memory/event_pool.h"

#include <pthread.h>

#include <new>

#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/core_mutex.h"
#include "support/fork_guard.h"

namespace anydev::core {

EventPool::EventPool(const anydev_backend_table_t* table, int device, std::size_t capacity)
    : table_(table), device_(device), capacity_(capacity) {
  idle_.reserve(capacity_);  // give_back never allocates
}

EventPool::~EventPool() {
  for (anydev_bk_event_t event : idle_) bk(table_).event_destroy(event);
}

anydev_status_t EventPool::take(anydev_bk_event_t* out) noexcept {
  *out = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      *out = idle_.back();
      idle_.pop_back();
      return ANYDEV_SUCCESS;
    }
  }
  anydev_bk_event_t event = nullptr;
  const anydev_status_t status = bk(table_).event_create(device_, &event);
  if (status == ANYDEV_SUCCESS) *out = event;
  return status;
}

void EventPool::give_back(anydev_bk_event_t event) noexcept {
  if (event == nullptr) return;
  {
    std::lock_guard lock(mutex_);
    if (idle_.size() < capacity_) {
      idle_.push_back(event);  // within the reserved capacity
      return;
    }
  }
  // The backend allows destroying an event whose work is still pending.
  bk(table_).event_destroy(event);
}

std::size_t EventPool::idle() const {
  std::lock_guard lock(mutex_);
  return idle_.size();
}

namespace {

struct Entry {
  const Backend* backend;
  int device;
  EventPool* pool;  // never destroyed
};

// Never destroyed: releases may arrive during exit.
struct EventPools {
  CoreMutex mutex;
  std::vector<Entry> entries;

  // A ProcessObject, not a guarded static (fork-safe, fork_guard.h); made
  // when the library is loaded (below).
  static EventPools& instance() {
    static ProcessObject<EventPools> pools;
    return pools.get([] { return new EventPools(); },
                     [](EventPools&) {
                       // A forked child must not inherit a locked mutex nor
                       // reuse the parent's events: it forgets every pool
                       // (leaking the objects, whose mutexes may be held by
                       // threads that do not exist in the child).
                       pthread_atfork([] { instance().mutex.lock(); },
                                      [] { instance().mutex.unlock(); },
                                      [] {
                                        EventPools& p = instance();
                                        p.entries.clear();
                                        p.mutex.unlock();
                                      });
                     });
  }
};

// Made when libanydev.so is loaded, before any thread can use it.
[[maybe_unused]] const bool g_event_pools_made_at_load = (EventPools::instance(), true);

}  // namespace

EventPool& event_pool_for(const Backend* backend, int device) {
  EventPools& pools = EventPools::instance();
  std::lock_guard lock(pools.mutex);
  for (const Entry& e : pools.entries) {
    if (e.backend == backend && e.device == device) return *e.pool;
  }
  pools.entries.reserve(pools.entries.size() + 1);  // may throw: nothing changed yet
  auto* pool = new EventPool(backend->table, device);
  pools.entries.push_back(Entry{backend, device, pool});
  return *pool;
}

void give_back_or_destroy(EventPool* events, const anydev_backend_table_t* table,
                          anydev_bk_event_t event) noexcept {
  if (events != nullptr) {
    events->give_back(event);
  } else {
    bk(table).event_destroy(event);
  }
}

bool completed_at_once(const Backend* backend, anydev_bk_event_t event) noexcept {
  if ((backend->flags & ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY) == 0) return false;
  int complete = 0;
  return bk(backend->table).event_query(event, &complete) == ANYDEV_SUCCESS && complete != 0;
}

EventPool* event_pool_or_null(const Backend* backend, int device) noexcept {
  try {
    return &event_pool_for(backend, device);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace anydev::core
