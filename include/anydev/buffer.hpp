// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: buffers. HostBuffer<T> (pinned host memory), DeviceBuffer<T>
// (device memory), HostMapping<T> (DeviceBuffer::map_to_host), the
// DeviceContext members that create, copy and fill them, and printing. Part of
// anydev.hpp (include that); usable alone. Ownership and thread safety: see
// each class.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_BUFFER_HPP_
#define ANYDEV_BUFFER_HPP_

#include <concepts>
#include <cstddef>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "anydev/anydev.h"
#include "anydev/context.hpp"
#include "anydev/detail/buffer_base.hpp"
#include "anydev/detail/buffer_fwd.hpp"
#include "anydev/detail/format.hpp"
#include "anydev/detail/validation.hpp"
#include "anydev/dtype.hpp"
#include "anydev/status.hpp"

namespace anydev {

// Pinned (page-locked where the backend can pin) host memory of T, usable by
// the device's copy engines and by the host. Created by
// DeviceContext::enqueue_create_host_buffer. Shared by copy (reference count);
// the memory is released after the last handle goes away and the work already
// enqueued on it has finished, without blocking. Thread-safe as the C ABI;
// element access is plain memory access, so concurrent reads and writes of
// the same element (or during a copy) are data races as usual.
template <Element T>
class HostBuffer : public detail::BufferBase<HostBuffer<T>, T> {
  using Base = detail::BufferBase<HostBuffer<T>, T>;

 public:
  // Empty: every operation throws Error(invalid_state).
  HostBuffer() noexcept = default;

  // Unchecked element access. With ANYDEV_VALIDATE on, access to an element
  // an enqueued copy or fill still writes is reported (logged).
  T& operator[](std::size_t i) const noexcept {
    if (detail::validation_on_at_start) {
      static_cast<void>(anydev_buffer_check_host_access(this->handle(), i, 1));
    }
    return this->unsafe_ptr()[i];
  }
  // Checked element access: Error(out_of_range) naming i and size(). With
  // ANYDEV_VALIDATE on, also Error(invalid_state) when an enqueued copy or
  // fill still writes the element (synchronize first).
  T& at(std::size_t i) const {
    this->get("at");
    if (i >= this->size()) this->throw_out_of_range("at", i);
    if (detail::validation_on()) {
      detail::check(anydev_buffer_check_host_access(this->handle(), i, 1));
    }
    return this->unsafe_ptr()[i];
  }
  // The elements; valid while a handle to the buffer lives.
  std::span<T> as_span() const {
    this->check_usable("as_span");
    return std::span<T>(this->unsafe_ptr(), this->size());
  }
  // Whether the memory is really page-locked (pinned): false past the lock
  // limit (RLIMIT_MEMLOCK), with a backend that does not lock host memory,
  // for memory anydev did not allocate (DLPack imports) and for size 0.
  bool is_locked() const {
    int out = 0;
    detail::check(anydev_buffer_is_locked(this->get("is_locked"), &out));
    return out != 0;
  }
  // Whether the memory is the caller's, registered with
  // DeviceContext::register_host_memory (a view answers for its memory).
  bool is_registered() const {
    int out = 0;
    detail::check(anydev_buffer_is_registered(this->get("is_registered"), &out));
    return out != 0;
  }
};

// Device memory of T (a device address: not dereferenceable on the host in
// general). Created by DeviceContext::enqueue_create_buffer. Ownership and
// thread safety as HostBuffer. Read or write it on the host with
// map_to_host() or by copying to and from a HostBuffer.
template <Element T>
class DeviceBuffer : public detail::BufferBase<DeviceBuffer<T>, T> {
 public:
  // Empty: every operation throws Error(invalid_state).
  DeviceBuffer() noexcept = default;

  // Copies the buffer to host memory and synchronizes; the mapping writes it
  // back when unmapped or destroyed.
  HostMapping<T> map_to_host() const;
};

// Host copy of a DeviceBuffer returned by map_to_host(): on creation it copies
// the buffer into a pinned HostBuffer on the buffer's context and
// synchronizes; unmap() (or the destructor, which swallows errors: call
// unmap() to see them) copies it back and synchronizes. Owns the host copy and
// a reference to the device buffer. Move-only; not for concurrent use.
template <Element T>
class HostMapping {
 public:
  HostMapping(const HostMapping&) = delete;
  HostMapping& operator=(const HostMapping&) = delete;
  HostMapping(HostMapping&& other) noexcept
      : device_(std::move(other.device_)),
        host_(std::move(other.host_)),
        mapped_(std::exchange(other.mapped_, false)) {}
  HostMapping& operator=(HostMapping&& other) noexcept {
    if (this != &other) {
      unmap_noexcept();
      device_ = std::move(other.device_);
      host_ = std::move(other.host_);
      mapped_ = std::exchange(other.mapped_, false);
    }
    return *this;
  }
  ~HostMapping() { unmap_noexcept(); }

