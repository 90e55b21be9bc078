// SPDX-License-Identifier: Apache-2.0
// C entry points: host memory the caller owns, registered with the device
// (docs/registered-memory.md). The registration's lifetime is
// memory/registered_memory.h's; the backend pins and unpins.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <functional>

#include "anydev/anydev.h"
#include "api/api_common.h"
#include "api/buffer_access.h"
#include "api/registration.h"
#include "memory/registered_memory.h"
#include "support/backend_calls.h"
#include "support/dtype.h"

using namespace anydev::core;

namespace {

// The argument rules of anydev_context_register_host_memory (anydev.h), in
// the order the header lists them.
anydev_status_t check_range(const char* op, void* pointer, std::size_t bytes, anydev_dtype_t dtype,
                            DTypeTraits* traits_out) {
  const auto traits = dtype_traits(dtype);
  if (!traits) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown dtype ", static_cast<int>(dtype));
  }
  if (pointer == nullptr) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "pointer is NULL (", bytes,
                " bytes): there is no memory to register");
  }
  if (bytes == 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "bytes is 0 at ", pointer,
                ": a registration covers at least one byte");
  }
  const auto start = reinterpret_cast<std::uintptr_t>(pointer);
  if (bytes > static_cast<std::size_t>(PTRDIFF_MAX) || start > UINTPTR_MAX - bytes) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, bytes, " bytes at ", pointer,
                " run past the end of the address space");
  }
  if (bytes % traits->size != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, bytes, " bytes at ", pointer,
                " are not a whole number of ", traits->name, " elements (", traits->size,
                " bytes each)");
  }
  if (start % traits->alignment != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, pointer, " is not aligned for ", traits->name,
                " elements (", traits->alignment,
                " bytes); register it as uint8 to use any alignment");
  }
  // msync fails with ENOMEM when part of the pages is not mapped: checked
  // here so that every backend (and every driver) refuses it alike.
  const long page_value = ::sysconf(_SC_PAGESIZE);
  const std::uintptr_t page = page_value > 0 ? static_cast<std::uintptr_t>(page_value) : 4096;
  const std::uintptr_t first = start & ~(page - 1);
  const std::uintptr_t last = start + bytes - 1;
  if (::msync(reinterpret_cast<void*>(first), last - first + 1, MS_ASYNC) != 0 && errno == ENOMEM) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "bytes [", pointer, ", ",
                reinterpret_cast<void*>(start + bytes),
                ") are not all mapped memory of this process");
  }
  *traits_out = *traits;
  return ANYDEV_SUCCESS;
}

}  // namespace

namespace anydev::core {

anydev_status_t register_host_range(const char* op, const std::shared_ptr<const ContextState>& ctx,
                                    void* pointer, std::size_t bytes, anydev_dtype_t dtype,
                                    std::function<void()> on_unregistered, anydev_buffer_t* out) {
  DTypeTraits traits{};
  if (anydev_status_t s = check_range(op, pointer, bytes, dtype, &traits); s != ANYDEV_SUCCESS) {
    return s;
  }
  const ContextState& state = *ctx;
  const Backend* const backend = state.backend;
  const anydev_backend_table_t* table = backend->table;
  if (table->host_register == nullptr || table->host_unregister == nullptr) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", backend->name,
                " backend does not register host memory (its table has no ",
                table->host_register == nullptr ? "host_register" : "host_unregister", " entry)");
  }
  return guarded(op, [&] {
    const auto start = reinterpret_cast<std::uintptr_t>(pointer);
    std::string conflict;
    if (!claim_registration(backend, start, bytes, &conflict)) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "cannot register bytes [", pointer, ", ",
                  reinterpret_cast<void*>(start + bytes), ") on ",
                  describe_device(backend, state.device), ": ", conflict,
                  " (a page is registered once; release the other buffer first)");
    }
    void* handle = nullptr;
    if (anydev_status_t s = bk(table).host_register(state.device, pointer, bytes, &handle);
        s != ANYDEV_SUCCESS) {
      unclaim_registration(backend, start);
      return fail(s, op, "registering ", bytes, " bytes of host memory at ", pointer, " on ",
                  describe_device(backend, state.device), ": ", last_error_message());
    }
    std::shared_ptr<Allocation> allocation;
    try {
      allocation = make_registered_allocation(backend, state.device, handle, pointer, bytes,
                                              state.stream, std::move(on_unregistered));
    } catch (...) {
      bk(table).host_unregister(state.device, handle);
      unclaim_registration(backend, start);
      throw;
    }
    auto* buf = new anydev_buffer_s;
    buf->fork_generation = fork_generation();
    buf->kind = ANYDEV_MEMORY_HOST;
    buf->dtype = dtype;
    buf->count = bytes / traits.size;
    buf->size_bytes = bytes;
    buf->offset_bytes = 0;
    buf->context = ctx;
    buf->allocation = std::move(allocation);
    *out = buf;
    return ANYDEV_SUCCESS;
  });
}

}  // namespace anydev::core

extern "C" {

anydev_status_t anydev_context_register_host_memory(anydev_context_t ctx, void* pointer,
                                                    size_t bytes, anydev_dtype_t dtype,
                                                    anydev_unregistered_callback_t on_unregistered,
                                                    void* user_data, anydev_buffer_t* out) {
  static constexpr const char* op = "anydev_context_register_host_memory";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    std::function<void()> done;
    if (on_unregistered != nullptr)
      done = [on_unregistered, user_data] { on_unregistered(user_data); };
    return register_host_range(op, ctx->state, pointer, bytes, dtype, std::move(done), out);
  });
}

anydev_status_t anydev_buffer_is_registered(anydev_buffer_t buf, int* registered) {
  static constexpr const char* op = "anydev_buffer_is_registered";
  ANYDEV_REQUIRE_ARG(op, registered);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  *registered = view.allocation->registered() ? 1 : 0;
  return ANYDEV_SUCCESS;
}

}  // extern "C"
