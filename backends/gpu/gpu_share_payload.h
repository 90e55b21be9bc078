// SPDX-License-Identifier: Apache-2.0
// What a GPU backend writes into a share handle's payload (gpu_share.h) and
// how an importer checks it: the backend, the kind, the device's UUID, the
// sizes and the identity of the fd that travels with it. Plain functions
// over the call's own data: thread-safe.
#ifndef ANYDEV_BACKENDS_GPU_GPU_SHARE_PAYLOAD_H_
#define ANYDEV_BACKENDS_GPU_GPU_SHARE_PAYLOAD_H_

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "gpu_state.h"

namespace anydev::gpu {

// What the payload says (same machine, same build: a plain struct checked
// by magic, version and size).
struct SharePayload {
  char magic[8];  // "gpu" + the API's name
  std::uint32_t version;
  std::int32_t kind;  // anydev_bk_memory_kind_t, or kEventKind
  std::uint8_t uuid[16];
  std::uint64_t bytes;   // what was asked for
  std::uint64_t length;  // what is mapped (granularity or pages)
  std::uint64_t st_dev;  // the fd's identity
  std::uint64_t st_ino;
  std::uint8_t ipc[64];  // the event's IPC handle
};
static_assert(sizeof(SharePayload) <= ANYDEV_BK_SHARE_PAYLOAD_MAX);
inline constexpr std::int32_t kEventKind = -1;

template <class Api>
void share_magic(char (&magic)[8]) {
  std::memset(magic, 0, sizeof magic);
  std::memcpy(magic, "gpu", 3);
  std::strncpy(magic + 3, Api::kName, sizeof magic - 3);
}

inline std::string errno_text(int error) {
  char buffer[128] = {};
  return strerror_r(error, buffer, sizeof buffer);
}

inline std::string uuid_text(const std::uint8_t (&uuid)[16]) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += kHex[uuid[i] >> 4];
    text += kHex[uuid[i] & 15];
  }
  return text;
}

inline std::size_t share_page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// Puts the identity of exported `fd` into the payload, for the importer's check.
template <class Api>
anydev_status_t describe_fd(int fd, SharePayload* payload, const char* operation) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return report_error<Api>(ANYDEV_ERROR_DEVICE, cat(operation, ": fstat of the exported fd ", fd,
                                                      " failed: ", errno_text(errno)));
  }
  payload->st_dev = info.st_dev;
  payload->st_ino = info.st_ino;
  return ANYDEV_SUCCESS;
}

// The common start of an export: magic, version, kind and the device's UUID.
template <class Api>
SharePayload start_payload(std::int32_t kind, int device) {
  SharePayload payload{};
  share_magic<Api>(payload.magic);
  payload.version = 1;
  payload.kind = kind;
  Api::device_uuid(device, payload.uuid);
  return payload;
}

// Hands `fd` (owned by the caller until this succeeds) and `payload` to *out;
// closes fd when its identity cannot be taken, so nothing leaks.
template <class Api>
anydev_status_t finish_export(int fd, SharePayload* payload, const char* operation,
                              anydev_bk_share_t* out) {
  if (const anydev_status_t e = describe_fd<Api>(fd, payload, operation); e != ANYDEV_SUCCESS) {
    ::close(fd);
    return e;
  }
  std::memcpy(out->payload, payload, sizeof *payload);
  out->payload_size = sizeof *payload;
  out->fd_count = 1;
  out->fds[0] = fd;
  return ANYDEV_SUCCESS;
}

// Checks that `in` is this backend's description of `kind` on `device`,
// that its fd is the one exported; fills *payload.
template <class Api>
anydev_status_t check_payload(int device, const anydev_bk_share_t* in, std::int32_t kind,
                              const char* operation, SharePayload* payload) {
  if (in == nullptr) return null_argument<Api>(operation, "in");
  if (in->payload_size != sizeof *payload) {
    return report_error<Api>(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat(Api::kName, " ", operation, ": the payload is ", in->payload_size, " bytes, expected ",
            sizeof *payload, ": not exported by the ", Api::kName, " backend"));
  }
  std::memcpy(payload, in->payload, sizeof *payload);
  char magic[8];
  share_magic<Api>(magic);
  if (std::memcmp(payload->magic, magic, sizeof magic) != 0 || payload->version != 1) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat(Api::kName, " ", operation, ": the payload is not the ",
                                 Api::kName, " backend's description (magic or version differs)"));
  }
  if (payload->kind != kind) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat(Api::kName, " ", operation, ": the payload describes ",
                                 payload->kind == kEventKind ? "an event" : "memory", " of kind ",
                                 payload->kind, " but kind ", kind, " was asked for"));
  }
  std::uint8_t mine[16] = {};
  Api::device_uuid(device, mine);
  if (std::memcmp(mine, payload->uuid, sizeof mine) != 0) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat(Api::kName, " ", operation, ": the handle was exported from the ",
                                 Api::kName, " device with UUID ", uuid_text(payload->uuid),
                                 ", not from device ", device, " (UUID ", uuid_text(mine), ")"));
  }
  if (in->fd_count != 1) {
    return report_error<Api>(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat(Api::kName, " ", operation, ": ", in->fd_count, " file descriptors given, 1 expected"));
  }
  struct stat info {};
  if (::fstat(in->fds[0], &info) != 0) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat(Api::kName, " ", operation, ": fd ", in->fds[0],
                                 " cannot be read: ", errno_text(errno)));
  }
  if (info.st_dev != payload->st_dev || info.st_ino != payload->st_ino) {
    return report_error<Api>(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat(Api::kName, " ", operation, ": fd ", in->fds[0], " is inode ", info.st_ino,
            ", not the exported one (inode ", payload->st_ino, ")"));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_SHARE_PAYLOAD_H_
