// SPDX-License-Identifier: Apache-2.0
// Shared ownership of one C handle (context, stream, event, buffer) for the
// C++ API's classes. Internal to anydev's headers.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_DETAIL_HANDLE_HPP_
#define ANYDEV_DETAIL_HANDLE_HPP_

#include <utility>

#include "anydev/anydev.h"

namespace anydev::detail {

// Shared ownership of one C handle: copy = retain, move = transfer (the
// source becomes empty), destruction = release. Release failures are ignored
// (there is nothing a destructor can do about them). Copies may be used from
// different threads (the C ABI's retain and release are thread-safe); one
// object must not be assigned while another thread uses it.
template <class Handle, anydev_status_t (*Retain)(Handle), anydev_status_t (*Release)(Handle)>
class SharedHandle {
 public:
  SharedHandle() noexcept = default;
  explicit SharedHandle(Handle owned) noexcept : handle_(owned) {}
  SharedHandle(const SharedHandle& other) noexcept : handle_(other.handle_) {
    if (handle_ != nullptr) static_cast<void>(Retain(handle_));
  }
  SharedHandle(SharedHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  SharedHandle& operator=(const SharedHandle& other) noexcept {
    if (other.handle_ != nullptr) static_cast<void>(Retain(other.handle_));
    reset(other.handle_);
    return *this;
  }
  SharedHandle& operator=(SharedHandle&& other) noexcept {
    if (this != &other) reset(std::exchange(other.handle_, nullptr));
    return *this;
  }
  ~SharedHandle() { reset(nullptr); }

  Handle get() const noexcept { return handle_; }
  // Gives up the reference without releasing it.
  Handle detach() noexcept { return std::exchange(handle_, nullptr); }

 private:
  void reset(Handle owned) noexcept {
    Handle old = std::exchange(handle_, owned);
    if (old != nullptr) static_cast<void>(Release(old));
  }

  Handle handle_ = nullptr;
};

using ContextHandle = SharedHandle<anydev_context_t, anydev_context_retain, anydev_context_release>;
using StreamHandle = SharedHandle<anydev_stream_t, anydev_stream_retain, anydev_stream_release>;
using EventHandle = SharedHandle<anydev_event_t, anydev_event_retain, anydev_event_release>;
using BufferHandle = SharedHandle<anydev_buffer_t, anydev_buffer_retain, anydev_buffer_release>;

}  // namespace anydev::detail

#endif  // ANYDEV_DETAIL_HANDLE_HPP_
