// SPDX-License-Identifier: Apache-2.0
// BufferBase: what HostBuffer<T> and DeviceBuffer<T> share (buffer.hpp
// defines them). Internal to anydev's headers; ownership and thread safety
// below.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_DETAIL_BUFFER_BASE_HPP_
#define ANYDEV_DETAIL_BUFFER_BASE_HPP_

#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "anydev/anydev.h"
#include "anydev/context.hpp"
#include "anydev/detail/buffer_fwd.hpp"
#include "anydev/detail/handle.hpp"
#include "anydev/dtype.hpp"
#include "anydev/status.hpp"

namespace anydev::detail {

// What HostBuffer<T> and DeviceBuffer<T> share (`Derived` is one of them):
// one reference to a C buffer plus its element pointer and size, cached so
// that size(), unsafe_ptr() and element access cost nothing. Shared by copy;
// a default-constructed or moved-from buffer is empty, and every operation
// but size(), size_bytes(), unsafe_ptr() and handle() throws
// Error(invalid_state). Thread-safe as the C ABI; the cached fields change
// only by assignment and take_ptr(), which need exclusive use of the object.
template <class Derived, Element T>
class BufferBase {
 public:
  using element_type = T;

  // Elements.
  std::size_t size() const noexcept { return size_; }
  std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  // Host pointer of a HostBuffer, device address of a DeviceBuffer; nullptr
  // when empty (also for a zero-size buffer). The buffer keeps ownership.
  T* unsafe_ptr() const noexcept { return ptr_; }
  // The C handle, borrowed (no reference added); NULL when empty.
  anydev_buffer_t handle() const noexcept { return handle_.get(); }

  // A view of `size` elements of U from element `offset` (counted in U) that
  // shares this buffer's memory and keeps it alive.
  template <Element U>
  typename BufferTraits<Derived>::template rebind<U> create_sub_buffer(std::size_t offset,
                                                                       std::size_t size) const {
    anydev_buffer_t out = nullptr;
    check(anydev_buffer_create_sub_buffer(
        get("create_sub_buffer"), static_cast<anydev_dtype_t>(dtype_of<U>), offset, size, &out));
    return BufferTraits<Derived>::template rebind<U>::adopt(out);
  }

  // Copies this buffer into `dst` (dst.size() elements; this buffer must be
  // at least as large), on dst's context.
  void enqueue_copy_to(const HostBuffer<T>& dst) const {
    const anydev_buffer_t src = get("enqueue_copy_to");
    check(anydev_enqueue_copy(nullptr, other(dst, "enqueue_copy_to", "destination"), src));
  }
  void enqueue_copy_to(const DeviceBuffer<T>& dst) const {
    const anydev_buffer_t src = get("enqueue_copy_to");
    check(anydev_enqueue_copy(nullptr, other(dst, "enqueue_copy_to", "destination"), src));
  }
  // Copies size() elements to host memory at `dst`, on this buffer's context.
  void enqueue_copy_to(T* dst) const {
    check(anydev_enqueue_copy_to_host(nullptr, dst, size_bytes(), get("enqueue_copy_to")));
  }
  // `dst` must hold at least size() elements.
  void enqueue_copy_to(std::span<T> dst) const {
    check(
        anydev_enqueue_copy_to_host(nullptr, dst.data(), dst.size_bytes(), get("enqueue_copy_to")));
  }

  // Fills this buffer (size() elements) from `src`, which must be at least as
  // large, on this buffer's context.
  void enqueue_copy_from(const HostBuffer<T>& src) const {
    const anydev_buffer_t dst = get("enqueue_copy_from");
    check(anydev_enqueue_copy(nullptr, dst, other(src, "enqueue_copy_from", "source")));
  }
  void enqueue_copy_from(const DeviceBuffer<T>& src) const {
    const anydev_buffer_t dst = get("enqueue_copy_from");
    check(anydev_enqueue_copy(nullptr, dst, other(src, "enqueue_copy_from", "source")));
  }
  void enqueue_copy_from(const T* src) const {
    check(anydev_enqueue_copy_from_host(nullptr, get("enqueue_copy_from"), src, size_bytes()));
  }
  void enqueue_copy_from(std::span<const T> src) const {
    check(anydev_enqueue_copy_from_host(nullptr, get("enqueue_copy_from"), src.data(),
                                        src.size_bytes()));
  }

  // Writes the exact bits of `value` into every element.
  void enqueue_fill(T value) const {
    check(anydev_enqueue_fill(nullptr, get("enqueue_fill"), &value, sizeof(T)));
  }

