// SPDX-License-Identifier: Apache-2.0
// For the tests that run a backend against an emulator (cuda_backend_test,
// hip_backend_test): an anydev context or buffer released at the end of the
// scope, keeping the status and the error text of its creation. Each object
// owns its handle; not thread-safe (one test's objects).
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_SCOPED_ANYDEV_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_SCOPED_ANYDEV_H_

#include <cstddef>
#include <string>

#include "anydev/anydev.h"

namespace anydev_emu::testing {

inline std::string last_error() { return anydev_last_error_message(); }

// Keeps a creation's status and, on failure, the error text.
class Created {
 public:
  anydev_status_t status() const { return status_; }
  const std::string& error() const { return error_; }

 protected:
  void created(anydev_status_t status) {
    status_ = status;
    if (status != ANYDEV_SUCCESS) error_ = last_error();
  }

 private:
  anydev_status_t status_ = ANYDEV_SUCCESS;
  std::string error_;
};

// A context of `backend` on `device`.
class ScopedContext : public Created {
 public:
  ScopedContext(const char* backend, int device) {
    created(anydev_context_create(backend, device, &ctx_));
  }
  ~ScopedContext() {
    if (ctx_ != nullptr) anydev_context_release(ctx_);
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  anydev_context_t get() const { return ctx_; }

 private:
  anydev_context_t ctx_ = nullptr;
};

// A buffer of `count` elements.
class ScopedBuffer : public Created {
 public:
  ScopedBuffer(anydev_context_t ctx, anydev_memory_kind_t kind, anydev_dtype_t dtype,
               std::size_t count) {
    created(anydev_buffer_create(ctx, kind, dtype, count, &buf_));
  }
  ~ScopedBuffer() {
    if (buf_ != nullptr) anydev_buffer_release(buf_);
  }
  ScopedBuffer(const ScopedBuffer&) = delete;
  ScopedBuffer& operator=(const ScopedBuffer&) = delete;
  anydev_buffer_t get() const { return buf_; }

 private:
  anydev_buffer_t buf_ = nullptr;
};

}  // namespace anydev_emu::testing

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_SCOPED_ANYDEV_H_
