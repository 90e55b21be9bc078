// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: Communicator, stream-ordered transfers between processes
// and nodes over UCX (docs/distributed.md). Include it beside anydev.hpp.
//
// Communicator, ExposedRegion and RemoteRegion share their C handle by copy
// (reference counted); every member is thread-safe.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_COMM_HPP_
#define ANYDEV_COMM_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/buffer.hpp"
#include "anydev/context.hpp"
#include "anydev/dtype.hpp"
#include "anydev/status.hpp"

namespace anydev {

// A buffer of this process exposed to peers' put and get; key() goes to them.
class ExposedRegion {
 public:
  std::vector<std::uint8_t> key() const {
    std::size_t size = 0;
    detail::check(anydev_comm_region_key(handle_.get(), nullptr, 0, &size));
    std::vector<std::uint8_t> out(size);
    detail::check(anydev_comm_region_key(handle_.get(), out.data(), out.size(), &size));
    return out;
  }
  anydev_comm_region_t handle() const noexcept { return handle_.get(); }
  // Wraps a C region handle, taking over the caller's reference.
  static ExposedRegion adopt(anydev_comm_region_t owned) { return ExposedRegion(owned); }

 private:
  explicit ExposedRegion(anydev_comm_region_t h)
      : handle_(h, [](anydev_comm_region_t p) { anydev_comm_region_release(p); }) {}
  std::shared_ptr<anydev_comm_region_s> handle_;
};

// A peer's exposed buffer, imported from its key.
class RemoteRegion {
 public:
  anydev_comm_remote_t handle() const noexcept { return handle_.get(); }

 private:
  friend class Communicator;
  explicit RemoteRegion(anydev_comm_remote_t h)
      : handle_(h, [](anydev_comm_remote_t p) { anydev_comm_remote_release(p); }) {}
  std::shared_ptr<anydev_comm_remote_s> handle_;
};

// What Communicator::expose_new returns: host memory UCX allocated and its
// exposed region. Each keeps the memory (and the communicator) alive.
template <Element T>
struct ExposedBuffer {
  HostBuffer<T> buffer;
  ExposedRegion region;
};

class Communicator {
 public:
  // timeout_ms 0: ANYDEV_UCX_TIMEOUT_MS, else 30000. Throws Error
  // (backend_unavailable with the reason where UCX is absent).
  explicit Communicator(const DeviceContext& ctx, std::uint32_t timeout_ms = 0) {
    anydev_comm_t h = nullptr;
    detail::check(anydev_comm_create(ctx.handle(), timeout_ms, &h));
    handle_ = std::shared_ptr<anydev_comm_s>(h, [](anydev_comm_t p) { anydev_comm_release(p); });
  }

  std::vector<std::uint8_t> address() const {
    std::size_t size = 0;
    detail::check(anydev_comm_address(handle_.get(), nullptr, 0, &size));
    std::vector<std::uint8_t> out(size);
    detail::check(anydev_comm_address(handle_.get(), out.data(), out.size(), &size));
    return out;
  }
  // The peer's index.
  int connect(std::span<const std::uint8_t> address) const {
    int peer = -1;
    detail::check(anydev_comm_connect(handle_.get(), address.data(), address.size(), &peer));
    return peer;
  }
  int peer_count() const {
    int n = 0;
    detail::check(anydev_comm_peer_count(handle_.get(), &n));
    return n;
  }
  std::string memory_types() const { return anydev_comm_memory_types(handle_.get()); }

  // Stream-ordered on the buffer's context (anydev.h, "Transfers between
  // processes"); errors surface from that context's synchronize().
  template <class Buffer>
  void enqueue_send(const Buffer& buffer, int peer, std::uint32_t tag) const {
    detail::check(anydev_comm_enqueue_send(handle_.get(), buffer.handle(), peer, tag));
  }
  template <class Buffer>
  void enqueue_recv(const Buffer& buffer, int peer, std::uint32_t tag) const {
    detail::check(anydev_comm_enqueue_recv(handle_.get(), buffer.handle(), peer, tag));
  }
  template <class Buffer>
  ExposedRegion expose(const Buffer& buffer) const {
    anydev_comm_region_t h = nullptr;
    detail::check(anydev_comm_expose(handle_.get(), buffer.handle(), &h));
    return ExposedRegion::adopt(h);
  }
  // `count` elements of T allocated through UCX and exposed at once
  // (anydev_comm_expose_new): over shared memory, peers' puts into it are
  // plain stores. The memory is unmapped once the buffer (after its last
  // use) and the region are both released.
  template <Element T>
  ExposedBuffer<T> expose_new(std::size_t count) const {
    anydev_buffer_t buffer = nullptr;
    anydev_comm_region_t region = nullptr;
    detail::check(anydev_comm_expose_new(handle_.get(), static_cast<anydev_dtype_t>(dtype_of<T>),
                                         count, &buffer, &region));
    ExposedRegion exposed = ExposedRegion::adopt(region);
    return ExposedBuffer<T>{HostBuffer<T>::adopt(buffer), std::move(exposed)};
  }
  RemoteRegion import_region(int peer, std::span<const std::uint8_t> key) const {
    anydev_comm_remote_t h = nullptr;
    detail::check(anydev_comm_import(handle_.get(), peer, key.data(), key.size(), &h));
    return RemoteRegion(h);
  }
  // `offset` in bytes into the remote region.
  template <class Buffer>
  void enqueue_put(const Buffer& buffer, const RemoteRegion& remote, std::size_t offset = 0) const {
    detail::check(anydev_comm_enqueue_put(handle_.get(), buffer.handle(), remote.handle(), offset));
  }
  template <class Buffer>
  void enqueue_get(const Buffer& buffer, const RemoteRegion& remote, std::size_t offset = 0) const {
    detail::check(anydev_comm_enqueue_get(handle_.get(), buffer.handle(), remote.handle(), offset));
  }

  anydev_comm_t handle() const noexcept { return handle_.get(); }

 private:
  std::shared_ptr<anydev_comm_s> handle_;
};

}  // namespace anydev

#endif  // ANYDEV_COMM_HPP_
