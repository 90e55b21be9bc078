// SPDX-License-Identifier: Apache-2.0
// Compile-time checks of which argument types DeviceContext::enqueue_copy and
// enqueue_memset accept: the set the 12 spelled-out enqueue_copy overloads and
// 2 enqueue_memset overloads of the original anydev.hpp accepted, which the
// constrained templates of context.hpp must keep exactly (a derived buffer
// class included). Built with anydev-header-tests; a difference fails the
// build. Nothing runs.
#include <anydev/anydev.hpp>
#include <span>
#include <utility>
#include <vector>

namespace {

template <class Dst, class Src>
concept CanCopy = requires(const anydev::DeviceContext& ctx, Dst&& dst, Src&& src) {
  ctx.enqueue_copy(std::forward<Dst>(dst), std::forward<Src>(src));
};
template <class Buffer, class Value>
concept CanMemset = requires(const anydev::DeviceContext& ctx, Buffer&& buffer, Value&& value) {
  ctx.enqueue_memset(std::forward<Buffer>(buffer), std::forward<Value>(value));
};

using H = anydev::HostBuffer<float>;
using D = anydev::DeviceBuffer<float>;
using HI = anydev::HostBuffer<int>;
using DI = anydev::DeviceBuffer<int>;
struct DerivedHost : H {};

// buffer <- buffer, any mix of kinds, the same element type only.
static_assert(CanCopy<const H&, const H&> && CanCopy<const H&, const D&>);
static_assert(CanCopy<const D&, const H&> && CanCopy<const D&, const D&>);
static_assert(CanCopy<H&, D> && CanCopy<const DerivedHost&, const D&>);
static_assert(!CanCopy<const H&, const DI&> && !CanCopy<const D&, const HI&>);

// buffer <- host pointer or span of the element type (conversions allowed).
static_assert(CanCopy<const H&, const float*> && CanCopy<const D&, float*>);
static_assert(CanCopy<const H&, std::span<const float>> && CanCopy<const D&, std::span<float>>);
static_assert(CanCopy<const D&, std::vector<float>&> && CanCopy<const H&, std::nullptr_t>);
static_assert(CanCopy<const DerivedHost&, const float*>);
static_assert(!CanCopy<const H&, const int*> && !CanCopy<const D&, std::span<const int>>);

// host pointer or span <- buffer: the host side must be writable.
static_assert(CanCopy<float*, const H&> && CanCopy<float*, const D&>);
static_assert(CanCopy<std::span<float>, const H&> && CanCopy<std::vector<float>&, const D&>);
static_assert(CanCopy<float*, const DerivedHost&>);
static_assert(!CanCopy<const float*, const H&> && !CanCopy<std::span<const float>, const D&>);
static_assert(!CanCopy<int*, const H&> && !CanCopy<const std::vector<float>&, const D&>);

// Neither side a buffer.
static_assert(!CanCopy<float*, const float*> && !CanCopy<std::span<float>, std::span<float>>);

// memset: a buffer and a value convertible to its element type.
static_assert(CanMemset<const H&, float> && CanMemset<const D&, int>);
static_assert(CanMemset<const DerivedHost&, double>);
static_assert(!CanMemset<float*, float> && !CanMemset<const H&, const char*>);

}  // namespace
