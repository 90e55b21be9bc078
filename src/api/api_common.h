// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the C entry points (api_*.cpp): argument and handle
// checks that produce the documented status and message, and reference
// counting. Not part of the public ABI.
#ifndef ANYDEV_SRC_API_API_COMMON_H_
#define ANYDEV_SRC_API_API_COMMON_H_

#include <exception>
#include <new>

#include "api/objects.h"
#include "support/fork_guard.h"
#include "support/status.h"

namespace anydev::core {

// NULL handle or output pointer -> INVALID_ARGUMENT naming the argument.
#define ANYDEV_REQUIRE_ARG(op, arg)                                                    \
  do {                                                                                 \
    if ((arg) == nullptr) {                                                            \
      return ::anydev::core::fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, #arg " is NULL"); \
    }                                                                                  \
  } while (0)

// A handle created before fork() used in the child -> INVALID_STATE.
// Validation layer (ANYDEV_VALIDATE): the handle must be live and of its
// kind. Only consulted when validation is on.
template <handles::HandleKind Kind>
anydev_status_t check_live_handle(const char* op, const handles::TrackedHandle<Kind>* handle,
                                  const char* what) {
  if (!layers::validation_enabled()) return ANYDEV_SUCCESS;
  return handles::check_live(op, Kind, handle, what);
}

template <class Handle>
anydev_status_t check_fork(const char* op, const Handle* handle, const char* what) {
  if (anydev_status_t s = check_live_handle(op, handle, what); s != ANYDEV_SUCCESS) return s;
  if (handle->fork_generation != fork_generation()) {
    return fail(ANYDEV_ERROR_INVALID_STATE, op, "the ", what,
                " was created before fork(); a forked child must create its own contexts, "
                "streams, events and buffers");
  }
  return ANYDEV_SUCCESS;
}

// Runs `body` and turns C++ exceptions (allocation failure) into statuses so
// that nothing ever unwinds through the C ABI.
template <class Body>
anydev_status_t guarded(const char* op, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(ANYDEV_ERROR_OUT_OF_MEMORY, op, "host memory exhausted");
  } catch (const std::exception& e) {
    return fail(ANYDEV_ERROR_INTERNAL, op, "internal error: ", e.what());
  } catch (...) {
    return fail(ANYDEV_ERROR_INTERNAL, op, "internal error");
  }
}

template <class Handle>
anydev_status_t retain_handle(const char* op, Handle* handle) {
  ANYDEV_REQUIRE_ARG(op, handle);
  if (anydev_status_t s = check_live_handle(op, handle, "handle"); s != ANYDEV_SUCCESS) return s;
  handle->refs.fetch_add(1, std::memory_order_relaxed);
  return ANYDEV_SUCCESS;
}

// Deletes the handle when its count reaches zero. `on_last` runs first.
template <class Handle, class OnLast>
anydev_status_t release_handle(const char* op, Handle* handle, OnLast&& on_last) {
  ANYDEV_REQUIRE_ARG(op, handle);
  if (anydev_status_t s = check_live_handle(op, handle, "handle"); s != ANYDEV_SUCCESS) return s;
  if (handle->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    on_last(handle);
    delete handle;
  }
  return ANYDEV_SUCCESS;
}

template <class Handle>
anydev_status_t release_handle(const char* op, Handle* handle) {
  return release_handle(op, handle, [](Handle*) {});
}

// A new context handle (one reference) on `state`. Throws std::bad_alloc.
anydev_context_t new_context(std::shared_ptr<const ContextState> state);

// The context's backend + device, for messages: "cuda:0".
std::string describe_device(const Backend* backend, int device);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_API_COMMON_H_
