// SPDX-License-Identifier: Apache-2.0
// The core's side of timed events (api_timing.cpp): the synchronize it runs
// for an event whose backend declined ANYDEV_EVENT_BLOCKING_SYNC. Stateless,
// thread-safe.
#ifndef ANYDEV_SRC_API_EVENT_TIMING_H_
#define ANYDEV_SRC_API_EVENT_TIMING_H_

#include "api/objects.h"

namespace anydev::core {

// Waits for `event` by querying it with sleeps in between (growing from
// 20 us to 1 ms), so the caller sleeps in the OS rather than spinning.
anydev_status_t synchronize_by_polling(const anydev_event_s& event);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_EVENT_TIMING_H_
