// SPDX-License-Identifier: Apache-2.0
#include "transport/ucx_log_capture.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace anydev::core::transport {
namespace {

// The capture of this thread, if one is open.
thread_local std::string* t_capture = nullptr;

// UCX's handler stack is a plain array: the handler is pushed once for all
// the captures open at a time and popped with the last, under this mutex.
// Constant-initialized at namespace scope: no static guard for a fork to
// leave locked, and nothing to destroy at exit.
struct Pushed {
  std::mutex mutex;
  int captures = 0;
  bool on_stack = false;
};
constinit Pushed g_pushed;

ucs_log_func_rc_t capture_handler(const char* /*file*/, unsigned /*line*/, const char* /*function*/,
                                  ucs_log_level_t /*level*/,
                                  const ucs_log_component_config_t* /*component*/,
                                  const char* format, va_list ap) {
  std::string* into = t_capture;
  if (into == nullptr) return UCS_LOG_FUNC_RC_CONTINUE;
  char line[512];
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(line, sizeof line, format, copy);
  va_end(copy);
  if (n > 0) {
    if (!into->empty()) into->push_back('\n');
    into->append(line);
  }
  return UCS_LOG_FUNC_RC_STOP;
}

}  // namespace

UcxLogCapture::UcxLogCapture(const UcxLibrary& ucx) : ucx_(ucx) {
  if (ucx_.ucs_log_push_handler == nullptr || ucx_.ucs_log_pop_handler == nullptr ||
      ucx_.ucs_log_num_handlers == nullptr) {
    return;
  }
  Pushed& p = g_pushed;
  std::lock_guard lock(p.mutex);
  if (p.captures == 0) {
    // A full stack ignores the push; then nothing may be popped either.
    const unsigned before = ucx_.ucs_log_num_handlers();
    ucx_.ucs_log_push_handler(capture_handler);
    p.on_stack = ucx_.ucs_log_num_handlers() == before + 1;
  }
  if (!p.on_stack) return;
  ++p.captures;
  pushed_ = true;
  outer_ = t_capture;
  t_capture = &text_;
}

UcxLogCapture::~UcxLogCapture() {
  if (!pushed_) return;
  t_capture = outer_;
  Pushed& p = g_pushed;
  std::lock_guard lock(p.mutex);
  if (--p.captures == 0) {
    ucx_.ucs_log_pop_handler();
    p.on_stack = false;
  }
}

}  // namespace anydev::core::transport
