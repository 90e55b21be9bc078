// SPDX-License-Identifier: Apache-2.0
// The example backend: a complete anydev backend plugin written with the
// backend kit (anydev/kit/*.h), small enough to read in one sitting and to
// copy as the start of a real one (docs/writing-a-backend.md walks through it).
//
// It has one device whose "device memory" is ordinary host memory, and it runs
// every copy and fill at once, on the calling thread, when it is enqueued. So
// a stream is always idle, an event is always complete, and each entry is a
// few lines: a real backend puts its vendor calls where these do memcpy.
//
// Build it against an installed anydev (examples/backend/CMakeLists.txt):
//   cmake -S examples/backend -B example-build -DCMAKE_PREFIX_PATH=/opt/anydev
//   cmake --build example-build
// and check it with the conformance suite (anydev's tests/conformance):
//   export ANYDEV_PLUGIN_PATH=example-build/anydev-plugins
//   ANYDEV_CONFORMANCE_BACKENDS=example anydev-conformance-tests
//
// Threads: the core may call any entry from any thread at once. The only
// state shared between calls is the core's services (an atomic pointer inside
// kit::core_services); streams and events are owned by the core between their
// create and destroy calls and hold nothing that changes, so no entry locks.
// Exceptions never leave an entry: memory comes from nothrow allocations, and
// the only code that may throw (building a message) runs inside guarded().
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include "anydev/backend.h"
#include "anydev/kit/capabilities.h"
#include "anydev/kit/cat.h"
#include "anydev/kit/device_props.h"
#include "anydev/kit/entry.h"
#include "anydev/kit/memory_ref.h"
#include "anydev/kit/services.h"
#include "anydev/kit/table.h"

// The entry point macro (ANYDEV_KIT_BACKEND_ENTRY) finds the services and the
// table in namespace anydev::<name>.
namespace anydev::example {

// kBackendName ("example"), g_core_services and the free functions
// set_core_services, set_error, log and get_env: the core's services, stored
// by the entry point. Thread-safe.
ANYDEV_KIT_BACKEND_SERVICES("example")

}  // namespace anydev::example

// The core sees streams and events only as opaque pointers to these. Each is
// owned by the core from its create entry until it hands it to the destroy
// entry; a real backend keeps its vendor queue or event here.
struct anydev_bk_stream_s {
  int device;
};
struct anydev_bk_event_s {
  int device;
};