  // Makes `ctx` this buffer's context: its later operations and its release
  // run on ctx's stream (same backend and device).
  void reassign_ownership_to(const DeviceContext& ctx) const {
    const anydev_buffer_t buf = get("reassign_ownership_to");
    if (ctx.handle() == nullptr) {
      throw_empty(BufferTraits<Derived>::name, "reassign_ownership_to", "context");
    }
    check(anydev_buffer_reassign_ownership(buf, ctx.handle()));
  }

  // Hands the memory to the caller, who releases it with ctx.free(p). Needs
  // the only handle to that memory; afterwards this buffer is empty and its
  // operations throw Error(invalid_state).
  T* take_ptr() && {
    void* out = nullptr;
    check(anydev_buffer_take_ptr(get("take_ptr"), &out));
    ptr_ = nullptr;
    size_ = 0;
    return static_cast<T*>(out);
  }

  // A handle another process opens with DeviceContext::import_host_buffer
  // or import_buffer (the memory must be shareable or imported; a view
  // exports its place in its allocation).
  ShareHandle export_handle() const {
    anydev_share_handle_t raw{};
    check(anydev_buffer_export(get("export_handle"), &raw));
    return ShareHandle::adopt(raw);
  }

  // The context whose stream runs this buffer's operations and release.
  DeviceContext context() const {
    anydev_context_t out = nullptr;
    check(anydev_buffer_context(get("context"), &out));
    return DeviceContext::adopt(out);
  }

  // Wraps a C buffer of T and of this kind, taking over the one reference the
  // caller holds (released again if this throws: Error(invalid_argument) for
  // another dtype or kind).
  static Derived adopt(anydev_buffer_t owned) {
    BufferHandle handle(owned);
    anydev_buffer_info_t info{};
    info.struct_size = sizeof(info);
    check(anydev_buffer_get_info(owned, &info));
    if (info.kind != BufferTraits<Derived>::kind ||
        info.dtype != static_cast<anydev_dtype_t>(dtype_of<T>)) {
      const char* dtype = to_string(static_cast<DType>(info.dtype));
      throw Error(Status::invalid_argument,
                  std::string(BufferTraits<Derived>::name) + "<" + to_string(dtype_of<T>) +
                      ">::adopt: the handle is a " +
                      (info.kind == ANYDEV_MEMORY_HOST ? "host" : "device") + " buffer of " +
                      dtype);
    }
    Derived result;
    BufferBase& base = result;
    base.handle_ = std::move(handle);
    base.ptr_ = static_cast<T*>(info.address);
    base.size_ = info.count;
    return result;
  }

 protected:
  BufferBase() noexcept = default;
  BufferBase(const BufferBase&) noexcept = default;
  BufferBase(BufferBase&& other) noexcept
      : handle_(std::move(other.handle_)),
        ptr_(std::exchange(other.ptr_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  BufferBase& operator=(const BufferBase&) noexcept = default;
  BufferBase& operator=(BufferBase&& other) noexcept {
    if (this != &other) {
      handle_ = std::move(other.handle_);
      ptr_ = std::exchange(other.ptr_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~BufferBase() = default;

  // This buffer's handle, or Error(invalid_state) naming `method` when empty.
  anydev_buffer_t get(const char* method) const {
    if (handle_.get() == nullptr) throw_empty(BufferTraits<Derived>::name, method, "buffer");
    return handle_.get();
  }

  // A taken buffer reports size 0: when the size is 0, let the C ABI say
  // whether the handle is still usable, and throw its error if not.
  void check_usable(const char* method) const {
    if (size_ != 0) return;
    anydev_buffer_info_t info{};
    info.struct_size = sizeof(info);
    const anydev_status_t status = anydev_buffer_get_info(get(method), &info);
    if (status != ANYDEV_SUCCESS) {
      throw Error(static_cast<Status>(status), std::string(BufferTraits<Derived>::name) + "::" +
                                                   method + ": " + anydev_last_error_message());
    }
  }

  [[noreturn]] void throw_out_of_range(const char* method, std::size_t index) const {
    check_usable(method);
    throw Error(Status::out_of_range, std::string(BufferTraits<Derived>::name) + "::" + method +
                                          ": index " + std::to_string(index) +
                                          " is out of range for a buffer of " +
                                          std::to_string(size_) + " elements");
  }

 private:
  template <class Other>
  static anydev_buffer_t other(const Other& buffer, const char* method, const char* role) {
    if (buffer.handle() == nullptr) {
      throw Error(Status::invalid_state, std::string(BufferTraits<Derived>::name) + "::" + method +
                                             ": the " + role +
                                             " buffer is empty (default-constructed or "
                                             "moved-from)");
    }
    return buffer.handle();
  }

  BufferHandle handle_;
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace anydev::detail

#endif  // ANYDEV_DETAIL_BUFFER_BASE_HPP_
