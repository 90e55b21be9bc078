// SPDX-License-Identifier: Apache-2.0
#include "file_output.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "status.h"

namespace anydev::core {

std::string write_file_replacing(const std::string& path,
                                 const std::function<bool(std::FILE*)>& write) {
  std::string pattern = path + ".XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return cat("cannot create a temporary file beside ", path, ": ", std::strerror(error));
  }
  const std::string temporary(name.data());
  std::FILE* file = ::fdopen(fd, "w");
  if (file == nullptr) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    return cat("cannot write ", temporary, ": ", std::strerror(error));
  }
  const bool written = write(file);
  const bool flushed = std::fflush(file) == 0;
  const int flush_error = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !flushed || !closed) {
    ::unlink(temporary.c_str());
    return cat("cannot write ", temporary, ": ",
               written ? std::strerror(flush_error) : "the writer failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return cat("cannot rename ", temporary, " to ", path, ": ", std::strerror(error));
  }
  return std::string();
}

}  // namespace anydev::core
