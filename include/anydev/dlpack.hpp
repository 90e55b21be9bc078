// SPDX-License-Identifier: Apache-2.0
// anydev C++ DLPack layer: header-only, over the C ABI in anydev_dlpack.h
// (see there for devices, dtypes, lifetimes and ordering).
//
//   anydev::DLPackTensor t = anydev::to_dlpack(buffer, {4, 256});
//   consumer_takes(t.release());            // the consumer calls the deleter
//   auto view = anydev::from_dlpack<float, anydev::HostBuffer>(managed, &ctx);
//   anydev::DLPackVersionedTensor v = anydev::to_dlpack_versioned(buffer);  // DLPack 1.x
//
// Ownership: DLPackTensor owns one DLManagedTensor, DLPackVersionedTensor
// one versioned tensor (anydev_dlpack_managed_tensor_versioned_t); both are
// move-only and their destructor calls the deleter unless release() handed
// it on. from_dlpack takes over
// the producer's tensor only when it succeeds. Thread-safety as the C ABI.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_DLPACK_HPP_
#define ANYDEV_DLPACK_HPP_

#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>

#include "anydev/anydev_dlpack.h"
#include "anydev/buffer.hpp"
#include "anydev/context.hpp"
#include "anydev/dtype.hpp"
#include "anydev/status.hpp"

namespace anydev {

namespace detail {

// Unique ownership of one DLPack managed tensor (Managed: DLManagedTensor or
// anydev_dlpack_managed_tensor_versioned_t). Move-only; not thread-safe.
template <class Managed>
class OwnedDLPack {
 public:
  OwnedDLPack() noexcept = default;
  explicit OwnedDLPack(Managed* owned) noexcept : tensor_(owned) {}
  OwnedDLPack(OwnedDLPack&& other) noexcept : tensor_(std::exchange(other.tensor_, nullptr)) {}
  OwnedDLPack& operator=(OwnedDLPack&& other) noexcept {
    if (this != &other) reset(std::exchange(other.tensor_, nullptr));
    return *this;
  }
  OwnedDLPack(const OwnedDLPack&) = delete;
  OwnedDLPack& operator=(const OwnedDLPack&) = delete;
  ~OwnedDLPack() { reset(nullptr); }

  Managed* get() const noexcept { return tensor_; }
  const DLTensor& operator*() const noexcept { return tensor_->dl_tensor; }
  const DLTensor* operator->() const noexcept { return &tensor_->dl_tensor; }
  // Hands the tensor on (to a consumer that will call its deleter).
  Managed* release() noexcept { return std::exchange(tensor_, nullptr); }

 private:
  void reset(Managed* owned) noexcept {
    Managed* old = std::exchange(tensor_, owned);
    if (old != nullptr && old->deleter != nullptr) old->deleter(old);
  }