  // Unchecked access to the host copy (valid until unmap()).
  T& operator[](std::size_t i) const noexcept { return host_[i]; }
  // Elements; 0 after unmap().
  std::size_t size() const noexcept { return host_.size(); }
  std::span<T> as_span() const {
    if (!mapped_) throw_unmapped("as_span");
    return host_.as_span();
  }
  // Writes the host copy back to the device buffer (on its context) and
  // synchronizes; then frees the host copy. Runs at most once.
  void unmap() {
    if (!mapped_) throw_unmapped("unmap");
    mapped_ = false;
    HostBuffer<T> host = std::move(host_);
    device_.enqueue_copy_from(host);
    device_.context().synchronize();
  }

 private:
  friend class DeviceBuffer<T>;

  explicit HostMapping(const DeviceBuffer<T>& device) : device_(device) {
    const DeviceContext ctx = device_.context();
    host_ = ctx.enqueue_create_host_buffer<T>(device_.size());
    host_.enqueue_copy_from(device_);
    ctx.synchronize();
    mapped_ = true;
  }

  void unmap_noexcept() noexcept {
    if (!mapped_) return;
    try {
      unmap();
    } catch (...) {  // a destructor cannot report it; unmap() does
    }
  }
  [[noreturn]] static void throw_unmapped(const char* method) {
    throw Error(Status::invalid_state, std::string("HostMapping::") + method +
                                           ": the mapping is already unmapped or moved-from");
  }

  DeviceBuffer<T> device_;
  HostBuffer<T> host_;
  bool mapped_ = false;
};

template <Element T>
HostMapping<T> DeviceBuffer<T>::map_to_host() const {
  this->get("map_to_host");
  return HostMapping<T>(*this);
}

// ---- DeviceContext members that need the buffer types ------------------------------------

template <Element T>
HostBuffer<T> DeviceContext::enqueue_create_host_buffer(std::size_t size) const {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_buffer_create(get("enqueue_create_host_buffer"), ANYDEV_MEMORY_HOST,
                                     static_cast<anydev_dtype_t>(dtype_of<T>), size, &out));
  return HostBuffer<T>::adopt(out);
}

template <Element T>
DeviceBuffer<T> DeviceContext::enqueue_create_buffer(std::size_t size) const {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_buffer_create(get("enqueue_create_buffer"), ANYDEV_MEMORY_DEVICE,
                                     static_cast<anydev_dtype_t>(dtype_of<T>), size, &out));
  return DeviceBuffer<T>::adopt(out);
}

template <Element T>
HostBuffer<T> DeviceContext::create_shareable_host_buffer(std::size_t size) const {
  anydev_buffer_t out = nullptr;
  detail::check(
      anydev_buffer_create_shareable(get("create_shareable_host_buffer"), ANYDEV_MEMORY_HOST,
                                     static_cast<anydev_dtype_t>(dtype_of<T>), size, &out));
  return HostBuffer<T>::adopt(out);
}

template <Element T>
DeviceBuffer<T> DeviceContext::create_shareable_buffer(std::size_t size) const {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_buffer_create_shareable(get("create_shareable_buffer"), ANYDEV_MEMORY_DEVICE,
                                               static_cast<anydev_dtype_t>(dtype_of<T>), size,
                                               &out));
  return DeviceBuffer<T>::adopt(out);
}

template <Element T>
HostBuffer<T> DeviceContext::register_host_memory(T* pointer, std::size_t size,
                                                  anydev_unregistered_callback_t on_unregistered,
                                                  void* user_data) const {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_context_register_host_memory(
      get("register_host_memory"), pointer, size * sizeof(T),
      static_cast<anydev_dtype_t>(dtype_of<T>), on_unregistered, user_data, &out));
  return HostBuffer<T>::adopt(out);
}

