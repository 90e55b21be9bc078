// SPDX-License-Identifier: Apache-2.0
// The cpu backend's table and its entry point, anydev_cpu_backend_entry.
//
// Every entry validates its arguments, reports failures through the core's
// set_error with a message naming the entry and the values, and never lets an
// exception cross the C ABI. One device (index 0); every kind of memory is
// host-addressable, so copies are memmove and fills are host loops, run on
// the stream worker pool (cpu_workers.h).
#include <dlpack/dlpack.h>
#include <sys/resource.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "anydev/backend.h"
#include "anydev/kit/capabilities.h"
#include "anydev/kit/device_props.h"
#include "anydev/kit/entry.h"
#include "anydev/kit/structs.h"
#include "anydev/kit/table.h"
#include "cpu_attributes.h"
#include "cpu_config.h"
#include "cpu_device_info.h"
#include "cpu_event.h"
#include "cpu_fill.h"
#include "cpu_graph.h"
#include "cpu_memory.h"
#include "cpu_parallel.h"
#include "cpu_registered.h"
#include "cpu_services.h"
#include "cpu_share.h"
#include "cpu_stream.h"
#include "cpu_streaming.h"

namespace anydev::cpu {
namespace {

constexpr int kDeviceCount = 1;

// Filled at initialize; leaked so that it outlives static destruction.
std::atomic<const CpuDeviceInfo*> g_device_info{nullptr};

// A cpu stream handle is its StreamState (one load less on every enqueue
// than going through the Stream); the Stream that owns the worker is its
// owner().
StreamState& to_state(anydev_bk_stream_t stream) { return *reinterpret_cast<StreamState*>(stream); }
Event* to_event(anydev_bk_event_t event) { return reinterpret_cast<Event*>(event); }

std::string pointer_text(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", pointer);
  return text;
}

// Runs `body`, turning any exception into an error status for `op`.
template <class Body>
anydev_status_t guarded(const char* op, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     std::string("cpu ") + op + ": out of host memory for bookkeeping");
  } catch (const std::exception& e) {
    return set_error(ANYDEV_ERROR_INTERNAL,
                     std::string("cpu ") + op + ": unexpected exception: " + e.what());
  } catch (...) {
    return set_error(ANYDEV_ERROR_INTERNAL,
                     std::string("cpu ") + op + ": unexpected non-standard exception");
  }
}

// OUT_OF_RANGE unless `device` is a valid index; `what` names it in the message.
anydev_status_t check_device(const char* op, int device, const char* what = "device") {
  if (device >= 0 && device < kDeviceCount) return ANYDEV_SUCCESS;
  return set_error(ANYDEV_ERROR_OUT_OF_RANGE,
                   std::string("cpu ") + op + ": " + what + " index " + std::to_string(device) +
                       " is out of range (the cpu backend has " + std::to_string(kDeviceCount) +
                       " device, index 0)");
}

[[gnu::cold]] anydev_status_t null_argument(const char* op, const char* argument) {
  return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                   std::string("cpu ") + op + ": `" + argument + "` is NULL");
}

// The kind's integer value, read without loading the enum: a value outside
// the enumerators (a caller's bug) is then reported instead of being
// undefined behaviour.
int raw_kind(const anydev_bk_memory_kind_t& kind) {
  static_assert(sizeof(anydev_bk_memory_kind_t) == sizeof(int));
  int value = 0;
  std::memcpy(&value, &kind, sizeof value);
  return value;
}

const char* bk_kind_name(int kind) {
  switch (kind) {
    case ANYDEV_BK_MEMORY_USER_HOST:
      return "user host memory";
    case ANYDEV_BK_MEMORY_HOST:
      return "pinned host memory";
    case ANYDEV_BK_MEMORY_DEVICE:
      return "device memory";
  }
  return "unknown memory kind";
}

