// SPDX-License-Identifier: Apache-2.0
#include "support/file_output.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace anydev::core {
namespace {

// Six name characters for a temporary file. They need not be secret (O_EXCL
// makes a planted name harmless), only unlikely to collide.
std::string random_suffix() {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bits)) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    bits = (static_cast<std::uint64_t>(now.tv_nsec) * 0x9E3779B97F4A7C15ull) ^
           (static_cast<std::uint64_t>(::getpid()) << 32) ^ static_cast<std::uint64_t>(now.tv_sec);
  }
  std::string suffix;
  for (int i = 0; i < 6; ++i, bits /= 62) suffix += kChars[bits % 62];
  return suffix;
}

// Creates `path`.XXXXXX exclusively with mode 0666, so the umask (or the
// folder's default ACL) gives it the permissions any new file gets there;
// mkostemp would always make it 0600. Returns the descriptor (name in
// *name), or -1 with errno set.
int create_temporary(const std::string& path, std::string* name) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    *name = path + "." + random_suffix();
    const int fd =
        ::open(name->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

std::string why(const char* what, const std::string& file, int error) {
  return std::string(what) + file + ": " + std::strerror(error);
}

std::string octal(unsigned mode) {
  char text[16];
  std::snprintf(text, sizeof text, "%04o", mode);
  return text;
}

}  // namespace

std::string write_file_replacing(const std::string& path,
                                 const std::function<bool(std::FILE*)>& write) {
  std::string temporary;
  const int fd = create_temporary(path, &temporary);
  if (fd < 0) return why("cannot create a temporary file beside ", path, errno);
  // Replacing a file keeps its permissions, as writing it in place would.
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode) &&
      ::fchmod(fd, existing.st_mode & 07777) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    return "cannot give " + temporary + " the mode " + octal(existing.st_mode & 07777) + " of " +
           path + ": " + std::strerror(error);
  }
  std::FILE* file = ::fdopen(fd, "w");
  if (file == nullptr) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    return why("cannot write ", temporary, error);
  }
  const bool written = write(file);
  const bool flushed = std::fflush(file) == 0;
  const int flush_error = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !flushed || !closed) {
    ::unlink(temporary.c_str());
    return "cannot write " + temporary + ": " +
           (written ? std::strerror(flush_error) : "the writer failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return "cannot rename " + temporary + " to " + path + ": " + std::strerror(error);
  }
  return std::string();
}

}  // namespace anydev::core
