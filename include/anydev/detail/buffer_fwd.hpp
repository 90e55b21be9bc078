// SPDX-License-Identifier: Apache-2.0
// The buffer class templates declared ahead (DeviceContext's members name
// them before buffer.hpp defines them), their traits, and AnyBuffer: the
// concept that DeviceContext's copy and fill templates are constrained by.
// Internal to anydev's headers; traits only, nothing owned.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_DETAIL_BUFFER_FWD_HPP_
#define ANYDEV_DETAIL_BUFFER_FWD_HPP_

#include <type_traits>
#include <utility>

#include "anydev/anydev.h"
#include "anydev/dtype.hpp"

namespace anydev {

template <Element T>
class HostBuffer;
template <Element T>
class DeviceBuffer;
template <Element T>
class HostMapping;

namespace detail {

// The kind, class name and element type of HostBuffer<T> and DeviceBuffer<T>;
// rebind<U> is the same kind of buffer of U.
template <class Buffer>
struct BufferTraits;
template <Element T>
struct BufferTraits<HostBuffer<T>> {
  static constexpr anydev_memory_kind_t kind = ANYDEV_MEMORY_HOST;
  static constexpr const char* name = "HostBuffer";
  using element = T;
  template <Element U>
  using rebind = HostBuffer<U>;
};
template <Element T>
struct BufferTraits<DeviceBuffer<T>> {
  static constexpr anydev_memory_kind_t kind = ANYDEV_MEMORY_DEVICE;
  static constexpr const char* name = "DeviceBuffer";
  using element = T;
  template <Element U>
  using rebind = DeviceBuffer<U>;
};

// Declared only, for overload resolution in unevaluated contexts: which
// buffer class an argument is (or derives from), deduced exactly as a
// `const HostBuffer<T>&` or `const DeviceBuffer<T>&` parameter would deduce it.
template <Element T>
std::type_identity<HostBuffer<T>> buffer_class_of(const HostBuffer<T>&);
template <Element T>
std::type_identity<DeviceBuffer<T>> buffer_class_of(const DeviceBuffer<T>&);

// A HostBuffer<T> or a DeviceBuffer<T> (or a class derived from one).
template <class B>
concept AnyBuffer = requires(const B& buffer) {
  detail::buffer_class_of(buffer);
};

// The buffer class of B: HostBuffer<T> or DeviceBuffer<T>.
template <AnyBuffer B>
using buffer_class_t = typename decltype(detail::buffer_class_of(std::declval<const B&>()))::type;

// The element type T of B.
template <AnyBuffer B>
using element_t = typename BufferTraits<buffer_class_t<B>>::element;

}  // namespace detail

}  // namespace anydev

#endif  // ANYDEV_DETAIL_BUFFER_FWD_HPP_
