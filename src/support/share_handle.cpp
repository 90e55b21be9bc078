// SPDX-License-Identifier: Apache-2.0
#include "support/share_handle.h"

#include <algorithm>
#include <cstring>

#include "anydev/kit/cat.h"

namespace anydev::core {
namespace {

// Field offsets in the handle's bytes; the checksum covers [0, kChecksum).
constexpr char kMagic[8] = {'A', 'N', 'Y', 'D', 'E', 'V', 'S', 'H'};
constexpr std::size_t kVersion = 8;
constexpr std::size_t kObject = 12;
constexpr std::size_t kBackend = 16;  // 32 bytes, NUL-terminated
constexpr std::size_t kDevice = 48;
constexpr std::size_t kMemoryKind = 52;
constexpr std::size_t kDtype = 56;
constexpr std::size_t kFdCount = 60;
constexpr std::size_t kCount = 64;
constexpr std::size_t kOffset = 72;
constexpr std::size_t kAllocationBytes = 80;
constexpr std::size_t kPid = 88;
constexpr std::size_t kExporterFds = 92;  // two int32
constexpr std::size_t kPayloadSize = 100;
constexpr std::size_t kPayload = 104;
constexpr std::size_t kChecksum = ANYDEV_SHARE_HANDLE_BYTES - 8;
static_assert(kPayload + ANYDEV_BK_SHARE_PAYLOAD_MAX <= kChecksum, "the handle's fields fit");
static_assert(ANYDEV_SHARE_MAX_FDS == ANYDEV_BK_SHARE_MAX_FDS, "one fd bound for both ABIs");

template <class T>
void put(std::uint8_t* data, std::size_t at, T value) {
  std::memcpy(data + at, &value, sizeof value);
}
template <class T>
T get(const std::uint8_t* data, std::size_t at) {
  T value;
  std::memcpy(&value, data + at, sizeof value);
  return value;
}

// FNV-1a: detects accidental damage and truncation (zeroed tails), not
// tampering; the backend checks its payload against the fds it receives.
std::uint64_t checksum(const std::uint8_t* data, std::size_t bytes) {
  std::uint64_t hash = 14695981039346656037ull;
  for (std::size_t i = 0; i < bytes; ++i) {
    hash ^= data[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

const char* shared_object_name(SharedObject object) {
  return object == SharedObject::memory ? "memory" : "an event";
}

void encode_share_record(const ShareRecord& record, std::uint8_t* data) {
  std::memset(data, 0, ANYDEV_SHARE_HANDLE_BYTES);
  std::memcpy(data, kMagic, sizeof kMagic);
  put<std::uint32_t>(data, kVersion, kShareFormatVersion);
  put<std::uint32_t>(data, kObject, static_cast<std::uint32_t>(record.object));
  std::memcpy(data + kBackend, record.backend.data(),
              std::min(record.backend.size(), kShareBackendNameMax));
  put<std::int32_t>(data, kDevice, record.device);
  put<std::int32_t>(data, kMemoryKind, record.memory_kind);
  put<std::int32_t>(data, kDtype, record.dtype);
  put<std::uint32_t>(data, kFdCount, record.fd_count);
  put<std::uint64_t>(data, kCount, record.count);
  put<std::uint64_t>(data, kOffset, record.offset_bytes);
  put<std::uint64_t>(data, kAllocationBytes, record.allocation_bytes);
  put<std::int32_t>(data, kPid, record.exporter_pid);
  put<std::int32_t>(data, kExporterFds, record.exporter_fds[0]);
  put<std::int32_t>(data, kExporterFds + 4, record.exporter_fds[1]);
  put<std::uint32_t>(data, kPayloadSize, record.payload_size);
  std::memcpy(data + kPayload, record.payload, record.payload_size);
  put<std::uint64_t>(data, kChecksum, checksum(data, kChecksum));
}

std::optional<ShareRecord> decode_share_record(const std::uint8_t* data, std::string* why) {
  if (std::memcmp(data, kMagic, sizeof kMagic) != 0) {
    *why = "its first 8 bytes are not \"ANYDEVSH\": not an anydev share handle";
    return std::nullopt;
  }
  const auto version = get<std::uint32_t>(data, kVersion);
  if (version != kShareFormatVersion) {
    *why = kit::cat("its format version is ", version, "; this anydev reads version ",
                    kShareFormatVersion);
    return std::nullopt;
  }
  const auto stored = get<std::uint64_t>(data, kChecksum);
  const auto computed = checksum(data, kChecksum);
  if (stored != computed) {
    *why = kit::cat("its checksum 0x", std::hex, stored, " does not match its contents (0x",
                    computed, "): the handle was changed or truncated");
    return std::nullopt;
  }
  ShareRecord record;
  const auto object = get<std::uint32_t>(data, kObject);
  if (object != 1 && object != 2) {
    *why = kit::cat("it describes object kind ", object, " (1 memory, 2 event)");
    return std::nullopt;
  }
  record.object = static_cast<SharedObject>(object);
  const char* name = reinterpret_cast<const char*>(data + kBackend);
  const std::size_t length = strnlen(name, kShareBackendNameMax + 1);
  if (length == 0 || length > kShareBackendNameMax) {
    *why = "its backend name is empty or not terminated";
    return std::nullopt;
  }
  record.backend.assign(name, length);
  record.device = get<std::int32_t>(data, kDevice);
  record.memory_kind = get<std::int32_t>(data, kMemoryKind);
  record.dtype = get<std::int32_t>(data, kDtype);
  record.fd_count = get<std::uint32_t>(data, kFdCount);
  record.count = get<std::uint64_t>(data, kCount);
  record.offset_bytes = get<std::uint64_t>(data, kOffset);
  record.allocation_bytes = get<std::uint64_t>(data, kAllocationBytes);
  record.exporter_pid = get<std::int32_t>(data, kPid);
  record.exporter_fds[0] = get<std::int32_t>(data, kExporterFds);
  record.exporter_fds[1] = get<std::int32_t>(data, kExporterFds + 4);
  record.payload_size = get<std::uint32_t>(data, kPayloadSize);
  if (record.fd_count > ANYDEV_SHARE_MAX_FDS) {
    *why =
        kit::cat("it names ", record.fd_count, " file descriptors; at most ", ANYDEV_SHARE_MAX_FDS);
    return std::nullopt;
  }
  if (record.payload_size > ANYDEV_BK_SHARE_PAYLOAD_MAX) {
    *why = kit::cat("its backend payload is ", record.payload_size, " bytes; at most ",
                    ANYDEV_BK_SHARE_PAYLOAD_MAX);
    return std::nullopt;
  }
  if (record.device < 0) {
    *why = kit::cat("its device is ", record.device);
    return std::nullopt;
  }
  std::memcpy(record.payload, data + kPayload, record.payload_size);
  return record;
}

}  // namespace anydev::core
