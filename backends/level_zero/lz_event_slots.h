// SPDX-License-Identifier: Apache-2.0
// Host-visible Level Zero events, recycled: every anydev event record, stream
// synchronize and cross-stream wait uses one slot (a ze_event_handle_t) of a
// context's event pools.
//
// A slot is shared (SlotRef): the anydev event whose latest record it is, and
// every stream that appended a wait on it, hold it. When the last reference
// goes it is retired, not reused at once: a retired slot is reset and handed
// out again only once zeEventQueryStatus says it signaled (the work it
// tracks is done), so a reset never races its own signal. An acquire
// queries at most kQueriesPerAcquire of the oldest retired slots (one not
// signaled yet goes to the back, so a slow stream hides no other slot), so
// it costs the same however many slots are retired, and there may be as
// many as the core's pool has cached blocks (an event each). A slot's `holds`
// (what the commands before its signal still use: waited-on slots, staging
// memory, fill patterns) are released when the slot is recycled.
//
// EventSlots belongs to its DriverState and lives for the process; its pools
// are never destroyed. acquire and the retiring deleter are thread-safe (one
// mutex); holds are released outside it.
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_EVENT_SLOTS_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_EVENT_SLOTS_H_

#include <level_zero/ze_api.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "anydev/backend.h"
#include "lz_symbols.h"

namespace anydev::level_zero {

struct EventSlot {
  ze_event_handle_t event = nullptr;
  std::vector<std::shared_ptr<void>> holds;
};
using SlotRef = std::shared_ptr<EventSlot>;

class EventSlots {
 public:
  // Events per ze_event_pool_handle_t created when no slot is free.
  static constexpr std::uint32_t kPoolSize = 64;
  // Retired slots an acquire asks zeEventQueryStatus about, at most.
  static constexpr int kQueriesPerAcquire = 4;

  // `ze` is the process's loader table, which outlives every EventSlots.
  // `pool_flags`: ZE_EVENT_POOL_FLAG_HOST_VISIBLE, plus
  // ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP for the slots of timing events.
  EventSlots(const LoaderApi& ze, ze_context_handle_t context,
             ze_event_pool_flags_t pool_flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE)
      : ze_(ze), context_(context), pool_flags_(pool_flags) {}
  EventSlots(const EventSlots&) = delete;
  EventSlots& operator=(const EventSlots&) = delete;

  // A reset event, or an error reported that names `operation`.
  anydev_status_t acquire(const char* operation, SlotRef* out);
  // Slots created so far (each pool adds kPoolSize).
  std::size_t created() const;

 private:
  SlotRef wrap(EventSlot* slot);
  anydev_status_t grow(const char* operation);  // with mutex_ held

  const LoaderApi& ze_;
  const ze_context_handle_t context_;
  const ze_event_pool_flags_t pool_flags_;
  mutable std::mutex mutex_;
  std::vector<EventSlot*> free_;    // reset and unreferenced
  std::deque<EventSlot*> retired_;  // unreferenced, maybe not yet signaled; oldest first
  std::vector<ze_event_pool_handle_t> pools_;
  std::vector<std::unique_ptr<EventSlot>> slots_;
};

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_EVENT_SLOTS_H_
