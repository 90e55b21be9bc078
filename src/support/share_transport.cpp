// SPDX-License-Identifier: Apache-2.0
#include "support/share_transport.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "support/status.h"

namespace anydev::core {
namespace {

// The wire form: the handle's bytes and its fd count, fds beside them.
struct Message {
  std::uint8_t data[ANYDEV_SHARE_HANDLE_BYTES];
  std::uint32_t fd_count;
};

std::string errno_text(int error) { return cat(std::strerror(error), " (errno ", error, ")"); }

void close_all(const int* fds, int count) {
  for (int i = 0; i < count; ++i) {
    if (fds[i] >= 0) ::close(fds[i]);
  }
}

}  // namespace

bool fd_is_open(int fd) { return fd >= 0 && ::fcntl(fd, F_GETFD) != -1; }

anydev_status_t send_share_handle(const char* op, int socket, const anydev_share_handle_t& handle) {
  int domain = 0;
  socklen_t length = sizeof domain;
  if (::getsockopt(socket, SOL_SOCKET, SO_DOMAIN, &domain, &length) != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "socket ", socket,
                " is not a socket: ", errno_text(errno));
  }
  if (domain != AF_UNIX) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "socket ", socket, " is of address family ",
                domain, "; file descriptors travel only over AF_UNIX sockets");
  }
  if (handle.fd_count > ANYDEV_SHARE_MAX_FDS) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "handle->fd_count is ", handle.fd_count,
                "; at most ", ANYDEV_SHARE_MAX_FDS);
  }
  for (std::uint32_t i = 0; i < handle.fd_count; ++i) {
    if (!fd_is_open(handle.fds[i])) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "handle->fds[", i, "] = ", handle.fds[i],
                  " is not an open file descriptor");
    }
  }
  Message message;
  std::memcpy(message.data, handle.data, sizeof message.data);
  message.fd_count = handle.fd_count;
  const auto* bytes = reinterpret_cast<const char*>(&message);
  std::size_t sent = 0;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * ANYDEV_SHARE_MAX_FDS)] = {};
  while (sent < sizeof message) {
    iovec part{const_cast<char*>(bytes + sent), sizeof message - sent};
    msghdr header{};
    header.msg_iov = &part;
    header.msg_iovlen = 1;
    // The fds ride with the first byte.
    if (sent == 0 && handle.fd_count > 0) {
      header.msg_control = control;
      header.msg_controllen = CMSG_SPACE(sizeof(int) * handle.fd_count);
      cmsghdr* cmsg = CMSG_FIRSTHDR(&header);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN(sizeof(int) * handle.fd_count);
      std::memcpy(CMSG_DATA(cmsg), handle.fds, sizeof(int) * handle.fd_count);
    }
    const ssize_t n = ::sendmsg(socket, &header, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ANYDEV_ERROR_DEVICE, op, "sendmsg on socket ", socket, " failed after ", sent,
                  " of ", sizeof message, " bytes: ", errno_text(errno));
    }
    sent += static_cast<std::size_t>(n);
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t receive_share_handle(const char* op, int socket, anydev_share_handle_t* out) {
  Message message{};
  auto* bytes = reinterpret_cast<char*>(&message);
  std::size_t received = 0;
  int fds[ANYDEV_SHARE_MAX_FDS + 8];
  int fd_count = 0;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)];
  const auto give_up = [&](anydev_status_t status, auto&&... parts) {
    close_all(fds, fd_count);
    return fail(status, op, parts...);
  };
  while (received < sizeof message) {
    iovec part{bytes + received, sizeof message - received};
    msghdr header{};
    header.msg_iov = &part;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(socket, &header, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return give_up(ANYDEV_ERROR_DEVICE, "recvmsg on socket ", socket, " failed after ", received,
                     " of ", sizeof message, " bytes: ", errno_text(errno));
    }
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&header); cmsg != nullptr;
         cmsg = CMSG_NXTHDR(&header, cmsg)) {
      if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
      const int count = static_cast<int>((cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof fd);
        if (fd_count < static_cast<int>(sizeof fds / sizeof fds[0])) {
          fds[fd_count++] = fd;
        } else {
          ::close(fd);
        }
      }
    }
    if ((header.msg_flags & MSG_CTRUNC) != 0) {
      return give_up(ANYDEV_ERROR_INVALID_ARGUMENT, "the message on socket ", socket,
                     " carried more file descriptors than a share handle has (",
                     ANYDEV_SHARE_MAX_FDS, "); not a handle");
    }
    if (n == 0) {
      return give_up(ANYDEV_ERROR_OUT_OF_RANGE, "the peer closed socket ", socket, " after ",
                     received, " of the ", sizeof message, " bytes of a share handle");
    }
    received += static_cast<std::size_t>(n);
  }
  if (message.fd_count > ANYDEV_SHARE_MAX_FDS || static_cast<int>(message.fd_count) != fd_count) {
    return give_up(ANYDEV_ERROR_INVALID_ARGUMENT, "the message on socket ", socket, " says ",
                   message.fd_count, " file descriptor(s) but carried ", fd_count,
                   "; not a handle sent with anydev_share_handle_send");
  }
  std::memcpy(out->data, message.data, sizeof message.data);
  out->fd_count = message.fd_count;
  for (int i = 0; i < ANYDEV_SHARE_MAX_FDS; ++i) out->fds[i] = i < fd_count ? fds[i] : -1;
  return ANYDEV_SUCCESS;
}

anydev_status_t fetch_process_fd(const char* op, std::int32_t pid, int fd, int* out) {
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  const long pidfd = ::syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) {
    const int error = errno;
    if (error == ENOSYS) {
      return fail(ANYDEV_ERROR_UNSUPPORTED, op,
                  "pidfd_open is not available in this kernel (Linux 5.3+ needed)");
    }
    return fail(ANYDEV_ERROR_INVALID_STATE, op, "the exporting process ", pid,
                " cannot be opened: ", errno_text(error), error == ESRCH ? " (it has exited)" : "");
  }
  const long copied = ::syscall(SYS_pidfd_getfd, static_cast<int>(pidfd), fd, 0);
  const int error = errno;
  ::close(static_cast<int>(pidfd));
  if (copied < 0) {
    if (error == ENOSYS) {
      return fail(ANYDEV_ERROR_UNSUPPORTED, op,
                  "pidfd_getfd is not available in this kernel (Linux 5.6+ needed)");
    }
    return fail(ANYDEV_ERROR_INVALID_STATE, op, "copying file descriptor ", fd, " of process ", pid,
                " failed: ", errno_text(error),
                error == EPERM ? " (needs ptrace permission over it: the same user and "
                                 "kernel.yama.ptrace_scope 0, or being its ancestor)"
                               : "",
                error == EBADF ? " (the exporter no longer holds the object)" : "");
  }
  *out = static_cast<int>(copied);
  return ANYDEV_SUCCESS;
#else
  (void)pid;
  (void)fd;
  (void)out;
  return fail(ANYDEV_ERROR_UNSUPPORTED, op, "this system has no pidfd_getfd");
#endif
}

}  // namespace anydev::core
