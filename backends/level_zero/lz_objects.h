// SPDX-License-Identifier: Apache-2.0
// The objects behind the backend's opaque stream and event tokens.
//
// The core owns each one from creation until it hands it back to
// stream_destroy / event_destroy, which delete it. `device` and `list` never
// change; the rest is guarded by the object's mutex: Level Zero command lists
// are not thread-safe, and the core may call entries on one stream from
// several threads.
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_OBJECTS_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_OBJECTS_H_

#include <level_zero/ze_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "anydev/backend.h"
#include "lz_event_slots.h"

namespace anydev::level_zero {

// An immediate command list on one device (lz_streams.cpp says why
// immediate): in order by creation (`in_order`, API 1.7+) or kept in order
// with barriers. `held`: what commands appended since the list's last signal
// still use (slots waited on, staging memory, fill patterns); the next signal
// takes them into its slot, which keeps them until it is recycled.
struct LzStream {
  int device = 0;
  ze_command_list_handle_t list = nullptr;
  bool in_order = false;  // created with ZE_COMMAND_QUEUE_FLAG_IN_ORDER
  std::mutex mutex;
  std::vector<std::shared_ptr<void>> held;
};

struct SharedEvent;  // lz_share_events.cpp

// An anydev event: the slot of its latest record (null: never recorded,
// hence complete). An interprocess event (event_create_shareable,
// event_import) has `shared` instead and never uses `latest`; streams that
// recorded or waited on it share its ownership until those commands ran.
struct LzEvent {
  int device = 0;
  bool timing = false;  // records signal kernel-timestamp slots (lz_timing.cpp)
  std::mutex mutex;
  SlotRef latest;
  std::shared_ptr<SharedEvent> shared;
};

inline LzStream* as_stream(anydev_bk_stream_t s) { return reinterpret_cast<LzStream*>(s); }
inline LzEvent* as_event(anydev_bk_event_t e) { return reinterpret_cast<LzEvent*>(e); }
inline anydev_bk_stream_t to_token(LzStream* s) { return reinterpret_cast<anydev_bk_stream_t>(s); }
inline anydev_bk_event_t to_token(LzEvent* e) { return reinterpret_cast<anydev_bk_event_t>(e); }

// With the stream's mutex held: appends a barrier that signals a fresh slot
// once everything before it ran, moving the stream's `held` into the slot.
// `from`: the slots to take it from (null: the driver's host-visible ones).
anydev_status_t signal_locked(LzStream& stream, const char* operation, SlotRef* out,
                              EventSlots* from = nullptr);
// stream_create at a ze_command_queue_priority_t.
anydev_status_t create_stream_at(int device, ze_command_queue_priority_t priority,
                                 const char* operation, anydev_bk_stream_t* out);
// With the stream's mutex held: makes later commands start only after the
// ones appended so far completed. Nothing to do on an in-order list; on any
// other, a barrier: a command list orders nothing by itself, and without one
// two commands of the list may run concurrently or in any order.
ze_result_t order_locked(LzStream& stream);
// With the stream's mutex held: keeps `what` alive until the commands
// appended so far ran. Past a bound it appends a signal so that `held`
// never grows without limit on a stream that is never synchronized.
void hold_locked(LzStream& stream, std::shared_ptr<void> what);
// Waits for everything appended to the stream so far (not holding its mutex
// while it waits).
anydev_status_t drain(LzStream& stream, const char* operation);

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_OBJECTS_H_