// The address a memory reference designates, after checking it.
[[gnu::hot]] anydev_status_t resolve(const char* op, const char* side,
                                     const anydev_bk_memory_ref_t& ref, unsigned char** out) {
  // Built only on failure: the success path allocates nothing.
  const auto where = [&] { return std::string("cpu ") + op + ": " + side; };
  const int kind = raw_kind(ref.kind);
  switch (kind) {
    case ANYDEV_BK_MEMORY_USER_HOST:
      break;
    case ANYDEV_BK_MEMORY_HOST:
    case ANYDEV_BK_MEMORY_DEVICE:
      if (ref.device < 0 || ref.device >= kDeviceCount) {
        return set_error(ANYDEV_ERROR_OUT_OF_RANGE,
                         where() + " (" + bk_kind_name(kind) + ") names device index " +
                             std::to_string(ref.device) +
                             ", out of range (the cpu backend has 1 device, index 0)");
      }
      break;
    default:
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       where() + " has an unknown memory kind " + std::to_string(kind));
  }
  if (ref.handle == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     where() + " (" + bk_kind_name(kind) + ") has a NULL handle");
  }
  const auto base = reinterpret_cast<std::uintptr_t>(ref.handle);
  if (ref.offset > UINTPTR_MAX - base) {
    return set_error(ANYDEV_ERROR_OUT_OF_RANGE, where() + ": handle " + pointer_text(ref.handle) +
                                                    " + offset " + std::to_string(ref.offset) +
                                                    " overflows the address space");
  }
  *out = static_cast<unsigned char*>(ref.handle) + ref.offset;
  return ANYDEV_SUCCESS;
}

const CpuDeviceInfo& device_info() {
  if (const CpuDeviceInfo* info = g_device_info.load(std::memory_order_acquire)) return *info;
  auto* fresh = new CpuDeviceInfo(read_cpu_device_info());
  const CpuDeviceInfo* expected = nullptr;
  if (!g_device_info.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
    delete fresh;
    return *expected;
  }
  return *fresh;
}

std::string pinned_memory_text() {
  if (!lock_pinned_memory()) {
    return "pinned host memory: aligned to 64 bytes or more, populated, not locked "
           "(ANYDEV_CPU_MLOCK=0)";
  }
  struct rlimit limit {};
  std::string limit_text = "unknown";
  if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
    limit_text =
        limit.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(limit.rlim_cur) + " bytes";
  }
  return "pinned host memory: aligned to 64 bytes or more, populated, locked with mlock up to "
         "RLIMIT_MEMLOCK (" +
         limit_text + ")";
}

using kit::copy_text;
using kit::has_field;

// ---- table entries ----------------------------------------------------------

