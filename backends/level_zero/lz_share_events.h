// SPDX-License-Identifier: Apache-2.0
// The interprocess side of a level_zero event (lz_share_events.cpp): what
// event_record, event_query, event_synchronize, stream_wait_event and
// native_handle do when the LzEvent has `shared`. Each is thread-safe (the
// SharedEvent's mutex, the stream's mutex) and reports its errors.
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_SHARE_EVENTS_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_SHARE_EVENTS_H_

#include <level_zero/ze_api.h>

#include "anydev/backend.h"
#include "lz_objects.h"

namespace anydev::level_zero {

// UNSUPPORTED (reported, naming `what` and `flag_name`) unless the driver of
// `device` reports `flag` in zeDriverGetIpcProperties; the caller has
// checked that the loader has the call.
anydev_status_t require_driver_ipc(int device, const char* op, ze_ipc_property_flags_t flag,
                                   const char* what, const char* flag_name);
anydev_status_t shared_event_record(LzEvent& event, LzStream& stream);
anydev_status_t shared_event_query(const LzEvent& event, int* complete);
anydev_status_t shared_event_synchronize(const LzEvent& event);
anydev_status_t shared_stream_wait(LzStream& stream, const LzEvent& event);
// The ze event of the latest record, or null before the first.
ze_event_handle_t shared_event_native(const LzEvent& event);

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_SHARE_EVENTS_H_
