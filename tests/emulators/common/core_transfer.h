// SPDX-License-Identifier: Apache-2.0
// Copies, fills and stream-ordered frees, queued on a stream the face has
// already looked up. Pointers are checked when the operation is enqueued
// (invalid_value, nothing queued) and again when it runs: memory freed in
// between makes the stream fail with illegal_address (sticky). Thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_TRANSFER_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_TRANSFER_H_

#include <cstddef>
#include <cstdint>

#include "core_memory.h"
#include "core_status.h"
#include "core_stream.h"

namespace anydev_emu::core {

// Copies `bytes` from `src` to `dst`, each of the kind its Access allows;
// zero bytes queue nothing.
Status enqueue_copy(const char* api, const StreamRef& stream, std::uintptr_t dst, Access dst_access,
                    std::uintptr_t src, Access src_access, std::size_t bytes);

// Checks a peer copy's pointers: `dst` must be device memory of `dst_device`
// and `src` of `src_device` (invalid_value otherwise). Zero bytes pass.
Status check_peer_copy(const char* api, std::uintptr_t dst, int dst_device, std::uintptr_t src,
                       int src_device, std::size_t bytes);

// Writes `width` elements of `element` bytes (the low bytes of `value`) in
// each of `height` rows `pitch` bytes apart, in device or pinned memory;
// invalid_value for a misaligned address or pitch; nothing for zero.
Status enqueue_memset(const char* api, const StreamRef& stream, std::uintptr_t dst,
                      std::uint32_t value, std::size_t element, std::size_t width,
                      std::size_t height, std::size_t pitch);

// Frees the live device allocation at `address` when the stream gets there;
// it is refused by later frees at once (invalid_value).
Status enqueue_free(const char* api, const StreamRef& stream, std::uintptr_t address);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_TRANSFER_H_
