// SPDX-License-Identifier: Apache-2.0
// The objects behind a GPU backend's opaque stream and event tokens, and the
// rule for calls on a stream that may need the device current.
//
// The core owns each object from creation until it hands it back to
// stream_destroy / event_destroy, which delete it. The fields never change
// after creation, so any thread may read them; the driver serializes work on
// the native handles.
#ifndef ANYDEV_BACKENDS_GPU_GPU_OBJECTS_H_
#define ANYDEV_BACKENDS_GPU_GPU_OBJECTS_H_

#include <cstdint>
#include <type_traits>

#include "anydev/backend.h"

namespace anydev::gpu {

// A native stream on one device: created here (owned, destroyed with the
// object) or wrapped from the application (not owned: never destroyed here).
template <class Api>
struct Stream {
  int device;
  typename Api::stream_t native;
  bool owned;
};

struct EventPidPage;  // gpu_share_page.h

// A native event created on one device without timing. `shared` is set for
// an interprocess event (event_create_shareable, event_import) and owned by
// the event.
template <class Api>
struct Event {
  int device;
  typename Api::event_t native;
  EventPidPage* shared = nullptr;
};

template <class Api>
Stream<Api>* as_stream(anydev_bk_stream_t s) {
  return reinterpret_cast<Stream<Api>*>(s);
}
template <class Api>
Event<Api>* as_event(anydev_bk_event_t e) {
  return reinterpret_cast<Event<Api>*>(e);
}
template <class Api>
anydev_bk_stream_t to_token(Stream<Api>* s) {
  return reinterpret_cast<anydev_bk_stream_t>(s);
}
template <class Api>
anydev_bk_event_t to_token(Event<Api>* e) {
  return reinterpret_cast<anydev_bk_event_t>(e);
}

// A memory handle (plus an offset) as the API's device address.
template <class Api>
typename Api::device_ptr device_address(const void* handle, std::uintptr_t offset = 0) {
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(handle) + offset;
  if constexpr (std::is_pointer_v<typename Api::device_ptr>) {
    return reinterpret_cast<typename Api::device_ptr>(at);
  } else {
    return static_cast<typename Api::device_ptr>(at);
  }
}

// A device address as the memory handle the core keeps.
template <class Api>
void* to_handle(typename Api::device_ptr p) {
  if constexpr (std::is_pointer_v<typename Api::device_ptr>) {
    return p;
  } else {
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
  }
}

// A device made current for the life of a scope, by an API's `Rule`:
//   saved_t                      what enter remembers to undo (kNothingSaved:
//                                nothing to undo);
//   enter(device, operation, &saved) -> anydev_status_t (reports errors);
//   leave(saved) noexcept        restores what the caller had.
// Used on one thread; not copyable.
template <class Rule>
class CurrentScope {
 public:
  CurrentScope() = default;
  CurrentScope(const CurrentScope&) = delete;
  CurrentScope& operator=(const CurrentScope&) = delete;
  ~CurrentScope() { Rule::leave(saved_); }

  // SUCCESS, or an error already reported that names `operation`.
  anydev_status_t enter(int device, const char* operation) {
    return Rule::enter(device, operation, &saved_);
  }

 private:
  typename Rule::saved_t saved_ = Rule::kNothingSaved;
};

// Makes `call`, a driver call whose stream or event names its device (the
// steady-state operations: copies, memsets, records, waits, synchronizes),
// with no switch of the current device: one driver call when the driver
// accepts it as it stands. When the driver answers that it wants the device
// current (Api::wants_device_current: CUDA's CUDA_ERROR_INVALID_CONTEXT, as
// an embedding runtime may have changed the current context between two
// anydev calls), the call is made once more under an Api::scope of `device`.
// A call on a stream that does not name its device (a default stream: the
// current device's) always runs under the scope.
template <class Api, class Call>
typename Api::status_t call_on_stream(int device, bool direct, const char* operation, Call&& call) {
  if (direct) {
    const typename Api::status_t r = call();
    if (!Api::wants_device_current(r)) return r;
  }
  typename Api::scope scope;
  if (scope.enter(device, operation) != ANYDEV_SUCCESS) return Api::kScopeFailed;
  return call();
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_OBJECTS_H_
