// SPDX-License-Identifier: Apache-2.0
// Moving a share handle's file descriptors between processes: over a
// connected AF_UNIX socket (SCM_RIGHTS), or by copying them out of the
// exporting process (pidfd_getfd). Each function sets the calling thread's
// last error (naming `op`, the values and errno) on failure and changes
// nothing the caller owns. Thread-safe (no shared state); a socket is used
// by one sender or receiver at a time.
#ifndef ANYDEV_SRC_SUPPORT_SHARE_TRANSPORT_H_
#define ANYDEV_SRC_SUPPORT_SHARE_TRANSPORT_H_

#include <cstdint>

#include "anydev/anydev.h"

namespace anydev::core {

// Sends handle.data, fd_count and the fds.
anydev_status_t send_share_handle(const char* op, int socket, const anydev_share_handle_t& handle);
// Receives one handle; on failure *out is untouched and every fd received
// is closed.
anydev_status_t receive_share_handle(const char* op, int socket, anydev_share_handle_t* out);
// Copies descriptor `fd` of process `pid` into this process (*out, close-on-
// exec).
anydev_status_t fetch_process_fd(const char* op, std::int32_t pid, int fd, int* out);
// True when `fd` is an open descriptor of this process.
bool fd_is_open(int fd);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_SHARE_TRANSPORT_H_