template <Element T>
HostBuffer<T> DeviceContext::import_host_buffer(const ShareHandle& handle) const {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_buffer_import(get("import_host_buffer"), &handle.raw(), &out));
  return HostBuffer<T>::adopt(out);
}

template <Element T>
DeviceBuffer<T> DeviceContext::import_buffer(const ShareHandle& handle) const {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_buffer_import(get("import_buffer"), &handle.raw(), &out));
  return DeviceBuffer<T>::adopt(out);
}

template <Element T>
DeviceBuffer<T> DeviceContext::create_buffer_sync(std::size_t size) const {
  DeviceBuffer<T> buffer = enqueue_create_buffer<T>(size);
  synchronize();
  return buffer;
}

namespace detail {

// The C handle of enqueue_copy's `role` ("destination", "source") buffer, or
// Error(invalid_state) naming the role and the buffer class when it is empty.
template <AnyBuffer Buffer>
anydev_buffer_t buffer_arg(const Buffer& buffer, const char* role) {
  if (buffer.handle() == nullptr) {
    throw Error(Status::invalid_state, std::string("DeviceContext::enqueue_copy: the ") + role +
                                           " " + BufferTraits<buffer_class_t<Buffer>>::name +
                                           " is empty (default-constructed or moved-from)");
  }
  return buffer.handle();
}

}  // namespace detail

template <detail::AnyBuffer Dst, detail::AnyBuffer Src>
requires std::same_as<detail::element_t<Dst>, detail::element_t<Src>>
void DeviceContext::enqueue_copy(const Dst& dst, const Src& src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy(ctx, detail::buffer_arg(dst, "destination"),
                                    detail::buffer_arg(src, "source")));
}

template <detail::AnyBuffer Dst>
void DeviceContext::enqueue_copy(const Dst& dst,
                                 std::type_identity_t<const detail::element_t<Dst>*> src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy_from_host(ctx, detail::buffer_arg(dst, "destination"), src,
                                              dst.size_bytes()));
}
template <detail::AnyBuffer Dst>
void DeviceContext::enqueue_copy(
    const Dst& dst, std::type_identity_t<std::span<const detail::element_t<Dst>>> src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy_from_host(ctx, detail::buffer_arg(dst, "destination"),
                                              src.data(), src.size_bytes()));
}

template <detail::AnyBuffer Src>
void DeviceContext::enqueue_copy(std::type_identity_t<detail::element_t<Src>*> dst,
                                 const Src& src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(
      anydev_enqueue_copy_to_host(ctx, dst, src.size_bytes(), detail::buffer_arg(src, "source")));
}
template <detail::AnyBuffer Src>
void DeviceContext::enqueue_copy(std::type_identity_t<std::span<detail::element_t<Src>>> dst,
                                 const Src& src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy_to_host(ctx, dst.data(), dst.size_bytes(),
                                            detail::buffer_arg(src, "source")));
}

template <detail::AnyBuffer Buffer>
void DeviceContext::enqueue_memset(const Buffer& buffer,
                                   std::type_identity_t<detail::element_t<Buffer>> value) const {
  const anydev_context_t ctx = get("enqueue_memset");
  if (buffer.handle() == nullptr) {
    detail::throw_empty("DeviceContext", "enqueue_memset",
                        detail::BufferTraits<detail::buffer_class_t<Buffer>>::name);
  }
  detail::check(anydev_enqueue_fill(ctx, buffer.handle(), &value, sizeof(value)));
}

// ---- printing -----------------------------------------------------------------------------

// Mojo's write_to: "HostBuffer([0.0, 1.0, 2.0])"; from 1000 elements on, the
// first three, "...", the last three.
template <Element T>
std::ostream& operator<<(std::ostream& os, const HostBuffer<T>& buffer) {
  if (buffer.handle() == nullptr) detail::throw_empty("HostBuffer", "operator<<", "buffer");
  return os << detail::format_buffer(buffer.handle());
}
// As HostBuffer, "DeviceBuffer([...])", through a synchronous host copy.
template <Element T>
std::ostream& operator<<(std::ostream& os, const DeviceBuffer<T>& buffer) {
  if (buffer.handle() == nullptr) detail::throw_empty("DeviceBuffer", "operator<<", "buffer");
  return os << detail::format_buffer(buffer.handle());
}

}  // namespace anydev

#endif  // ANYDEV_BUFFER_HPP_
