// SPDX-License-Identifier: Apache-2.0
#include "lz_event_slots.h"

#include <utility>

#include "lz_errors.h"

namespace anydev::level_zero {

SlotRef EventSlots::wrap(EventSlot* slot) {
  return SlotRef(slot, [this](EventSlot* s) {
    const std::lock_guard<std::mutex> lock(mutex_);
    retired_.push_back(s);
  });
}

anydev_status_t EventSlots::grow(const char* operation) {
  const LoaderApi& ze = ze_;
  ze_event_pool_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  desc.flags = pool_flags_;
  desc.count = kPoolSize;
  ze_event_pool_handle_t pool = nullptr;
  ze_result_t r = ze.zeEventPoolCreate(context_, &desc, 0, nullptr, &pool);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeEventPoolCreate",
                          cat(operation, " (a pool of ", kPoolSize, " host-visible events)"));
  }
  pools_.push_back(pool);  // never destroyed: events of it may be in use until exit
  for (std::uint32_t i = 0; i < kPoolSize; ++i) {
    ze_event_desc_t event_desc = {};
    event_desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
    event_desc.index = i;
    event_desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    event_desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    auto slot = std::make_unique<EventSlot>();
    if ((r = ze.zeEventCreate(pool, &event_desc, &slot->event)) != ZE_RESULT_SUCCESS) {
      return report_failure(r, "zeEventCreate", cat(operation, " (event ", i, " of a new pool)"));
    }
    free_.push_back(slot.get());
    slots_.push_back(std::move(slot));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t EventSlots::acquire(const char* operation, SlotRef* out) {
  const LoaderApi& ze = ze_;
  std::vector<std::shared_ptr<void>> released;  // dropped after the lock
  EventSlot* slot = nullptr;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (int q = 0; free_.empty() && q < kQueriesPerAcquire && !retired_.empty(); ++q) {
      EventSlot* candidate = retired_.front();
      if (ze.zeEventQueryStatus(candidate->event) != ZE_RESULT_SUCCESS) {
        if (retired_.size() == 1) break;
        retired_.push_back(candidate);  // first: nothing changes if it throws
        retired_.pop_front();
        continue;
      }
      const ze_result_t r = ze.zeEventHostReset(candidate->event);
      if (r != ZE_RESULT_SUCCESS) {
        return report_failure(r, "zeEventHostReset", cat(operation, " (recycling an event)"));
      }
      retired_.pop_front();
      released = std::move(candidate->holds);
      candidate->holds.clear();
      slot = candidate;
      break;
    }
    if (slot == nullptr) {
      if (free_.empty()) {
        if (const anydev_status_t s = grow(operation); s != ANYDEV_SUCCESS) return s;
      }
      slot = free_.back();
      free_.pop_back();
    }
  }
  *out = wrap(slot);
  return ANYDEV_SUCCESS;
}

std::size_t EventSlots::created() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return slots_.size();
}

}  // namespace anydev::level_zero
