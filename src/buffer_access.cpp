#include "buffer_access.h"

namespace anydev::core {

anydev_status_t access_buffer(const char* op, const anydev_buffer_s* buf, const char* what,
                              BufferView* out) {
  if (buf == nullptr) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, what, " is NULL");
  if (anydev_status_t s = check_fork(op, buf, "buffer"); s != ANYDEV_SUCCESS) return s;
  std::lock_guard lock(buf->mutex);
  if (buf->taken) {
    return fail(ANYDEV_ERROR_INVALID_STATE, op, what,
                " is empty: its memory was handed to the caller with take_ptr()");
  }
  out->context = buf->context;
  out->allocation = buf->allocation;
  out->handle = buf;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::core
