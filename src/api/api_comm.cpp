// SPDX-License-Identifier: Apache-2.0
// C entry points: transfers between processes over UCX (docs/distributed.md;
// transport/communicator.h). Built without UCX's headers, every entry
// answers BACKEND_UNAVAILABLE with that reason.
#include <atomic>
#include <cstring>
#include <memory>
#include <string>

#include "anydev/anydev.h"
#include "api/api_common.h"
#include "api/buffer_access.h"
#include "api/capture.h"
#include "api/registration.h"
#include "support/dtype.h"
#include "support/range_check.h"
#if ANYDEV_HAVE_UCX
#include "transport/communicator.h"
#endif

using namespace anydev::core;

#if ANYDEV_HAVE_UCX
using transport::AllocatedMemory;
using transport::Communicator;
using transport::ExposedRegion;
using transport::RemoteRegion;
using transport::TransferKind;

// The handles: reference-counted, each owning one shared_ptr. Immutable.
struct anydev_comm_s {
  std::atomic<std::int64_t> refs{1};
  std::shared_ptr<Communicator> comm;
  std::string memory_types;
};
struct anydev_comm_region_s {
  std::shared_ptr<ExposedRegion> region;
};
struct anydev_comm_remote_s {
  std::shared_ptr<RemoteRegion> remote;
};

namespace {

anydev_status_t copy_bytes(const char* op, const std::vector<std::uint8_t>& bytes, void* out,
                           size_t capacity, size_t* size) {
  ANYDEV_REQUIRE_ARG(op, size);
  *size = bytes.size();
  if (out == nullptr && capacity == 0) return ANYDEV_SUCCESS;
  ANYDEV_REQUIRE_ARG(op, out);
  if (capacity < bytes.size()) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "needs ", bytes.size(), " bytes; capacity is ",
                capacity);
  }
  std::memcpy(out, bytes.data(), bytes.size());
  return ANYDEV_SUCCESS;
}

anydev_status_t enqueue(const char* op, anydev_comm_t comm, anydev_buffer_t buffer, int peer,
                        uint32_t tag, TransferKind kind, anydev_comm_remote_t remote,
                        size_t offset) {
  return guarded(op, [&] {
    ANYDEV_REQUIRE_ARG(op, comm);
    ANYDEV_REQUIRE_ARG(op, buffer);
    if (kind == TransferKind::put || kind == TransferKind::get) ANYDEV_REQUIRE_ARG(op, remote);
    BufferView view;
    if (anydev_status_t s = access_buffer(op, buffer, "buffer", &view); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (anydev_status_t s = check_not_capturing(op, *view.context->stream, "a transfer");
        s != ANYDEV_SUCCESS) {
      return s;
    }
    return comm->comm->enqueue(kind, buffer, peer, tag,
                               remote != nullptr ? remote->remote : nullptr, offset);
  });
}

}  // namespace