anydev_status_t initialize(const anydev_core_services_t* core, const char** library) {
  return guarded("initialize", [&] {
    if (core != nullptr) set_core_services(core);
    if (library != nullptr) *library = "";
    const CpuConfig config = read_config();
    if (!config.error.empty()) return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE, config.error);
    set_lock_pinned_memory(config.lock_pinned_memory);
    set_split_threads(config.split_threads);
    set_streaming_footprint(config.streaming_bytes);
    install_fork_handlers();
    device_info();
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t device_count(int* count) {
  if (count == nullptr) return null_argument("device_count", "count");
  *count = kDeviceCount;
  return ANYDEV_SUCCESS;
}

anydev_status_t device_props(int device, anydev_bk_device_props_t* props) {
  return guarded("device_props", [&] {
    if (anydev_status_t s = check_device("device_props", device); s != ANYDEV_SUCCESS) return s;
    if (props == nullptr) return null_argument("device_props", "props");
    const CpuDeviceInfo& info = device_info();
    kit::set_basic_device_props(props, info.name, info.description + "; " + pinned_memory_text(),
                                info.total_memory, true);
    // Device memory is host memory: kDLCPU for both kinds, addressable.
    kit::device_capabilities caps;
    caps.dlpack_device_type = kDLCPU;
    caps.dlpack_host_device_type = kDLCPU;
    caps.dlpack_device_id = device;
    caps.device_memory_is_host_accessible = true;
    kit::set_capabilities(props, caps);
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t memory_info(int device, std::size_t* free_bytes, std::size_t* total_bytes) {
  return guarded("memory_info", [&] {
    if (anydev_status_t s = check_device("memory_info", device); s != ANYDEV_SUCCESS) return s;
    if (free_bytes == nullptr) return null_argument("memory_info", "free_bytes");
    if (total_bytes == nullptr) return null_argument("memory_info", "total_bytes");
    const MemoryStatus status = read_memory_status();
    if (status.total_bytes == 0) {
      return set_error(ANYDEV_ERROR_DEVICE,
                       "cpu memory_info(device=0): neither /proc/meminfo nor sysinfo() gave the "
                       "host's memory size");
    }
    *free_bytes = status.available_bytes;
    *total_bytes = status.total_bytes;
    return ANYDEV_SUCCESS;
  });
}

// Two priorities, as the worker pool has two run queues: 0 (normal) and -1
// (high, taken by the workers first).
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -1;

anydev_status_t create_cpu_stream(const char* op, int device, int priority,
                                  anydev_bk_stream_t* out) {
  return guarded(op, [&] {
    if (anydev_status_t s = check_device(op, device); s != ANYDEV_SUCCESS) return s;
    if (out == nullptr) return null_argument(op, "out");
    if (priority < kGreatestPriority || priority > kLeastPriority) {
      return set_error(ANYDEV_ERROR_OUT_OF_RANGE, std::string("cpu ") + op + ": priority " +
                                                      std::to_string(priority) +
                                                      " is outside [-1, 0]");
    }
    std::unique_ptr<Stream> stream;
    try {
      stream = std::make_unique<Stream>(WorkerPool::process_pool(), priority);
    } catch (const ThreadStartError& e) {
      return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                       std::string("cpu ") + op + "(device=0): " + e.what());
    }
    *out = reinterpret_cast<anydev_bk_stream_t>(&stream.release()->state());
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t stream_create(int device, anydev_bk_stream_t* out) {
  return create_cpu_stream("stream_create", device, kLeastPriority, out);
}

anydev_status_t stream_create_priority(int device, int priority, anydev_bk_stream_t* out) {
  return create_cpu_stream("stream_create_priority", device, priority, out);
}

anydev_status_t stream_priority_range(int device, int* least, int* greatest) {
  if (anydev_status_t s = check_device("stream_priority_range", device); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (least == nullptr) return null_argument("stream_priority_range", "least");
  if (greatest == nullptr) return null_argument("stream_priority_range", "greatest");
  *least = kLeastPriority;
  *greatest = kGreatestPriority;
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_destroy(anydev_bk_stream_t stream) {
  return guarded("stream_destroy", [&] {
    if (stream == nullptr) return null_argument("stream_destroy", "stream");
    delete to_state(stream).owner();
    return ANYDEV_SUCCESS;
  });
}

[[gnu::hot]] anydev_status_t stream_synchronize(anydev_bk_stream_t stream) {
  return guarded("stream_synchronize", [&] {
    if (stream == nullptr) return null_argument("stream_synchronize", "stream");
    if (std::optional<TaskFailure> failure = to_state(stream).synchronize()) {
      return set_error(failure->status, failure->message);
    }
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t event_create(int device, anydev_bk_event_t* out) {
  return guarded("event_create", [&] {
    if (anydev_status_t s = check_device("event_create", device); s != ANYDEV_SUCCESS) return s;
    if (out == nullptr) return null_argument("event_create", "out");
    *out = reinterpret_cast<anydev_bk_event_t>(new Event);
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t event_destroy(anydev_bk_event_t event) {
  return guarded("event_destroy", [&] {
    if (event == nullptr) return null_argument("event_destroy", "event");
    delete to_event(event);
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t event_record(anydev_bk_event_t event, anydev_bk_stream_t stream) {
  return guarded("event_record", [&] {
    if (event == nullptr) return null_argument("event_record", "event");
    if (stream == nullptr) return null_argument("event_record", "stream");
    if (SharedEvent* shared = to_event(event)->shared.get()) {
      shared->record(to_state(stream));
      return ANYDEV_SUCCESS;
    }
    to_event(event)->record(to_state(stream).owner()->shared_state());
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t event_synchronize(anydev_bk_event_t event) {
  return guarded("event_synchronize", [&] {
    if (event == nullptr) return null_argument("event_synchronize", "event");
    if (const SharedEvent* shared = to_event(event)->shared.get()) {
      if (std::optional<TaskFailure> failure = shared->synchronize()) {
        return set_error(failure->status, failure->message);
      }
      return ANYDEV_SUCCESS;
    }
    to_event(event)->synchronize();
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t event_query(anydev_bk_event_t event, int* complete) {
  return guarded("event_query", [&] {
    if (event == nullptr) return null_argument("event_query", "event");
    if (complete == nullptr) return null_argument("event_query", "complete");
    const Event& e = *to_event(event);
    *complete = (e.shared ? e.shared->is_complete() : e.is_complete()) ? 1 : 0;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t stream_wait_event(anydev_bk_stream_t stream, anydev_bk_event_t event) {
  return guarded("stream_wait_event", [&] {
    if (stream == nullptr) return null_argument("stream_wait_event", "stream");
    if (event == nullptr) return null_argument("stream_wait_event", "event");
    if (const SharedEvent* shared = to_event(event)->shared.get()) {
      shared->make_wait(to_state(stream));
      return ANYDEV_SUCCESS;
    }
    Event::Capture capture = to_event(event)->capture();
    StreamState& waiting = to_state(stream);
    // Nothing to wait for: never recorded, already complete, or captured on
    // this very stream (whose later work runs after it anyway).
    if (capture.stream == nullptr || capture.stream->is_complete(capture.seq) ||
        capture.stream.get() == &waiting) {
      return ANYDEV_SUCCESS;
    }
    waiting.enqueue(WaitTask{std::move(capture.stream), capture.seq});
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t host_alloc(int device, std::size_t bytes, void** handle, void** address) {
  return guarded("host_alloc", [&] {
    if (anydev_status_t s = check_device("host_alloc", device); s != ANYDEV_SUCCESS) return s;
    if (handle == nullptr) return null_argument("host_alloc", "handle");
    if (address == nullptr) return null_argument("host_alloc", "address");
    if (bytes == 0) {
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       "cpu host_alloc(device=0, bytes=0): zero "
                       "bytes requested");
    }
    void* memory = nullptr;
    if (anydev_status_t s = allocate_pages(MemoryKind::kPinnedHost, bytes, &memory);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    *handle = memory;
    *address = memory;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t device_alloc(int device, std::size_t bytes, anydev_bk_stream_t /*stream*/,
                             void** handle, void** address) {
  // The allocation is usable at once, so it is ordered on any stream.
  return guarded("device_alloc", [&] {
    if (anydev_status_t s = check_device("device_alloc", device); s != ANYDEV_SUCCESS) return s;
    if (handle == nullptr) return null_argument("device_alloc", "handle");
    if (address == nullptr) return null_argument("device_alloc", "address");
    if (bytes == 0) {
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       "cpu device_alloc(device=0, bytes=0): zero "
                       "bytes requested");
    }
    void* memory = nullptr;
    if (anydev_status_t s = allocate_pages(MemoryKind::kDevice, bytes, &memory);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    *handle = memory;
    *address = memory;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t memory_free(int device, anydev_bk_memory_kind_t kind, void* handle) {
  return guarded("memory_free", [&] {
    if (anydev_status_t s = check_device("memory_free", device); s != ANYDEV_SUCCESS) return s;
    if (handle == nullptr) return null_argument("memory_free", "handle");
    const int raw = raw_kind(kind);
    switch (raw) {
      case ANYDEV_BK_MEMORY_HOST:
        return free_pages(MemoryKind::kPinnedHost, handle);
      case ANYDEV_BK_MEMORY_DEVICE:
        return free_pages(MemoryKind::kDevice, handle);
      default:
        return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                         "cpu memory_free(" + pointer_text(handle) + "): memory kind " +
                             std::to_string(raw) + " (" + bk_kind_name(raw) +
                             ") was not allocated by the backend");
    }
  });
}

anydev_status_t memory_is_locked(int device, void* handle, int* locked) {
  return guarded("memory_is_locked", [&] {
    if (anydev_status_t s = check_device("memory_is_locked", device); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (handle == nullptr) return null_argument("memory_is_locked", "handle");
    if (locked == nullptr) return null_argument("memory_is_locked", "locked");
    bool is_locked = false;
    if (registered_memory_locked(handle, &is_locked)) {
      *locked = is_locked ? 1 : 0;
      return ANYDEV_SUCCESS;
    }
    if (shared_memory_locked(handle, &is_locked)) {
      *locked = is_locked ? 1 : 0;
      return ANYDEV_SUCCESS;
    }
    if (anydev_status_t s = memory_locked(MemoryKind::kPinnedHost, handle, &is_locked);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    *locked = is_locked ? 1 : 0;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t host_register(int device, void* pointer, std::size_t bytes, void** handle) {
  return guarded("host_register", [&] {
    if (anydev_status_t s = check_device("host_register", device); s != ANYDEV_SUCCESS) return s;
    if (pointer == nullptr) return null_argument("host_register", "pointer");
    if (handle == nullptr) return null_argument("host_register", "handle");
    if (bytes == 0) {
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "cpu host_register: zero bytes");
    }
    return register_host(pointer, bytes, handle);
  });
}

anydev_status_t device_attribute(int device, int attribute, std::int64_t* value) {
  return guarded("device_attribute", [&] {
    if (anydev_status_t s = check_device("device_attribute", device); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (value == nullptr) return null_argument("device_attribute", "value");
    return read_attribute(attribute, value);
  });
}

anydev_status_t device_uuid(int device, std::uint8_t* uuid) {
  return guarded("device_uuid", [&] {
    if (anydev_status_t s = check_device("device_uuid", device); s != ANYDEV_SUCCESS) return s;
    if (uuid == nullptr) return null_argument("device_uuid", "uuid");
    return read_uuid(uuid);
  });
}

anydev_status_t api_version(int device, char* out, std::size_t capacity) {
  return guarded("api_version", [&] {
    if (anydev_status_t s = check_device("api_version", device); s != ANYDEV_SUCCESS) return s;
    if (out == nullptr || capacity == 0) return null_argument("api_version", "out");
    return read_api_version(out, capacity);
  });
}

anydev_status_t host_unregister(int device, void* handle) {
  return guarded("host_unregister", [&] {
    if (anydev_status_t s = check_device("host_unregister", device); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (handle == nullptr) return null_argument("host_unregister", "handle");
    return unregister_host(handle);
  });
}

[[gnu::hot]] anydev_status_t copy(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                                  anydev_bk_memory_ref_t src, std::size_t bytes) {
  return guarded("copy", [&] {
    if (stream == nullptr) return null_argument("copy", "stream");
    unsigned char* to = nullptr;
    unsigned char* from = nullptr;
    if (anydev_status_t s = resolve("copy", "dst", dst, &to); s != ANYDEV_SUCCESS) return s;
    if (anydev_status_t s = resolve("copy", "src", src, &from); s != ANYDEV_SUCCESS) return s;
    if (bytes == 0) return ANYDEV_SUCCESS;
    to_state(stream).enqueue(CopyTask{to, from, bytes});
    return ANYDEV_SUCCESS;
  });
}

// fill()'s errors, out of line: building a message inline would spread the
// hot path over more cache lines.
[[gnu::cold, gnu::noinline]] anydev_status_t bad_pattern_size(std::size_t pattern_size) {
  return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "cpu fill: pattern_size " +
                                                      std::to_string(pattern_size) + " is not " +
                                                      kit::kFillPatternSizes);
}

[[gnu::cold, gnu::noinline]] anydev_status_t bytes_not_whole_patterns(std::size_t bytes,
                                                                      std::size_t pattern_size) {
  return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "cpu fill: bytes " + std::to_string(bytes) +
                                                      " is not a multiple of pattern_size " +
                                                      std::to_string(pattern_size));
}

[[gnu::hot]] anydev_status_t fill(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                                  const void* pattern, std::size_t pattern_size,
                                  std::size_t bytes) {
  return guarded("fill", [&] {
    if (stream == nullptr) return null_argument("fill", "stream");
    if (pattern == nullptr) return null_argument("fill", "pattern");
    if (!kit::valid_fill_pattern_size(pattern_size)) return bad_pattern_size(pattern_size);
    if ((bytes & (pattern_size - 1)) != 0) {  // pattern sizes are powers of two
      return bytes_not_whole_patterns(bytes, pattern_size);
    }
    unsigned char* to = nullptr;
    if (anydev_status_t s = resolve("fill", "dst", dst, &to); s != ANYDEV_SUCCESS) return s;
    if (bytes == 0) return ANYDEV_SUCCESS;
    FillTask task{.dst = to, .bytes = bytes, .pattern = {}, .pattern_size = pattern_size};
    copy_pattern(task.pattern, pattern, pattern_size);
    to_state(stream).enqueue(task);
    return ANYDEV_SUCCESS;
  });
}

// One node of graph_create as a task; `index` names it in messages. An
// empty node gives no task (the launch runs in order anyway).
anydev_status_t graph_task(const anydev_bk_graph_node_t& node, std::size_t index,
                           std::vector<Task>* tasks) {
  const auto where = [&] { return "cpu graph_create: node " + std::to_string(index); };
  for (std::size_t d = 0; d < node.dep_count; ++d) {
    if (node.deps == nullptr || node.deps[d] >= index) {
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       where() + " has dependency " + std::to_string(d) +
                           " that is not an earlier node (nodes come in a topological order)");
    }
  }
  unsigned char* to = nullptr;
  switch (node.kind) {
    case ANYDEV_BK_GRAPH_EMPTY:
      return ANYDEV_SUCCESS;
    case ANYDEV_BK_GRAPH_COPY: {
      unsigned char* from = nullptr;
      if (anydev_status_t s = resolve("graph_create", "a copy's dst", node.dst, &to);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      if (anydev_status_t s = resolve("graph_create", "a copy's src", node.src, &from);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      if (node.bytes > 0) tasks->push_back(CopyTask{to, from, node.bytes});
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_BK_GRAPH_FILL: {
      if (!kit::valid_fill_pattern_size(node.pattern_size)) {
        return bad_pattern_size(node.pattern_size);
      }
      if ((node.bytes & (node.pattern_size - 1)) != 0) {
        return bytes_not_whole_patterns(node.bytes, node.pattern_size);
      }
      if (anydev_status_t s = resolve("graph_create", "a fill's dst", node.dst, &to);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      if (node.bytes == 0) return ANYDEV_SUCCESS;
      FillTask task{
          .dst = to, .bytes = node.bytes, .pattern = {}, .pattern_size = node.pattern_size};
      copy_pattern(task.pattern, node.pattern, node.pattern_size);
      tasks->push_back(task);
      return ANYDEV_SUCCESS;
    }
  }
  return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                   where() + " has an unknown kind " + std::to_string(static_cast<int>(node.kind)));
}

anydev_status_t graph_create(int device, const anydev_bk_graph_node_t* nodes, std::size_t count,
                             anydev_bk_graph_t* out) {
  return guarded("graph_create", [&] {
    if (anydev_status_t s = check_device("graph_create", device); s != ANYDEV_SUCCESS) return s;
    if (nodes == nullptr && count > 0) return null_argument("graph_create", "nodes");
    if (out == nullptr) return null_argument("graph_create", "out");
    std::vector<Task> tasks;
    tasks.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      if (anydev_status_t s = graph_task(nodes[i], i, &tasks); s != ANYDEV_SUCCESS) return s;
    }
    *out = reinterpret_cast<anydev_bk_graph_t>(new Graph(std::move(tasks)));
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t graph_launch(anydev_bk_graph_t graph, anydev_bk_stream_t stream) {
  return guarded("graph_launch", [&] {
    if (graph == nullptr) return null_argument("graph_launch", "graph");
    if (stream == nullptr) return null_argument("graph_launch", "stream");
    reinterpret_cast<Graph*>(graph)->launch(to_state(stream));
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t graph_destroy(anydev_bk_graph_t graph) {
  if (graph == nullptr) return null_argument("graph_destroy", "graph");
  reinterpret_cast<Graph*>(graph)->release();  // launches not yet run hold their own reference
  return ANYDEV_SUCCESS;
}

anydev_status_t can_access_peer(int device, int peer, int* can_access) {
  if (anydev_status_t s = check_device("can_access_peer", device); s != ANYDEV_SUCCESS) return s;
  if (anydev_status_t s = check_device("can_access_peer", peer, "peer"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (can_access == nullptr) return null_argument("can_access_peer", "can_access");
  *can_access = 0;
  return ANYDEV_SUCCESS;
}

anydev_status_t enable_peer_access(int device, int peer) {
  if (anydev_status_t s = check_device("enable_peer_access", device); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (anydev_status_t s = check_device("enable_peer_access", peer, "peer"); s != ANYDEV_SUCCESS) {
    return s;
  }
  return set_error(ANYDEV_ERROR_UNSUPPORTED,
                   "cpu enable_peer_access(device=" + std::to_string(device) + ", peer=" +
                       std::to_string(peer) + "): the cpu backend has one device and no peers");
}

anydev_status_t native_handle(int device, int kind, void* object, void** out) {
  if (anydev_status_t s = check_device("native_handle", device); s != ANYDEV_SUCCESS) return s;
  if (out == nullptr) return null_argument("native_handle", "out");
  const char* what = nullptr;
  switch (kind) {
    case ANYDEV_NATIVE_MEMORY:
      if (object == nullptr) return null_argument("native_handle(MEMORY)", "object");
      *out = object;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_DEVICE:
      what = "device";
      break;
    case ANYDEV_NATIVE_CONTEXT:
      what = "context";
      break;
    case ANYDEV_NATIVE_STREAM:
      what = "stream";
      break;
    case ANYDEV_NATIVE_EVENT:
      what = "event";
      break;
    default:
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       "cpu native_handle: unknown native handle kind " + std::to_string(kind));
  }
  return set_error(ANYDEV_ERROR_UNSUPPORTED,
                   std::string("cpu native_handle: the cpu backend has no native ") + what +
                       " object (only MEMORY, which is the host pointer itself)");
}

anydev_status_t check_share_kind(const char* op, anydev_bk_memory_kind_t kind) {
  const int raw = raw_kind(kind);
  if (raw == ANYDEV_BK_MEMORY_HOST || raw == ANYDEV_BK_MEMORY_DEVICE) return ANYDEV_SUCCESS;
  return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, std::string("cpu ") + op + ": memory kind " +
                                                      std::to_string(raw) + " (" +
                                                      bk_kind_name(raw) + ") cannot be shared");
}

anydev_status_t shareable_alloc(int device, anydev_bk_memory_kind_t kind, std::size_t bytes,
                                void** handle, void** address) {
  return guarded("shareable_alloc", [&] {
    if (anydev_status_t s = check_device("shareable_alloc", device); s != ANYDEV_SUCCESS) return s;
    if (anydev_status_t s = check_share_kind("shareable_alloc", kind); s != ANYDEV_SUCCESS)
      return s;
    if (handle == nullptr) return null_argument("shareable_alloc", "handle");
    if (address == nullptr) return null_argument("shareable_alloc", "address");
    if (bytes == 0) {
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       "cpu shareable_alloc(device=0, bytes=0): zero bytes requested");
    }
    return share_alloc(kind, bytes, handle, address);
  });
}

anydev_status_t memory_export(int device, anydev_bk_memory_kind_t kind, void* handle,
                              anydev_bk_share_t* out) {
  return guarded("memory_export", [&] {
    if (anydev_status_t s = check_device("memory_export", device); s != ANYDEV_SUCCESS) return s;
    if (out == nullptr) return null_argument("memory_export", "out");
    return share_export(kind, handle, out);
  });
}

anydev_status_t memory_import(int device, anydev_bk_memory_kind_t kind, const anydev_bk_share_t* in,
                              std::size_t bytes, void** handle, void** address) {
  return guarded("memory_import", [&] {
    if (anydev_status_t s = check_device("memory_import", device); s != ANYDEV_SUCCESS) return s;
    if (anydev_status_t s = check_share_kind("memory_import", kind); s != ANYDEV_SUCCESS) return s;
    if (handle == nullptr) return null_argument("memory_import", "handle");
    if (address == nullptr) return null_argument("memory_import", "address");
    return share_import(device, kind, in, bytes, handle, address);
  });
}

anydev_status_t memory_unshare(int device, anydev_bk_memory_kind_t kind, void* handle) {
  return guarded("memory_unshare", [&] {
    if (anydev_status_t s = check_device("memory_unshare", device); s != ANYDEV_SUCCESS) return s;
    return share_release(kind, handle);
  });
}

anydev_status_t event_create_shareable(int device, anydev_bk_event_t* out) {
  return guarded("event_create_shareable", [&] {
    if (anydev_status_t s = check_device("event_create_shareable", device); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (out == nullptr) return null_argument("event_create_shareable", "out");
    auto event = std::make_unique<Event>();
    if (anydev_status_t s = SharedEvent::create(&event->shared); s != ANYDEV_SUCCESS) return s;
    *out = reinterpret_cast<anydev_bk_event_t>(event.release());
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t event_export(anydev_bk_event_t event, anydev_bk_share_t* out) {
  return guarded("event_export", [&] {
    if (event == nullptr) return null_argument("event_export", "event");
    if (out == nullptr) return null_argument("event_export", "out");
    const SharedEvent* shared = to_event(event)->shared.get();
    if (shared == nullptr) {
      return set_error(ANYDEV_ERROR_UNSUPPORTED,
                       "cpu event_export: the event was not created shareable");
    }
    return shared->describe(out);
  });
}

anydev_status_t event_import(int device, const anydev_bk_share_t* in, anydev_bk_event_t* out) {
  return guarded("event_import", [&] {
    if (anydev_status_t s = check_device("event_import", device); s != ANYDEV_SUCCESS) return s;
    if (in == nullptr) return null_argument("event_import", "in");
    if (out == nullptr) return null_argument("event_import", "out");
    auto event = std::make_unique<Event>();
    if (anydev_status_t s = SharedEvent::open(*in, &event->shared); s != ANYDEV_SUCCESS) return s;
    *out = reinterpret_cast<anydev_bk_event_t>(event.release());
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t event_create_flags(int device, std::uint32_t flags, anydev_bk_event_t* out) {
  return guarded("event_create_flags", [&] {
    if (anydev_status_t s = check_device("event_create_flags", device); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (out == nullptr) return null_argument("event_create_flags", "out");
    *out = reinterpret_cast<anydev_bk_event_t>(
        new Event((flags & ANYDEV_EVENT_TIMING) != 0, (flags & ANYDEV_EVENT_BLOCKING_SYNC) != 0));
    return ANYDEV_SUCCESS;
  });
}

// The steady clock at the completion of each event's recorded work, read
// by the stamp tasks their records queued.
anydev_status_t event_elapsed_time(anydev_bk_event_t start, anydev_bk_event_t end, float* ms) {
  return guarded("event_elapsed_time", [&] {
    if (start == nullptr) return null_argument("event_elapsed_time", "start");
    if (end == nullptr) return null_argument("event_elapsed_time", "end");
    if (ms == nullptr) return null_argument("event_elapsed_time", "ms");
    const std::shared_ptr<TimeStamp> a = to_event(start)->stamp();
    const std::shared_ptr<TimeStamp> b = to_event(end)->stamp();
    if (a == nullptr || b == nullptr) {
      return set_error(ANYDEV_ERROR_INVALID_STATE,
                       "cpu event_elapsed_time: an event was never recorded as a timing event");
    }
    const std::int64_t t0 = a->ns.load(std::memory_order_acquire);
    const std::int64_t t1 = b->ns.load(std::memory_order_acquire);
    if (t0 < 0 || t1 < 0) {
      return set_error(ANYDEV_ERROR_NOT_READY,
                       std::string("cpu event_elapsed_time: the work the ") +
                           (t0 < 0 ? "start" : "end") + " event captured has not completed yet");
    }
    *ms = static_cast<float>(static_cast<double>(t1 - t0) / 1e6);
    return ANYDEV_SUCCESS;
  });
}

// Survives fork(): its workers, memory registry and pools are recreated or
// reset in a child (docs/reliability.md, fork()). event_query reads the
// captured stream's completed count under the event's own mutex: cheap.
constexpr anydev_backend_table_t kTable = ANYDEV_KIT_BACKEND_TABLE(
    kBackendName, .native_handle = kit::entry<native_handle>,
    .memory_is_locked = kit::entry<memory_is_locked>,
    .shareable_alloc = kit::entry<shareable_alloc>, .memory_export = kit::entry<memory_export>,
    .memory_import = kit::entry<memory_import>, .memory_unshare = kit::entry<memory_unshare>,
    .event_create_shareable = kit::entry<event_create_shareable>,
    .event_export = kit::entry<event_export>, .event_import = kit::entry<event_import>,
    .event_create_flags = kit::entry<event_create_flags>,
    .event_elapsed_time = kit::entry<event_elapsed_time>,
    .stream_priority_range = kit::entry<stream_priority_range>,
    .stream_create_priority = kit::entry<stream_create_priority>,
    .host_register = kit::entry<host_register>, .host_unregister = kit::entry<host_unregister>,
    .device_attribute = kit::entry<device_attribute>, .device_uuid = kit::entry<device_uuid>,
    .api_version = kit::entry<api_version>, .graph_create = kit::entry<graph_create>,
    .graph_launch = kit::entry<graph_launch>, .graph_destroy = kit::entry<graph_destroy>,
    .flags = ANYDEV_BK_FLAG_SURVIVES_FORK | ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY);

}  // namespace
}  // namespace anydev::cpu

ANYDEV_KIT_BACKEND_ENTRY(, anydev_cpu_backend_entry, cpu)
