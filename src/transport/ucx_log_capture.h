// SPDX-License-Identifier: Apache-2.0
// Holds back what UCX logs on the calling thread for the life of the object,
// so that a call whose failure anydev expects and handles (an endpoint asked
// for peer failure detection over a transport without it) does not print
// UCX's ERROR lines into the application's output. Messages of other threads
// pass through to UCX's own handlers unchanged.
//
// Ownership: the capture owns the text it collects. Thread-safe: any number
// of threads may hold captures at once; the handler is pushed onto UCX's
// handler stack and popped under one process-wide mutex. Where UCX lacks
// ucs_log_push_handler the capture does nothing and text() stays empty.
#ifndef ANYDEV_SRC_TRANSPORT_UCX_LOG_CAPTURE_H_
#define ANYDEV_SRC_TRANSPORT_UCX_LOG_CAPTURE_H_

#include <string>

#include "transport/ucx_library.h"

namespace anydev::core::transport {

class UcxLogCapture {
 public:
  explicit UcxLogCapture(const UcxLibrary& ucx);
  ~UcxLogCapture();
  UcxLogCapture(const UcxLogCapture&) = delete;
  UcxLogCapture& operator=(const UcxLogCapture&) = delete;

  // What UCX logged on this thread so far, one message a line.
  const std::string& text() const { return text_; }

 private:
  const UcxLibrary& ucx_;
  bool pushed_ = false;
  std::string text_;
  std::string* outer_ = nullptr;  // the thread's enclosing capture, if any
};

}  // namespace anydev::core::transport

#endif  // ANYDEV_SRC_TRANSPORT_UCX_LOG_CAPTURE_H_
