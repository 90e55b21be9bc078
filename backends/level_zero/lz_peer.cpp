// SPDX-License-Identifier: Apache-2.0
// Peer access (zeDeviceCanAccessPeer: devices of one driver share its
// context, and Level Zero has no enable step) and native handles.
#include <cstdint>

#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_objects.h"
#include "lz_share_events.h"
#include "lz_state.h"

namespace anydev::level_zero {

anydev_status_t can_access_peer(int device, int peer, int* can_access) {
  if (can_access == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "can_access_peer: null out");
  }
  if (const anydev_status_t s = check_device(device, "can_access_peer"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (const anydev_status_t s = check_device(peer, "can_access_peer"); s != ANYDEV_SUCCESS)
    return s;
  const DeviceState& a = device_at(device);
  const DeviceState& b = device_at(peer);
  if (device == peer || a.driver != b.driver) {  // another driver: another context
    *can_access = 0;
    return ANYDEV_SUCCESS;
  }
  ze_bool_t value = 0;
  const ze_result_t r = api().zeDeviceCanAccessPeer(a.device, b.device, &value);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDeviceCanAccessPeer",
                          cat("can_access_peer of level_zero devices ", device, " and ", peer));
  }
  *can_access = value != 0 ? 1 : 0;
  return ANYDEV_SUCCESS;
}

anydev_status_t enable_peer_access(int device, int peer) {
  int can = 0;
  if (const anydev_status_t s = can_access_peer(device, peer, &can); s != ANYDEV_SUCCESS) return s;
  if (can == 0) {
    return report_error(ANYDEV_ERROR_UNSUPPORTED,
                        cat("enable_peer_access: level_zero device ", device,
                            " cannot access the memory of device ", peer,
                            " (zeDeviceCanAccessPeer says no, or another driver owns it)"));
  }
  return ANYDEV_SUCCESS;  // nothing to enable: access within a context is implicit
}

anydev_status_t native_handle(int device, int kind, void* object, void** out) {
  if (out == nullptr) return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "native_handle: null out");
  if (const anydev_status_t s = check_device(device, "native_handle"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (kit::native_kind_needs_object(kind) && object == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("native_handle: kind ", kind, " needs an object, got null"));
  }
  const DeviceState& d = device_at(device);
  switch (kind) {
    case ANYDEV_NATIVE_DEVICE:
      *out = d.device;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_CONTEXT:
      *out = d.driver->context;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_STREAM:
      *out = as_stream(static_cast<anydev_bk_stream_t>(object))->list;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_EVENT: {
      // The ze_event_handle_t of the latest record: each record signals a
      // fresh recycled event, so it is valid until the anydev event is
      // recorded again or destroyed.
      LzEvent* event = as_event(static_cast<anydev_bk_event_t>(object));
      if (event->shared != nullptr) {
        // The ring event of the latest record (lz_share_events.cpp).
        *out = shared_event_native(*event);
        if (*out != nullptr) return ANYDEV_SUCCESS;
        return report_error(ANYDEV_ERROR_UNSUPPORTED,
                            "native_handle: an interprocess level_zero event has no native "
                            "event before its first record");
      }
      const std::lock_guard<std::mutex> lock(event->mutex);
      if (event->latest == nullptr) {
        return report_error(ANYDEV_ERROR_UNSUPPORTED,
                            "native_handle: a level_zero event has no native event before its "
                            "first record (each record signals a fresh ze_event_handle_t)");
      }
      *out = event->latest->event;
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_NATIVE_MEMORY:  // USM pointers
      *out = object;
      return ANYDEV_SUCCESS;
    default:
      return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                          cat("native_handle: unknown native kind ", kind));
  }
}

}  // namespace anydev::level_zero
