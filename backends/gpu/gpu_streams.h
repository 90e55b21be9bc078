// SPDX-License-Identifier: Apache-2.0
// Streams (non-blocking native streams, owned or wrapped) and events (without
// timing): the stream_* and event_* entries of a GPU backend. Each follows
// the contract backend.h states for the entry of the same name; thread-safe.
#ifndef ANYDEV_BACKENDS_GPU_GPU_STREAMS_H_
#define ANYDEV_BACKENDS_GPU_GPU_STREAMS_H_

#include <algorithm>
#include <chrono>
#include <new>
#include <thread>

#include "gpu_objects.h"
#include "gpu_share_page.h"
#include "gpu_state.h"

namespace anydev::gpu {

template <class Api>
anydev_status_t stream_create(int device, anydev_bk_stream_t* out) {
  using names = typename Api::driver_t::names;
  if (out == nullptr) return null_argument<Api>("stream_create", "out");
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "stream_create"); s != ANYDEV_SUCCESS) return s;
  typename Api::stream_t native{};
  const auto r = driver<Api>().StreamCreate(&native, Api::kStreamFlags);
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, names::StreamCreate,
                               cat("stream_create on ", Api::kName, " device ", device));
  }
  auto* stream = new (std::nothrow) Stream<Api>{device, native, true};
  if (stream == nullptr) {
    static_cast<void>(driver<Api>().StreamDestroy(native));  // nothing to report it to
    return report_error<Api>(ANYDEV_ERROR_OUT_OF_MEMORY, "stream_create: out of host memory");
  }
  *out = to_token(stream);
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t stream_wrap_native(int device, void* native_stream, anydev_bk_stream_t* out) {
  if (out == nullptr) return null_argument<Api>("stream_wrap_native", "out");
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "stream_wrap_native"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const auto native = static_cast<typename Api::stream_t>(native_stream);
  if (const anydev_status_t s = Api::check_wrapped_stream(device, native); s != ANYDEV_SUCCESS) {
    return s;
  }
  auto* stream = new (std::nothrow) Stream<Api>{device, native, false};
  if (stream == nullptr) {
    return report_error<Api>(ANYDEV_ERROR_OUT_OF_MEMORY, "stream_wrap_native: out of host memory");
  }
  *out = to_token(stream);
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t stream_destroy(anydev_bk_stream_t token) {
  using names = typename Api::driver_t::names;
  Stream<Api>* stream = as_stream<Api>(token);
  if (stream == nullptr) return null_argument<Api>("stream_destroy", "stream");
  if (!stream->owned) {
    // A wrapped stream belongs to the caller, who may destroy it as soon as
    // the anydev context over it is released (the release reaches here later,
    // from the reclaimer): never touch the native stream again. The core
    // ordered every release on it with events, so nothing waits for it here.
    delete stream;
    return ANYDEV_SUCCESS;
  }
  typename Api::scope scope;
  anydev_status_t status = scope.enter(stream->device, "stream_destroy");
  if (status == ANYDEV_SUCCESS) {
    const auto& drv = driver<Api>();
    const std::string what = cat("stream_destroy on ", Api::kName, " device ", stream->device);
    auto r = drv.StreamSynchronize(stream->native);
    if (r != Api::kSuccess) status = report_failure<Api>(r, names::StreamSynchronize, what);
    if ((r = drv.StreamDestroy(stream->native)) != Api::kSuccess && status == ANYDEV_SUCCESS) {
      status = report_failure<Api>(r, names::StreamDestroy, what);
    }
  }
  delete stream;
  return status;
}

template <class Api>
anydev_status_t stream_synchronize(anydev_bk_stream_t token) {
  const Stream<Api>* stream = as_stream<Api>(token);
  if (stream == nullptr) return null_argument<Api>("stream_synchronize", "stream");
  const auto r = call_on_stream<Api>(
      stream->device, Api::names_its_device(stream->native), "stream_synchronize",
      [stream] { return driver<Api>().StreamSynchronize(stream->native); });
  if (r != Api::kSuccess) {
    return report_failure<Api>(
        r, Api::driver_t::names::StreamSynchronize,
        cat("synchronize of a stream on ", Api::kName, " device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t event_create(int device, anydev_bk_event_t* out) {
  using names = typename Api::driver_t::names;
  if (out == nullptr) return null_argument<Api>("event_create", "out");
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "event_create"); s != ANYDEV_SUCCESS) return s;
  typename Api::event_t native{};
  const auto r = driver<Api>().EventCreate(&native, Api::kEventFlags);
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, names::EventCreate,
                               cat("event_create on ", Api::kName, " device ", device));
  }
  auto* event = new (std::nothrow) Event<Api>{device, native};
  if (event == nullptr) {
    static_cast<void>(driver<Api>().EventDestroy(native));  // nothing to report it to
    return report_error<Api>(ANYDEV_ERROR_OUT_OF_MEMORY, "event_create: out of host memory");
  }
  *out = to_token(event);
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t event_destroy(anydev_bk_event_t token) {
  Event<Api>* event = as_event<Api>(token);
  if (event == nullptr) return null_argument<Api>("event_destroy", "event");
  typename Api::scope scope;
  anydev_status_t status = scope.enter(event->device, "event_destroy");
  if (status == ANYDEV_SUCCESS) {
    const auto r = driver<Api>().EventDestroy(event->native);
    if (r != Api::kSuccess) {
      status = report_failure<Api>(r, Api::driver_t::names::EventDestroy,
                                   cat("event_destroy on ", Api::kName, " device ", event->device));
    }
  }
  delete event->shared;
  delete event;
  return status;
}

template <class Api>
anydev_status_t event_record(anydev_bk_event_t event_token, anydev_bk_stream_t stream_token) {
  const Event<Api>* event = as_event<Api>(event_token);
  const Stream<Api>* stream = as_stream<Api>(stream_token);
  if (event == nullptr) return null_argument<Api>("event_record", "event");
  if (stream == nullptr) return null_argument<Api>("event_record", "stream");
  if (event->device != stream->device) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat("event_record: the event belongs to ", Api::kName, " device ",
                                 event->device, ", the stream to device ", stream->device));
  }
  if (event->shared != nullptr) event->shared->note_recorder();
  const auto r =
      call_on_stream<Api>(stream->device, Api::names_its_device(stream->native), "event_record",
                          [&] { return driver<Api>().EventRecord(event->native, stream->native); });
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, Api::driver_t::names::EventRecord,
                               cat("event_record on ", Api::kName, " device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t event_query(anydev_bk_event_t token, int* complete);

// DEVICE: the recorder of interprocess `event` exited with its work unfinished.
template <class Api>
[[gnu::cold]] anydev_status_t recorder_exited(const Event<Api>& event, const char* operation) {
  return report_error<Api>(
      ANYDEV_ERROR_DEVICE,
      cat(operation, " on ", Api::kName, " device ", event.device,
          ": the interprocess event's recorder, process ", event.shared->recorder(),
          ", exited before the work it recorded completed"));
}

// An interprocess event's wait: polls the driver (a blocking wait would
// never return if the recorder died) and checks the recorder between polls.
template <class Api>
anydev_status_t shared_event_synchronize(const Event<Api>& event) {
  auto pause = std::chrono::microseconds(10);
  for (;;) {
    int complete = 0;
    if (const anydev_status_t s =
            event_query<Api>(to_token(const_cast<Event<Api>*>(&event)), &complete);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    if (complete != 0) return ANYDEV_SUCCESS;
    if (event.shared->recorder_gone()) {
      // Completed between the query and the check?
      if (event_query<Api>(to_token(const_cast<Event<Api>*>(&event)), &complete) ==
              ANYDEV_SUCCESS &&
          complete != 0) {
        return ANYDEV_SUCCESS;
      }
      return recorder_exited<Api>(event, "event_synchronize");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

template <class Api>
anydev_status_t event_synchronize(anydev_bk_event_t token) {
  const Event<Api>* event = as_event<Api>(token);
  if (event == nullptr) return null_argument<Api>("event_synchronize", "event");
  if (event->shared != nullptr) return shared_event_synchronize<Api>(*event);
  // An event names its device, like a stream the backend created.
  const auto r = call_on_stream<Api>(event->device, true, "event_synchronize", [event] {
    return driver<Api>().EventSynchronize(event->native);
  });
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, Api::driver_t::names::EventSynchronize,
                               cat("event_synchronize on ", Api::kName, " device ", event->device));
  }
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t event_query(anydev_bk_event_t token, int* complete) {
  const Event<Api>* event = as_event<Api>(token);
  if (event == nullptr) return null_argument<Api>("event_query", "event");
  if (complete == nullptr) return null_argument<Api>("event_query", "out");
  const auto r = call_on_stream<Api>(event->device, true, "event_query",
                                     [event] { return driver<Api>().EventQuery(event->native); });
  if (r == Api::kSuccess || r == Api::kNotReady) {
    *complete = r == Api::kSuccess ? 1 : 0;
    return ANYDEV_SUCCESS;
  }
  return report_failure<Api>(r, Api::driver_t::names::EventQuery,
                             cat("event_query on ", Api::kName, " device ", event->device));
}

template <class Api>
anydev_status_t stream_wait_event(anydev_bk_stream_t stream_token, anydev_bk_event_t event_token) {
  const Stream<Api>* stream = as_stream<Api>(stream_token);
  const Event<Api>* event = as_event<Api>(event_token);
  if (stream == nullptr) return null_argument<Api>("stream_wait_event", "stream");
  if (event == nullptr) return null_argument<Api>("stream_wait_event", "event");
  if (event->shared != nullptr) {
    int complete = 0;
    if (const anydev_status_t s = event_query<Api>(event_token, &complete); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (complete == 0 && event->shared->recorder_gone()) {
      return recorder_exited<Api>(*event, "stream_wait_event");
    }
  }
  const auto r = call_on_stream<Api>(
      stream->device, Api::names_its_device(stream->native), "stream_wait_event",
      [&] { return driver<Api>().StreamWaitEvent(stream->native, event->native, 0); });
  if (r != Api::kSuccess) {
    return report_failure<Api>(
        r, Api::driver_t::names::StreamWaitEvent,
        cat("stream_wait_event: a stream of ", Api::kName, " device ", stream->device,
            " waiting for an event of device ", event->device));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_STREAMS_H_
