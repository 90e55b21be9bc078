// SPDX-License-Identifier: Apache-2.0
// The bytes of anydev_share_handle_t.data: what one process tells another
// about a shared buffer or event (docs/sharing.md, "The handle"). A fixed
// little table of fields, a backend's opaque payload, and a checksum over
// all of it, so that a damaged, truncated or hand-made handle is refused
// with a reason before any backend or file descriptor is touched.
//
// Pure functions on values; thread-safe.
#ifndef ANYDEV_SRC_SUPPORT_SHARE_HANDLE_H_
#define ANYDEV_SRC_SUPPORT_SHARE_HANDLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "anydev/anydev.h"
#include "anydev/backend.h"

namespace anydev::core {

enum class SharedObject : std::uint32_t { memory = 1, event = 2 };

// The decoded handle. For an event, memory_kind, dtype, count,
// offset_bytes and allocation_bytes are 0.
struct ShareRecord {
  SharedObject object = SharedObject::memory;
  std::string backend;  // at most kShareBackendNameMax characters
  std::int32_t device = 0;
  std::int32_t memory_kind = 0;  // anydev_memory_kind_t
  std::int32_t dtype = 0;        // anydev_dtype_t
  std::uint64_t count = 0;       // elements of the exported view
  std::uint64_t offset_bytes = 0;
  std::uint64_t allocation_bytes = 0;
  std::int32_t exporter_pid = 0;
  // The exporter's own descriptors of the object (for pidfd_getfd), and how
  // many a handle carries.
  std::uint32_t fd_count = 0;
  std::int32_t exporter_fds[ANYDEV_BK_SHARE_MAX_FDS] = {-1, -1};
  std::uint32_t payload_size = 0;
  std::uint8_t payload[ANYDEV_BK_SHARE_PAYLOAD_MAX] = {};
};

inline constexpr std::size_t kShareBackendNameMax = 31;
inline constexpr std::uint32_t kShareFormatVersion = 1;

// Writes `record` into `data` (ANYDEV_SHARE_HANDLE_BYTES bytes). The record
// is the core's own and valid (names fit, sizes within bounds).
void encode_share_record(const ShareRecord& record, std::uint8_t* data);

// Reads `data`; on failure nullopt and *why says what is wrong ("the
// checksum ... does not match: the handle was changed or truncated").
std::optional<ShareRecord> decode_share_record(const std::uint8_t* data, std::string* why);

const char* shared_object_name(SharedObject object);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_SHARE_HANDLE_H_