namespace anydev::example {
namespace {

constexpr int kDeviceCount = 1;
// DLPack's kDLCPU and kDLExtDev: host memory is kDLCPU; device memory gets
// kDLExtDev, the type for a device DLPack has no name for, so that the core
// exports and imports this backend's buffers without knowing it.
constexpr std::int32_t kDLPackCpu = 1;
constexpr std::int32_t kDLPackExtDev = 12;
// Every allocation is aligned for any element type, complex128 included.
constexpr std::size_t kAlignment = 64;

// Runs `body`; a std::bad_alloc or other exception (only message building can
// throw) becomes an error status instead of crossing the C ABI.
template <class Body>
anydev_status_t guarded(const char* entry, Body&& body) noexcept {
  try {
    return std::forward<Body>(body)();
  } catch (const std::exception& e) {
    return set_error(ANYDEV_ERROR_INTERNAL, std::string(entry) + ": " + e.what());
  } catch (...) {
    return ANYDEV_ERROR_INTERNAL;
  }
}

// Records `status` with a message naming the backend and the entry; returns it.
template <class... Parts>
[[gnu::cold]] anydev_status_t fail(anydev_status_t status, const char* entry, Parts&&... parts) {
  return guarded(entry, [&] {
    return set_error(status,
                     kit::cat(kBackendName, " ", entry, ": ", std::forward<Parts>(parts)...));
  });
}

anydev_status_t check_device(const char* entry, int device) {
  if (device >= 0 && device < kDeviceCount) return ANYDEV_SUCCESS;
  return fail(ANYDEV_ERROR_OUT_OF_RANGE, entry, "device ", device, " does not exist (",
              kDeviceCount, " device)");
}

// The host's physical memory, which is this device's memory.
std::size_t host_bytes(int which) {
  const long pages = sysconf(which);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                               : 0;
}

anydev_status_t allocate(const char* entry, int device, std::size_t bytes, void** handle,
                         void** address) {
  if (anydev_status_t s = check_device(entry, device); s != ANYDEV_SUCCESS) return s;
  const std::size_t total = host_bytes(_SC_PHYS_PAGES);
  if (bytes > total) {
    return fail(ANYDEV_ERROR_OUT_OF_MEMORY, entry, bytes, " bytes exceed the device's ", total,
                " bytes");
  }
  void* memory = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (memory == nullptr) {
    return fail(ANYDEV_ERROR_OUT_OF_MEMORY, entry, "allocating ", bytes, " bytes failed");
  }
  *handle = memory;   // what copies and fills receive
  *address = memory;  // what unsafe_ptr() returns
  return ANYDEV_SUCCESS;
}

// ---- the table's entries ------------------------------------------------------
// The required entries of backend_entries.h, without the instance (the kit's
// table builder adapts them). The core has checked every argument already
// (handles, ranges, sizes, pattern sizes) and never passes zero bytes.

// Called once, before any other entry. A real backend opens its vendor
// library here (kit::open_library; a missing symbol: kit::symbol_failure),
// reads its settings through the core (get_env), and answers
// BACKEND_UNAVAILABLE after set_error with the exact reason when it cannot
// work; the core then lists it as unavailable with that reason.
anydev_status_t initialize(const anydev_core_services_t* core, const char** library) {
  if (core != nullptr) set_core_services(core);
  if (library != nullptr) *library = "";  // no vendor library
  return guarded("initialize", [] {
    log(ANYDEV_LOG_DEBUG, "one device, host memory, synchronous operations");
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t device_count(int* count) {
  *count = kDeviceCount;
  return ANYDEV_SUCCESS;
}

anydev_status_t device_props(int device, anydev_bk_device_props_t* props) {
  if (anydev_status_t s = check_device("device_props", device); s != ANYDEV_SUCCESS) return s;
  return guarded("device_props", [&] {
    kit::set_basic_device_props(props, "example device 0 (host memory)",
                                "anydev example backend: synchronous, aligned_alloc memory",
                                host_bytes(_SC_PHYS_PAGES),
                                /*host_can_address_device_memory=*/true);
    kit::device_capabilities caps;  // defaults: no peers, no stream-ordered free, 16-byte fills
    caps.dlpack_device_type = kDLPackExtDev;
    caps.dlpack_host_device_type = kDLPackCpu;
    caps.dlpack_device_id = device;
    caps.device_memory_is_host_accessible = true;
    kit::set_capabilities(props, caps);
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t memory_info(int device, std::size_t* free_bytes, std::size_t* total_bytes) {
  if (anydev_status_t s = check_device("memory_info", device); s != ANYDEV_SUCCESS) return s;
  *total_bytes = host_bytes(_SC_PHYS_PAGES);
  *free_bytes = std::min(host_bytes(_SC_AVPHYS_PAGES), *total_bytes);
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_create(int device, anydev_bk_stream_t* out) {
  if (anydev_status_t s = check_device("stream_create", device); s != ANYDEV_SUCCESS) return s;
  *out = new (std::nothrow) anydev_bk_stream_s{device};
  if (*out == nullptr) return fail(ANYDEV_ERROR_OUT_OF_MEMORY, "stream_create", "no memory");
  return ANYDEV_SUCCESS;
}

// Work is done when it is enqueued: nothing to wait for before destroying.
anydev_status_t stream_destroy(anydev_bk_stream_t stream) {
  delete stream;
  return ANYDEV_SUCCESS;
}

// Nothing is ever pending, and no asynchronous error can happen.
anydev_status_t stream_synchronize(anydev_bk_stream_t /*stream*/) { return ANYDEV_SUCCESS; }

anydev_status_t event_create(int device, anydev_bk_event_t* out) {
  if (anydev_status_t s = check_device("event_create", device); s != ANYDEV_SUCCESS) return s;
  *out = new (std::nothrow) anydev_bk_event_s{device};
  if (*out == nullptr) return fail(ANYDEV_ERROR_OUT_OF_MEMORY, "event_create", "no memory");
  return ANYDEV_SUCCESS;
}

anydev_status_t event_destroy(anydev_bk_event_t event) {
  delete event;
  return ANYDEV_SUCCESS;
}

// An event captures work that has already finished: it is complete at once.
anydev_status_t event_record(anydev_bk_event_t /*event*/, anydev_bk_stream_t /*stream*/) {
  return ANYDEV_SUCCESS;
}
anydev_status_t event_synchronize(anydev_bk_event_t /*event*/) { return ANYDEV_SUCCESS; }
anydev_status_t event_query(anydev_bk_event_t /*event*/, int* complete) {
  *complete = 1;
  return ANYDEV_SUCCESS;
}
anydev_status_t stream_wait_event(anydev_bk_stream_t /*stream*/, anydev_bk_event_t /*event*/) {
  return ANYDEV_SUCCESS;
}

anydev_status_t host_alloc(int device, std::size_t bytes, void** handle, void** address) {
  return allocate("host_alloc", device, bytes, handle, address);
}

anydev_status_t device_alloc(int device, std::size_t bytes, anydev_bk_stream_t /*stream*/,
                             void** handle, void** address) {
  return allocate("device_alloc", device, bytes, handle, address);
}

// The core calls this only once no operation uses the memory any more.
anydev_status_t memory_free(int /*device*/, anydev_bk_memory_kind_t /*kind*/, void* handle) {
  std::free(handle);
  return ANYDEV_SUCCESS;
}

anydev_status_t copy(anydev_bk_stream_t /*stream*/, anydev_bk_memory_ref_t dst,
                     anydev_bk_memory_ref_t src, std::size_t bytes) {
  if (dst.handle == nullptr || src.handle == nullptr) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "copy", "from ", kit::describe_memory(src), " to ",
                kit::describe_memory(dst), ": a NULL handle");
  }
  std::memcpy(kit::address_of(dst), kit::address_of(src), bytes);
  return ANYDEV_SUCCESS;
}

// pattern_size is 1, 2, 4, 8 or 16 and divides bytes (the core checks both).
anydev_status_t fill(anydev_bk_stream_t /*stream*/, anydev_bk_memory_ref_t dst, const void* pattern,
                     std::size_t pattern_size, std::size_t bytes) {
  if (dst.handle == nullptr) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "fill", kit::describe_memory(dst),
                ": a NULL handle");
  }
  auto* out = static_cast<unsigned char*>(kit::address_of(dst));
  for (std::size_t i = 0; i < bytes; i += pattern_size) std::memcpy(out + i, pattern, pattern_size);
  return ANYDEV_SUCCESS;
}

// One device: no peers.
anydev_status_t can_access_peer(int /*device*/, int /*peer*/, int* can_access) {
  *can_access = 0;
  return ANYDEV_SUCCESS;
}
anydev_status_t enable_peer_access(int device, int peer) {
  return fail(ANYDEV_ERROR_UNSUPPORTED, "enable_peer_access", "device ", device, ", peer ", peer,
              ": one device, no peers");
}

// The table: every required entry above, by name; no optional entry
// (memory_free_async, native_handle, stream_wrap_native, memory_is_locked
// stay NULL and the core does without them). Flags: nothing here depends on
// threads or driver state a fork could break, and event_query makes no call.
constexpr anydev_backend_table_t kTable = ANYDEV_KIT_BACKEND_TABLE(
    kBackendName, .flags = ANYDEV_BK_FLAG_SURVIVES_FORK | ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY);

}  // namespace
}  // namespace anydev::example

// The one exported symbol, anydev_backend_entry: stores the core's services,
// checks the core's ABI version and hands over kTable.
ANYDEV_KIT_BACKEND_ENTRY(ANYDEV_BACKEND_EXPORT, anydev_backend_entry, example)