  Managed* tensor_ = nullptr;
};

}  // namespace detail

// Unique ownership of one DLManagedTensor (DLPack 0.x).
using DLPackTensor = detail::OwnedDLPack<DLManagedTensor>;
// Unique ownership of one DLPack 1.x versioned tensor (version, flags).
using DLPackVersionedTensor = detail::OwnedDLPack<anydev_dlpack_managed_tensor_versioned_t>;

// Where a buffer's tensor lives (device type, anydev device index).
template <class Buffer>
DLDevice dlpack_device(const Buffer& buffer) {
  int type = 0, id = 0;
  detail::check(anydev_buffer_dlpack_device(buffer.handle(), &type, &id));
  return DLDevice{static_cast<DLDeviceType>(type), id};
}

// Orders a consumer after the work enqueued on `buffer`: nullptr waits on
// the host, else the native stream waits on the device.
template <class Buffer>
void make_ready(const Buffer& buffer, void* consumer_stream = nullptr) {
  detail::check(anydev_buffer_make_ready(buffer.handle(), consumer_stream));
}

// A tensor sharing the buffer's memory: 1-D when `shape` is empty, else
// those extents (whose product must be buffer.size()). Does not wait for
// the buffer's work (call make_ready).
template <class Buffer>
DLPackTensor to_dlpack(const Buffer& buffer, std::span<const std::int64_t> shape = {}) {
  DLManagedTensor* out = nullptr;
  detail::check(anydev_buffer_to_dlpack(buffer.handle(), static_cast<int>(shape.size()),
                                        shape.empty() ? nullptr : shape.data(), &out));
  return DLPackTensor(out);
}
template <class Buffer>
DLPackTensor to_dlpack(const Buffer& buffer, std::initializer_list<std::int64_t> shape) {
  return to_dlpack(buffer, std::span<const std::int64_t>(shape.begin(), shape.size()));
}

// The same as a DLPack 1.x versioned tensor (version 1.0; bool as kDLBool).
// `flags`: 0 or ANYDEV_DLPACK_FLAG_READ_ONLY.
template <class Buffer>
DLPackVersionedTensor to_dlpack_versioned(const Buffer& buffer,
                                          std::span<const std::int64_t> shape = {},
                                          std::uint64_t flags = 0) {
  anydev_dlpack_managed_tensor_versioned_t* out = nullptr;
  detail::check(anydev_buffer_to_dlpack_versioned(buffer.handle(), static_cast<int>(shape.size()),
                                                  shape.empty() ? nullptr : shape.data(), flags,
                                                  &out));
  return DLPackVersionedTensor(out);
}
template <class Buffer>
DLPackVersionedTensor to_dlpack_versioned(const Buffer& buffer,
                                          std::initializer_list<std::int64_t> shape,
                                          std::uint64_t flags = 0) {
  return to_dlpack_versioned(buffer, std::span<const std::int64_t>(shape.begin(), shape.size()),
                             flags);
}

// A HostBuffer<T> or DeviceBuffer<T> (BufferT) over a producer's tensor; on
// success it owns `tensor` (calls its deleter when the last handle and the
// work on it are gone). ctx == nullptr: the default context for the
// tensor's device (anydev_dlpack.h). Error(invalid_argument) when the tensor
// is not of T or not of that buffer kind -- and then the caller still owns
// nothing: the buffer (and with it the tensor) is released.
template <Element T, template <Element> class BufferT>
BufferT<T> from_dlpack(DLManagedTensor* tensor, const DeviceContext* ctx = nullptr) {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_buffer_from_dlpack(ctx != nullptr ? ctx->handle() : nullptr, tensor, &out));
  return BufferT<T>::adopt(out);
}
// Same, taking over a DLPackTensor (it is empty afterwards on success).
template <Element T, template <Element> class BufferT>
BufferT<T> from_dlpack(DLPackTensor&& tensor, const DeviceContext* ctx = nullptr) {
  anydev_buffer_t out = nullptr;
  detail::check(
      anydev_buffer_from_dlpack(ctx != nullptr ? ctx->handle() : nullptr, tensor.get(), &out));
  tensor.release();
  return BufferT<T>::adopt(out);
}

// Same for a DLPack 1.x versioned tensor (anydev_buffer_from_dlpack_versioned:
// major version 1, not read-only).
template <Element T, template <Element> class BufferT>
BufferT<T> from_dlpack(anydev_dlpack_managed_tensor_versioned_t* tensor,
                       const DeviceContext* ctx = nullptr) {
  anydev_buffer_t out = nullptr;
  detail::check(
      anydev_buffer_from_dlpack_versioned(ctx != nullptr ? ctx->handle() : nullptr, tensor, &out));
  return BufferT<T>::adopt(out);
}
template <Element T, template <Element> class BufferT>
BufferT<T> from_dlpack(DLPackVersionedTensor&& tensor, const DeviceContext* ctx = nullptr) {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_buffer_from_dlpack_versioned(ctx != nullptr ? ctx->handle() : nullptr,
                                                    tensor.get(), &out));
  tensor.release();
  return BufferT<T>::adopt(out);
}

}  // namespace anydev

#endif  // ANYDEV_DLPACK_HPP_
