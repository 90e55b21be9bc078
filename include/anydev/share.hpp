// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: ShareHandle, a buffer or event on its way to another
// process (docs/sharing.md). Part of anydev.hpp (include that); usable alone.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_SHARE_HPP_
#define ANYDEV_SHARE_HPP_

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>

#include "anydev/anydev.h"
#include "anydev/status.hpp"

namespace anydev {

// What HostBuffer::export_handle, DeviceBuffer::export_handle and
// DeviceEvent::export_handle give: serialisable bytes plus the file
// descriptors the object needs, which this handle owns (closed by its
// destructor). Move-only. Not thread-safe: one thread at a time per handle.
class ShareHandle {
 public:
  ShareHandle() noexcept { clear(); }
  ShareHandle(ShareHandle&& other) noexcept : raw_(other.raw_) { other.clear(); }
  ShareHandle& operator=(ShareHandle&& other) noexcept {
    if (this != &other) {
      close();
      raw_ = other.raw_;
      other.clear();
    }
    return *this;
  }
  ShareHandle(const ShareHandle&) = delete;
  ShareHandle& operator=(const ShareHandle&) = delete;
  ~ShareHandle() { close(); }

  // Takes over `raw` and its fds.
  static ShareHandle adopt(const anydev_share_handle_t& raw) noexcept {
    ShareHandle out;
    out.raw_ = raw;
    return out;
  }
  // A handle from its bytes alone (sent through a pipe, a file, a queue):
  // it has no fds until fetch_fds() copies them from the exporter.
  static ShareHandle from_bytes(std::span<const std::uint8_t> bytes) {
    if (bytes.size() != ANYDEV_SHARE_HANDLE_BYTES) {
      throw Error(Status::invalid_argument,
                  "ShareHandle::from_bytes: " + std::to_string(bytes.size()) +
                      " bytes given; a handle is " + std::to_string(ANYDEV_SHARE_HANDLE_BYTES));
    }
    ShareHandle out;
    std::memcpy(out.raw_.data, bytes.data(), bytes.size());
    return out;
  }
  // Receives a handle sent with send() over a connected AF_UNIX socket.
  static ShareHandle receive(int socket) {
    anydev_share_handle_t raw{};
    detail::check(anydev_share_handle_receive(socket, &raw));
    return adopt(raw);
  }

  // The serialisable bytes (without the fds).
  std::span<const std::uint8_t, ANYDEV_SHARE_HANDLE_BYTES> bytes() const noexcept {
    return std::span<const std::uint8_t, ANYDEV_SHARE_HANDLE_BYTES>(raw_.data);
  }
  // Sends the bytes and the fds (SCM_RIGHTS); this handle keeps its fds.
  void send(int socket) const { detail::check(anydev_share_handle_send(socket, &raw_)); }
  // Copies the fds out of the exporting process (pidfd_getfd).
  void fetch_fds() { detail::check(anydev_share_handle_fetch_fds(&raw_)); }
  // Closes the fds now (after they were sent or imported).
  void close() noexcept { anydev_share_handle_close(&raw_); }

  const anydev_share_handle_t& raw() const noexcept { return raw_; }
  anydev_share_handle_t& raw() noexcept { return raw_; }

 private:
  void clear() noexcept {
    std::memset(&raw_, 0, sizeof raw_);
    for (int& fd : raw_.fds) fd = -1;
  }
  anydev_share_handle_t raw_;
};

}  // namespace anydev

#endif  // ANYDEV_SHARE_HPP_
