// SPDX-License-Identifier: Apache-2.0
#include "api/buffer_access.h"

#include <utility>

namespace anydev::core {
namespace {

// NULL and fork checks: what can be told before the handle is locked.
anydev_status_t check_handle(const char* op, const anydev_buffer_s* buf, const char* what) {
  if (buf == nullptr) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, what, " is NULL");
  return check_fork(op, buf, "buffer");
}

// The handle's mutex is held.
anydev_status_t check_not_taken(const char* op, const anydev_buffer_s* buf, const char* what) {
  if (!buf->taken) return ANYDEV_SUCCESS;
  return fail(ANYDEV_ERROR_INVALID_STATE, op, what,
              " is empty: its memory was handed to the caller with take_ptr()");
}

void fill_held(const anydev_buffer_s* buf, HeldBuffer* out) {
  out->handle = buf;
  out->allocation = buf->allocation.get();
  out->context = buf->context.get();
}

}  // namespace

anydev_status_t access_buffer(const char* op, const anydev_buffer_s* buf, const char* what,
                              BufferView* out) {
  if (anydev_status_t s = check_handle(op, buf, what); s != ANYDEV_SUCCESS) return s;
  std::lock_guard lock(buf->mutex);
  if (anydev_status_t s = check_not_taken(op, buf, what); s != ANYDEV_SUCCESS) return s;
  out->context = buf->context;
  out->allocation = buf->allocation;
  out->handle = buf;
  return ANYDEV_SUCCESS;
}

BufferHold::~BufferHold() { unlock(); }

void BufferHold::unlock() noexcept {
  for (SmallMutex*& m : locked_) {
    if (m != nullptr) m->unlock();
    m = nullptr;
  }
}

[[gnu::hot]] anydev_status_t BufferHold::hold(const char* op, const anydev_buffer_s* buf,
                                              const char* what, HeldBuffer* out) {
  if (anydev_status_t s = check_handle(op, buf, what); s != ANYDEV_SUCCESS) return s;
  buf->mutex.lock();
  locked_[0] = &buf->mutex;
  if (anydev_status_t s = check_not_taken(op, buf, what); s != ANYDEV_SUCCESS) {
    unlock();
    return s;
  }
  fill_held(buf, out);
  return ANYDEV_SUCCESS;
}

[[gnu::hot]] anydev_status_t BufferHold::hold(const char* op, const anydev_buffer_s* dst,
                                              const char* dst_what, HeldBuffer* d,
                                              const anydev_buffer_s* src, const char* src_what,
                                              HeldBuffer* s) {
  if (anydev_status_t st = check_handle(op, dst, dst_what); st != ANYDEV_SUCCESS) return st;
  if (anydev_status_t st = check_handle(op, src, src_what); st != ANYDEV_SUCCESS) return st;
  // Address order, so that copies a->b and b->a on two threads cannot
  // deadlock; the same handle is locked once.
  SmallMutex* first = &dst->mutex;
  SmallMutex* second = &src->mutex;
  if (second < first) std::swap(first, second);
  first->lock();
  locked_[0] = first;
  if (second != first) {
    second->lock();
    locked_[1] = second;
  }
  anydev_status_t st = check_not_taken(op, dst, dst_what);
  if (st == ANYDEV_SUCCESS) st = check_not_taken(op, src, src_what);
  if (st != ANYDEV_SUCCESS) {
    unlock();
    return st;
  }
  fill_held(dst, d);
  fill_held(src, s);
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::core
