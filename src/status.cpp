// SPDX-License-Identifier: Apache-2.0
#include "status.h"

#include "format.h"

namespace anydev::core {
namespace {

struct LastError {
  anydev_status_t status = ANYDEV_SUCCESS;
  std::string message;
};

LastError& last_error() {
  thread_local LastError error;
  return error;
}

}  // namespace

anydev_status_t set_error(anydev_status_t status, std::string message) {
  LastError& error = last_error();
  error.status = status;
  error.message = controls_escaped(std::move(message));  // never a raw escape sequence
  return status;
}

anydev_status_t last_error_status() noexcept { return last_error().status; }

const std::string& last_error_message() noexcept { return last_error().message; }

void restore_last_error(anydev_status_t status, std::string message) noexcept {
  LastError& error = last_error();
  error.status = status;
  error.message = std::move(message);
}

void clear_last_error() noexcept {
  LastError& error = last_error();
  error.status = ANYDEV_SUCCESS;
  error.message.clear();
}

}  // namespace anydev::core