anydev_status_t anydev_comm_create(anydev_context_t ctx, uint32_t timeout_ms, anydev_comm_t* out) {
  static constexpr const char* op = "anydev_comm_create";
  return guarded(op, [&] {
    ANYDEV_REQUIRE_ARG(op, ctx);
    ANYDEV_REQUIRE_ARG(op, out);
    if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
    std::shared_ptr<Communicator> comm;
    if (anydev_status_t s = Communicator::create(ctx->state, timeout_ms, &comm);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    auto* handle = new anydev_comm_s;
    handle->memory_types = comm->memory_types();
    handle->comm = std::move(comm);
    *out = handle;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_comm_retain(anydev_comm_t comm) {
  ANYDEV_REQUIRE_ARG("anydev_comm_retain", comm);
  comm->refs.fetch_add(1, std::memory_order_relaxed);
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_comm_release(anydev_comm_t comm) {
  ANYDEV_REQUIRE_ARG("anydev_comm_release", comm);
  if (comm->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete comm;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_comm_address(anydev_comm_t comm, void* out, size_t capacity, size_t* size) {
  ANYDEV_REQUIRE_ARG("anydev_comm_address", comm);
  return copy_bytes("anydev_comm_address", comm->comm->address(), out, capacity, size);
}

anydev_status_t anydev_comm_connect(anydev_comm_t comm, const void* address, size_t size,
                                    int* peer) {
  static constexpr const char* op = "anydev_comm_connect";
  return guarded(op, [&] {
    ANYDEV_REQUIRE_ARG(op, comm);
    ANYDEV_REQUIRE_ARG(op, address);
    ANYDEV_REQUIRE_ARG(op, peer);
    return comm->comm->connect(address, size, peer);
  });
}

anydev_status_t anydev_comm_peer_count(anydev_comm_t comm, int* count) {
  ANYDEV_REQUIRE_ARG("anydev_comm_peer_count", comm);
  ANYDEV_REQUIRE_ARG("anydev_comm_peer_count", count);
  *count = comm->comm->peer_count();
  return ANYDEV_SUCCESS;
}

const char* anydev_comm_memory_types(anydev_comm_t comm) {
  return comm == nullptr ? "" : comm->memory_types.c_str();
}

anydev_status_t anydev_comm_enqueue_send(anydev_comm_t comm, anydev_buffer_t buffer, int peer,
                                         uint32_t tag) {
  return enqueue("anydev_comm_enqueue_send", comm, buffer, peer, tag, TransferKind::send, nullptr,
                 0);
}

anydev_status_t anydev_comm_enqueue_recv(anydev_comm_t comm, anydev_buffer_t buffer, int peer,
                                         uint32_t tag) {
  return enqueue("anydev_comm_enqueue_recv", comm, buffer, peer, tag, TransferKind::recv, nullptr,
                 0);
}

anydev_status_t anydev_comm_expose(anydev_comm_t comm, anydev_buffer_t buffer,
                                   anydev_comm_region_t* out) {
  static constexpr const char* op = "anydev_comm_expose";
  return guarded(op, [&] {
    ANYDEV_REQUIRE_ARG(op, comm);
    ANYDEV_REQUIRE_ARG(op, buffer);
    ANYDEV_REQUIRE_ARG(op, out);
    std::shared_ptr<ExposedRegion> region;
    if (anydev_status_t s = comm->comm->expose(buffer, &region); s != ANYDEV_SUCCESS) return s;
    *out = new anydev_comm_region_s{std::move(region)};
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_comm_expose_new(anydev_comm_t comm, anydev_dtype_t dtype, size_t count,
                                       anydev_buffer_t* buffer, anydev_comm_region_t* region) {
  static constexpr const char* op = "anydev_comm_expose_new";
  return guarded(op, [&] {
    ANYDEV_REQUIRE_ARG(op, comm);
    ANYDEV_REQUIRE_ARG(op, buffer);
    ANYDEV_REQUIRE_ARG(op, region);
    const auto traits = dtype_traits(dtype);
    if (!traits) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown dtype ", static_cast<int>(dtype));
    }
    if (count == 0) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "count is 0 (", traits->name,
                  "): an exposed region holds at least one element");
    }
    std::size_t bytes = 0;
    if (auto error = check_byte_count(op, count, traits->size, &bytes)) {
      return set_error(error->status, error->message);
    }
    if (bytes > static_cast<std::size_t>(PTRDIFF_MAX)) {
      return fail(ANYDEV_ERROR_OUT_OF_MEMORY, op, count, " ", traits->name, " elements (", bytes,
                  " bytes) exceed the largest allocation (PTRDIFF_MAX bytes)");
    }
    std::shared_ptr<AllocatedMemory> memory;
    std::shared_ptr<ExposedRegion> exposed;
    if (anydev_status_t s = comm->comm->allocate_exposed(op, bytes, &memory, &exposed);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    // The buffer's release callback owns the mapping: unmapped once the
    // buffer's last use has completed and the region (which holds the
    // buffer's allocation) is gone too.
    void* const address = memory->address;
    anydev_buffer_t made = nullptr;
    if (anydev_status_t s = register_host_range(
            op, comm->comm->context(), address, bytes, dtype,
            [memory = std::move(memory)]() mutable { memory.reset(); }, &made);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    exposed->allocation = made->allocation;
    try {
      *region = new anydev_comm_region_s{std::move(exposed)};
    } catch (...) {
      anydev_buffer_release(made);
      throw;
    }
    *buffer = made;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_comm_region_key(anydev_comm_region_t region, void* out, size_t capacity,
                                       size_t* size) {
  ANYDEV_REQUIRE_ARG("anydev_comm_region_key", region);
  return copy_bytes("anydev_comm_region_key", region->region->key, out, capacity, size);
}

anydev_status_t anydev_comm_region_release(anydev_comm_region_t region) {
  ANYDEV_REQUIRE_ARG("anydev_comm_region_release", region);
  delete region;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_comm_import(anydev_comm_t comm, int peer, const void* key, size_t size,
                                   anydev_comm_remote_t* out) {
  static constexpr const char* op = "anydev_comm_import";
  return guarded(op, [&] {
    ANYDEV_REQUIRE_ARG(op, comm);
    ANYDEV_REQUIRE_ARG(op, key);
    ANYDEV_REQUIRE_ARG(op, out);
    std::shared_ptr<RemoteRegion> remote;
    if (anydev_status_t s = comm->comm->import(peer, key, size, &remote); s != ANYDEV_SUCCESS) {
      return s;
    }
    *out = new anydev_comm_remote_s{std::move(remote)};
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_comm_remote_release(anydev_comm_remote_t remote) {
  ANYDEV_REQUIRE_ARG("anydev_comm_remote_release", remote);
  delete remote;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_comm_enqueue_put(anydev_comm_t comm, anydev_buffer_t buffer,
                                        anydev_comm_remote_t remote, size_t offset) {
  return enqueue("anydev_comm_enqueue_put", comm, buffer, 0, 0, TransferKind::put, remote, offset);
}

anydev_status_t anydev_comm_enqueue_get(anydev_comm_t comm, anydev_buffer_t buffer,
                                        anydev_comm_remote_t remote, size_t offset) {
  return enqueue("anydev_comm_enqueue_get", comm, buffer, 0, 0, TransferKind::get, remote, offset);
}

#else  // built without the transport (option or headers missing)

namespace {
anydev_status_t no_ucx(const char* op) {
  return fail(ANYDEV_ERROR_BACKEND_UNAVAILABLE, op,
              "anydev was built without the UCX transport (configure with "
              "-DANYDEV_TRANSPORT_UCX=ON and libucx-dev installed)");
}
}  // namespace

anydev_status_t anydev_comm_create(anydev_context_t, uint32_t, anydev_comm_t*) {
  return no_ucx("anydev_comm_create");
}
#define ANYDEV_NO_UCX_(name, params) \
  anydev_status_t name params { return no_ucx(#name); }
ANYDEV_NO_UCX_(anydev_comm_retain, (anydev_comm_t))
ANYDEV_NO_UCX_(anydev_comm_release, (anydev_comm_t))
ANYDEV_NO_UCX_(anydev_comm_address, (anydev_comm_t, void*, size_t, size_t*))
ANYDEV_NO_UCX_(anydev_comm_connect, (anydev_comm_t, const void*, size_t, int*))
ANYDEV_NO_UCX_(anydev_comm_peer_count, (anydev_comm_t, int*))
ANYDEV_NO_UCX_(anydev_comm_enqueue_send, (anydev_comm_t, anydev_buffer_t, int, uint32_t))
ANYDEV_NO_UCX_(anydev_comm_enqueue_recv, (anydev_comm_t, anydev_buffer_t, int, uint32_t))
ANYDEV_NO_UCX_(anydev_comm_expose, (anydev_comm_t, anydev_buffer_t, anydev_comm_region_t*))
ANYDEV_NO_UCX_(anydev_comm_expose_new,
               (anydev_comm_t, anydev_dtype_t, size_t, anydev_buffer_t*, anydev_comm_region_t*))
ANYDEV_NO_UCX_(anydev_comm_region_key, (anydev_comm_region_t, void*, size_t, size_t*))
ANYDEV_NO_UCX_(anydev_comm_region_release, (anydev_comm_region_t))
ANYDEV_NO_UCX_(anydev_comm_import, (anydev_comm_t, int, const void*, size_t, anydev_comm_remote_t*))
ANYDEV_NO_UCX_(anydev_comm_remote_release, (anydev_comm_remote_t))
ANYDEV_NO_UCX_(anydev_comm_enqueue_put,
               (anydev_comm_t, anydev_buffer_t, anydev_comm_remote_t, size_t))
ANYDEV_NO_UCX_(anydev_comm_enqueue_get,
               (anydev_comm_t, anydev_buffer_t, anydev_comm_remote_t, size_t))
#undef ANYDEV_NO_UCX_
const char* anydev_comm_memory_types(anydev_comm_t) { return ""; }

#endif
