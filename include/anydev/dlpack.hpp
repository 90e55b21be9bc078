// SPDX-License-Identifier: Apache-2.0
// anydev C++ DLPack layer: header-only, over the C ABI in anydev_dlpack.h
// (see there for devices, dtypes, lifetimes and ordering).
//
//   anydev::DLPackTensor t = anydev::to_dlpack(buffer, {4, 256});
//   consumer_takes(t.release());            // the consumer calls the deleter
//   auto view = anydev::from_dlpack<float, anydev::HostBuffer>(managed, &ctx);
//
// Ownership: DLPackTensor owns one DLManagedTensor (move-only; its destructor
// calls the deleter unless release() handed it on). from_dlpack takes over
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

// Unique ownership of one DLManagedTensor.
class DLPackTensor {
 public:
  DLPackTensor() noexcept = default;
  explicit DLPackTensor(DLManagedTensor* owned) noexcept : tensor_(owned) {}
  DLPackTensor(DLPackTensor&& other) noexcept : tensor_(std::exchange(other.tensor_, nullptr)) {}
  DLPackTensor& operator=(DLPackTensor&& other) noexcept {
    if (this != &other) reset(std::exchange(other.tensor_, nullptr));
    return *this;
  }
  DLPackTensor(const DLPackTensor&) = delete;
  DLPackTensor& operator=(const DLPackTensor&) = delete;
  ~DLPackTensor() { reset(nullptr); }

  DLManagedTensor* get() const noexcept { return tensor_; }
  const DLTensor& operator*() const noexcept { return tensor_->dl_tensor; }
  const DLTensor* operator->() const noexcept { return &tensor_->dl_tensor; }
  // Hands the tensor on (to a consumer that will call its deleter).
  DLManagedTensor* release() noexcept { return std::exchange(tensor_, nullptr); }

 private:
  void reset(DLManagedTensor* owned) noexcept {
    DLManagedTensor* old = std::exchange(tensor_, owned);
    if (old != nullptr && old->deleter != nullptr) old->deleter(old);
  }

  DLManagedTensor* tensor_ = nullptr;
};

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

}  // namespace anydev

#endif  // ANYDEV_DLPACK_HPP_
