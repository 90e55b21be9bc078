// SPDX-License-Identifier: Apache-2.0
#include "core_transfer.h"

#include <cstring>
#include <string>

#include "core_config.h"

namespace anydev_emu::core {
namespace {

Status freed(const char* api, const Span& span) {
  return misuse(Status::illegal_address,
                std::string(api) + ": " + span.describe() + " was freed before the operation ran");
}

}  // namespace

Status enqueue_copy(const char* api, const StreamRef& stream, std::uintptr_t dst, Access dst_access,
                    std::uintptr_t src, Access src_access, std::size_t bytes) {
  if (bytes == 0) return Status::success;
  Span to;
  Span from;
  if (const Status s = resolve(dst, bytes, dst_access, api, &to); s != Status::success) return s;
  if (const Status s = resolve(src, bytes, src_access, api, &from); s != Status::success) return s;
  stream->enqueue(api, [api, to, from, bytes] {
    std::byte* d = to.bytes();
    const std::byte* f = from.bytes();
    if (d == nullptr) return freed(api, to);
    if (f == nullptr) return freed(api, from);
    std::memmove(d, f, bytes);
    return Status::success;
  });
  return Status::success;
}

Status check_peer_copy(const char* api, std::uintptr_t dst, int dst_device, std::uintptr_t src,
                       int src_device, std::size_t bytes) {
  if (bytes == 0) return Status::success;
  Span d;
  Span s;
  if (const Status e = resolve(dst, bytes, Access::kDeviceOrPinned, api, &d);
      e != Status::success) {
    return e;
  }
  if (const Status e = resolve(src, bytes, Access::kDeviceOrPinned, api, &s);
      e != Status::success) {
    return e;
  }
  if (d.block->device != dst_device || s.block->device != src_device) {
    return misuse(Status::invalid_value,
                  std::string(api) + ": a pointer is not memory of the device named for it");
  }
  return Status::success;
}

Status enqueue_memset(const char* api, const StreamRef& stream, std::uintptr_t dst,
                      std::uint32_t value, std::size_t element, std::size_t width,
                      std::size_t height, std::size_t pitch) {
  if (width == 0 || height == 0) return Status::success;
  if (dst % element != 0 || (height > 1 && (pitch % element != 0 || pitch < width * element))) {
    return misuse(Status::invalid_value, std::string(api) + ": misaligned address or pitch");
  }
  const std::size_t extent = (height - 1) * pitch + width * element;
  Span span;
  if (const Status s = resolve(dst, extent, Access::kDeviceOrPinned, api, &span);
      s != Status::success) {
    return s;
  }
  stream->enqueue(api, [api, span, value, element, width, height, pitch] {
    std::byte* base = span.bytes();
    if (base == nullptr) return freed(api, span);
    if (element == 1 && height == 1) {
      std::memset(base, static_cast<int>(value & 0xff), width);
      return Status::success;
    }
    for (std::size_t row = 0; row < height; ++row) {
      std::byte* p = base + row * pitch;
      // One element, then doubling copies of what is written: a 256 MiB
      // memset in a benchmark's rehearsal takes a fraction of a second.
      std::memcpy(p, &value, element);
      const std::size_t total = width * element;
      for (std::size_t done = element; done < total;) {
        const std::size_t n = done < total - done ? done : total - done;
        std::memcpy(p + done, p, n);
        done += n;
      }
    }
    return Status::success;
  });
  return Status::success;
}

Status enqueue_free(const char* api, const StreamRef& stream, std::uintptr_t address) {
  BlockRef block;
  if (const Status s = take_device_block(address, api, &block); s != Status::success) return s;
  stream->enqueue(api, [block] {
    release_device_block(block);
    return Status::success;
  });
  return Status::success;
}

}  // namespace anydev_emu::core
