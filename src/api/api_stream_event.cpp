// SPDX-License-Identifier: Apache-2.0
// C entry points: streams and events.
#include "anydev/anydev.h"
#include "api/api_common.h"
#include "api/capture.h"
#include "api/event_timing.h"
#include "support/backend_calls.h"

using namespace anydev::core;

namespace {

#define ANYDEV_CHECK_HANDLE(op, handle, what)                                               \
  do {                                                                                      \
    ANYDEV_REQUIRE_ARG(op, handle);                                                         \
    if (anydev_status_t s_ = check_fork(op, handle, what); s_ != ANYDEV_SUCCESS) return s_; \
  } while (0)

anydev_status_t same_device(const char* op, const Stream& stream, const anydev_event_s& event) {
  if (stream.backend != event.backend || stream.device != event.device) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the event belongs to ",
                describe_device(event.backend, event.device), " but the stream to ",
                describe_device(stream.backend, stream.device));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace

extern "C" {

anydev_status_t anydev_stream_retain(anydev_stream_t stream) {
  return retain_handle("anydev_stream_retain", stream);
}

anydev_status_t anydev_stream_release(anydev_stream_t stream) {
  return release_handle("anydev_stream_release", stream);
}

anydev_status_t anydev_stream_synchronize(anydev_stream_t stream) {
  static constexpr const char* op = "anydev_stream_synchronize";
  ANYDEV_CHECK_HANDLE(op, stream, "stream");
  Stream& s = *stream->stream;
  if (anydev_status_t st = check_not_capturing(op, s, "synchronizing it"); st != ANYDEV_SUCCESS) {
    return st;
  }
  return bk(s.backend->table).stream_synchronize(s.native);
}

anydev_status_t anydev_stream_record_event(anydev_stream_t stream, anydev_event_t event) {
  static constexpr const char* op = "anydev_stream_record_event";
  ANYDEV_CHECK_HANDLE(op, stream, "stream");
  ANYDEV_CHECK_HANDLE(op, event, "event");
  Stream& s = *stream->stream;
  if (anydev_status_t st = same_device(op, s, *event); st != ANYDEV_SUCCESS) return st;
  if (anydev_status_t st = check_not_capturing(op, s, "recording an event on it");
      st != ANYDEV_SUCCESS) {
    return st;
  }
  const anydev_status_t st = bk(s.backend->table).event_record(event->native, s.native);
  if (st == ANYDEV_SUCCESS && event->flags != 0 &&
      !event->recorded.load(std::memory_order_relaxed)) {
    event->recorded.store(true, std::memory_order_release);
  }
  return st;
}

anydev_status_t anydev_stream_wait_event(anydev_stream_t stream, anydev_event_t event) {
  static constexpr const char* op = "anydev_stream_wait_event";
  ANYDEV_CHECK_HANDLE(op, stream, "stream");
  ANYDEV_CHECK_HANDLE(op, event, "event");
  Stream& s = *stream->stream;
  if (anydev_status_t st = check_not_capturing(op, s, "waiting for an event on it");
      st != ANYDEV_SUCCESS) {
    return st;
  }
  if (s.backend != event->backend) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "a stream of backend ", s.backend->name,
                " cannot wait for an event of backend ", event->backend->name);
  }
  return bk(s.backend->table).stream_wait_event(s.native, event->native);
}

anydev_status_t anydev_stream_native_handle(anydev_stream_t stream, void** out) {
  static constexpr const char* op = "anydev_stream_native_handle";
  ANYDEV_CHECK_HANDLE(op, stream, "stream");
  ANYDEV_REQUIRE_ARG(op, out);
  const Stream& s = *stream->stream;
  if (s.backend->table->native_handle == nullptr) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", s.backend->name,
                " backend has no native handles");
  }
  return bk(s.backend->table).native_handle(s.device, ANYDEV_NATIVE_STREAM, s.native, out);
}

anydev_status_t anydev_event_retain(anydev_event_t event) {
  return retain_handle("anydev_event_retain", event);
}

anydev_status_t anydev_event_release(anydev_event_t event) {
  return release_handle("anydev_event_release", event, [](anydev_event_t e) {
    if (e->fork_generation == fork_generation()) bk(e->backend->table).event_destroy(e->native);
  });
}

anydev_status_t anydev_event_synchronize(anydev_event_t event) {
  static constexpr const char* op = "anydev_event_synchronize";
  ANYDEV_CHECK_HANDLE(op, event, "event");
  if (event->emulated_blocking_sync) return synchronize_by_polling(*event);
  return bk(event->backend->table).event_synchronize(event->native);
}

anydev_status_t anydev_event_query(anydev_event_t event, int* complete) {
  static constexpr const char* op = "anydev_event_query";
  ANYDEV_CHECK_HANDLE(op, event, "event");
  ANYDEV_REQUIRE_ARG(op, complete);
  int done = 0;
  if (anydev_status_t s = bk(event->backend->table).event_query(event->native, &done);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *complete = done ? 1 : 0;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_event_native_handle(anydev_event_t event, void** out) {
  static constexpr const char* op = "anydev_event_native_handle";
  ANYDEV_CHECK_HANDLE(op, event, "event");
  ANYDEV_REQUIRE_ARG(op, out);
  if (event->backend->table->native_handle == nullptr) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", event->backend->name,
                " backend has no native handles");
  }
  return bk(event->backend->table)
      .native_handle(event->device, ANYDEV_NATIVE_EVENT, event->native, out);
}

}  // extern "C"
