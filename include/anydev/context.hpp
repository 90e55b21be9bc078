// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: DeviceContext (one device of one backend plus one stream on
// it) and BackendInfo. Part of anydev.hpp (include that). The members that
// create, copy and fill buffers are defined in buffer.hpp, which a program
// using buffers includes (anydev.hpp does). Ownership and thread safety: see
// DeviceContext.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_CONTEXT_HPP_
#define ANYDEV_CONTEXT_HPP_

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/attributes.hpp"
#include "anydev/detail/buffer_fwd.hpp"
#include "anydev/detail/c_strings.hpp"
#include "anydev/detail/handle.hpp"
#include "anydev/dtype.hpp"
#include "anydev/memory.hpp"
#include "anydev/share.hpp"
#include "anydev/status.hpp"
#include "anydev/stream.hpp"

namespace anydev {

// One known backend, as anydev-info lists it: `reason` says why it is
// unavailable (empty when available); `library` names the plugin and vendor
// library tried (empty for cpu).
struct BackendInfo {
  std::string name;
  bool available;
  std::string reason;
  int device_count;
  std::string library;
};

// One device of one backend plus one stream on it: every enqueue_* call returns
// at once and runs in order on that stream. Copying shares the context
// (reference count); a moved-from context is empty and its operations throw
// Error(invalid_state). Thread-safe as the C ABI: copies may be used from any
// thread, and work enqueued from several threads is serialized in some order.
// What DeviceContext::create_event(EventOptions) makes: Mojo's
// create_event(timing=..., blocking_sync=...).
struct EventOptions {
  bool timing = false;         // the event can measure time (costs on CUDA, HIP)
  bool blocking_sync = false;  // synchronize sleeps in the OS instead of spinning
};

// DeviceContext::stream_priority_range(): lower numbers are higher
// priorities; greatest <= least.
struct StreamPriorityRange {
  int least = 0;     // the normal priority
  int greatest = 0;  // the highest
};

class DeviceContext {
 public:
  // The first entry of ANYDEV_BACKEND (else cuda, hip, level_zero, opencl,
  // cpu) that has a device.
  DeviceContext() : handle_(create(nullptr, -1)) {}
  // Device `device_id` (>= 0; a negative index is Error(invalid_argument):
  // DeviceContext() is the default device) of `api` ("cuda", "cpu", ...); an
  // empty api means the first backend of the preference order that has that
  // device.
  explicit DeviceContext(int device_id, std::string_view api = {})
      : handle_(create(detail::OptionalCString(api).get(), checked_index(device_id))) {}

  // Devices of `api` (empty: the first available backend); 0 when the backend
  // is unavailable or unknown. Never throws.
  static int number_of_devices(std::string_view api = {}) noexcept {
    try {
      const detail::OptionalCString name(api);
      const int count = anydev_device_count(name.get());
      return count > 0 ? count : 0;
    } catch (...) {  // std::bad_alloc while copying the name
      return 0;
    }
  }
  // Every known backend, available or not, with the reason it is unavailable.
  static std::vector<BackendInfo> backends() {
    std::size_t count = 0;
    detail::check(anydev_backend_count(&count));
    std::vector<BackendInfo> result;
    result.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      anydev_backend_info_t info{};
      info.struct_size = sizeof(info);
      detail::check(anydev_backend_info(i, &info));
      result.push_back(BackendInfo{detail::to_std_string(info.name), info.available != 0,
                                   detail::to_std_string(info.reason), info.device_count,
                                   detail::to_std_string(info.library)});
    }
    return result;
  }

  // A context on device `device` of `api` whose stream is an existing native
  // stream (CUstream, cl_command_queue, ...), e.g. a PyTorch CUDA stream; the
  // native stream is not owned and must outlive the context's work. A
  // negative device is Error(invalid_argument), as in the constructor.
  static DeviceContext wrap_native_stream(std::string_view api, int device, void* native_stream) {
    anydev_context_t out = nullptr;
    detail::check(anydev_context_wrap_native_stream(detail::OptionalCString(api).get(),
                                                    checked_index(device), native_stream, &out));
    return adopt(out);
  }

  // "cpu", "cuda", "hip", "level_zero", "opencl".
  std::string api() const {
    const char* out = nullptr;
    detail::check(anydev_context_api(get("api"), &out));
    return detail::to_std_string(out);
  }
  // The device's name.
  std::string name() const {
    const char* out = nullptr;
    detail::check(anydev_context_device_name(get("name"), &out));
    return detail::to_std_string(out);
  }
  // Free text from the backend about the device ("" when none): driver and
  // runtime versions, compute capability, PCI bus id, ...
  std::string description() const {
    const char* out = nullptr;
    detail::check(anydev_context_device_description(get("description"), &out));
    return detail::to_std_string(out);
  }
  // The device's index within its backend.
  int id() const {
    int out = 0;
    detail::check(anydev_context_device_id(get("id"), &out));
    return out;
  }
  MemoryInfo memory_info() const {
    anydev_memory_info_t info{};
    info.struct_size = sizeof(info);
    detail::check(anydev_context_memory_info(get("memory_info"), &info));
    return MemoryInfo{info.free_bytes, info.total_bytes};
  }
  // The caching pool of this device for `kind` (shared by every context on
  // the device).
  PoolStats pool_stats(MemoryKind kind) const {
    anydev_pool_stats_t stats{};
    stats.struct_size = sizeof(stats);
    detail::check(anydev_context_pool_stats(get("pool_stats"),
                                            static_cast<anydev_memory_kind_t>(kind), &stats));
    return PoolStats{stats.bytes_in_use,
                     stats.bytes_cached,
                     stats.peak_bytes_in_use,
                     stats.allocation_count,
                     stats.cache_hits,
                     stats.cache_misses,
                     stats.bytes_waiting_for_release,
                     stats.blocks_waiting_for_release,
                     stats.bytes_in_segments};
  }
  // This process's host memory from the device and its locked part.
  HostMemoryLocks host_memory_locks() const {
    HostMemoryLocks out{};
    detail::check(anydev_context_host_memory_locks(get("host_memory_locks"), &out.locked_bytes,
                                                   &out.total_bytes));
    return out;
  }
  // The release threshold of this device's pool for `kind` (see
  // anydev_context_set_pool_release_threshold); SIZE_MAX never trims.
  void set_pool_release_threshold(MemoryKind kind, std::size_t bytes) const {
    detail::check(anydev_context_set_pool_release_threshold(
        get("set_pool_release_threshold"), static_cast<anydev_memory_kind_t>(kind), bytes));
  }
  std::size_t pool_release_threshold(MemoryKind kind) const {
    std::size_t out = 0;
    detail::check(anydev_context_pool_release_threshold(
        get("pool_release_threshold"), static_cast<anydev_memory_kind_t>(kind), &out));
    return out;
  }
  // Frees the device's cached blocks (both kinds) without waiting: blocks a
  // stream still uses are freed by a core thread once that work is done.
  void release_cached_memory() const {
    detail::check(anydev_context_release_cached_memory(get("release_cached_memory")));
  }

  // Pinned host memory of `size` elements, usable at once.
  template <Element T>
  HostBuffer<T> enqueue_create_host_buffer(std::size_t size) const;
  // Device memory of `size` elements, allocated in order on this stream.
  template <Element T>
  DeviceBuffer<T> enqueue_create_buffer(std::size_t size) const;
  // enqueue_create_buffer, then synchronize().
  template <Element T>
  DeviceBuffer<T> create_buffer_sync(std::size_t size) const;

  // Memory other processes can open (docs/sharing.md): export_handle() on
  // the buffer, import_host_buffer / import_buffer there. Usable at once;
  // never pooled. Error(unsupported) naming the reason where the backend
  // cannot share.
  template <Element T>
  HostBuffer<T> create_shareable_host_buffer(std::size_t size) const;
  template <Element T>
  DeviceBuffer<T> create_shareable_buffer(std::size_t size) const;
  // Device attributes (docs/backends.md, "Device attributes"): the value in
  // the unit the attribute's name gives; Error(unsupported), naming the
  // attribute and why, where the backend has no value for it.
  std::int64_t get_attribute(DeviceAttribute attribute) const {
    std::int64_t out = 0;
    detail::check(anydev_context_get_attribute(
        get("get_attribute"), static_cast<anydev_device_attribute_t>(attribute), &out));
    return out;
  }
  // The device's 16-byte UUID as its vendor gives it; Error(unsupported) on cpu.
  std::array<std::uint8_t, 16> uuid() const {
    std::array<std::uint8_t, 16> out{};
    detail::check(anydev_context_device_uuid(get("uuid"), out.data()));
    return out;
  }
  // "dddd:bb:dd.f"; Error(unsupported) where the device has no PCI address.
  std::string pci_bus_id() const {
    char out[32] = {};
    detail::check(anydev_context_pci_bus_id(get("pci_bus_id"), out, sizeof out));
    return out;
  }
  // The vendor driver's or API's version as text (Mojo's get_api_version).
  std::string api_version() const {
    char out[256] = {};
    detail::check(anydev_context_api_version(get("api_version"), out, sizeof out));
    return out;
  }

  // Registers `size` elements of host memory the caller owns at `pointer`
  // (page-locks it for the device) and returns a HostBuffer over it whose
  // copies run as from pinned memory. anydev never frees the memory: once
  // the last HostBuffer (and view) over it is gone and the work that used it
  // has completed, the registration is undone and `on_unregistered(user_data)`
  // runs (on any thread); keep the memory valid until then. Error
  // (invalid_argument) for a null pointer, size 0, a pointer not aligned for
  // T, unmapped memory or memory sharing a page with a live registration;
  // (out_of_range) past the address space; (unsupported) naming why where the
  // backend cannot register. docs/registered-memory.md.
  template <Element T>
  HostBuffer<T> register_host_memory(T* pointer, std::size_t size,
                                     anydev_unregistered_callback_t on_unregistered = nullptr,
                                     void* user_data = nullptr) const;
  // Opens a buffer another process exported, on this context's device; the
  // handle's fds are only read. Error(invalid_argument) when the handle is
  // of another kind, dtype, backend or device, or damaged.
  template <Element T>
  HostBuffer<T> import_host_buffer(const ShareHandle& handle) const;
  template <Element T>
  DeviceBuffer<T> import_buffer(const ShareHandle& handle) const;

  // enqueue_copy(dst, src), on this context's stream; dst and src are a
  // HostBuffer<T> or DeviceBuffer<T> each (any mix), or one of them is host
  // memory of T given by pointer or span. Buffer <- buffer moves dst.size()
  // elements (src must be at least that large); buffer <- pointer moves
  // dst.size(); buffer <- span needs a span of at least dst.size(); pointer
  // <- buffer moves src.size(); span <- buffer needs at least src.size().
  // Host memory given by pointer or span must stay valid until the copy
  // completes (synchronize).
  template <detail::AnyBuffer Dst, detail::AnyBuffer Src>
  requires std::same_as<detail::element_t<Dst>, detail::element_t<Src>>
  void enqueue_copy(const Dst& dst, const Src& src) const;
  template <detail::AnyBuffer Dst>
  void enqueue_copy(const Dst& dst, std::type_identity_t<const detail::element_t<Dst>*> src) const;
  template <detail::AnyBuffer Dst>
  void enqueue_copy(const Dst& dst,
                    std::type_identity_t<std::span<const detail::element_t<Dst>>> src) const;
  template <detail::AnyBuffer Src>
  void enqueue_copy(std::type_identity_t<detail::element_t<Src>*> dst, const Src& src) const;
  template <detail::AnyBuffer Src>
  void enqueue_copy(std::type_identity_t<std::span<detail::element_t<Src>>> dst,
                    const Src& src) const;

  // Writes the exact bits of `value` into every element of a HostBuffer<T> or
  // DeviceBuffer<T>, on this stream.
  template <detail::AnyBuffer Buffer>
  void enqueue_memset(const Buffer& buffer,
                      std::type_identity_t<detail::element_t<Buffer>> value) const;

  // Releases memory obtained with take_ptr(), after the work already
  // enqueued on this stream.
  template <Element T>
  void free(T* taken) const {
    detail::check(anydev_context_free(get("free"), static_cast<void*>(taken)));
  }

  // Waits for everything enqueued on this stream; throws the first
  // asynchronous error since the previous synchronize.
  void synchronize() const { detail::check(anydev_context_synchronize(get("synchronize"))); }
  // Whether this context's stream is capturing into a graph
  // (DeviceGraph::begin_capture, StreamCapture in graph.hpp).
  bool is_capturing() const {
    int out = 0;
    detail::check(anydev_context_is_capturing(get("is_capturing"), &out));
    return out != 0;
  }
  // Ends the capture of this context's stream (on the thread that began it).
  void end_capture() const { detail::check(anydev_context_end_capture(get("end_capture"))); }

  // This context's stream.
  DeviceStream stream() const {
    anydev_stream_t out = nullptr;
    detail::check(anydev_context_stream(get("stream"), &out));
    return DeviceStream::adopt(out);
  }
  // A new stream on this device.
  DeviceStream create_stream() const {
    anydev_stream_t out = nullptr;
    detail::check(anydev_context_create_stream(get("create_stream"), &out));
    return DeviceStream::adopt(out);
  }
  // A context on the same device whose work goes to `stream`.
  DeviceContext with_stream(const DeviceStream& stream) const {
    const anydev_context_t ctx = get("with_stream");
    if (stream.handle() == nullptr) detail::throw_empty("DeviceContext", "with_stream", "stream");
    anydev_context_t out = nullptr;
    detail::check(anydev_context_with_stream(ctx, stream.handle(), &out));
    return adopt(out);
  }
  DeviceEvent create_event() const {
    anydev_event_t out = nullptr;
    detail::check(anydev_context_create_event(get("create_event"), &out));
    return DeviceEvent::adopt(out);
  }
  // An event other processes can open and wait on (Mojo's
  // create_event(interprocess=True)); see DeviceEvent::export_handle.
  DeviceEvent create_shareable_event() const {
    anydev_event_t out = nullptr;
    detail::check(anydev_context_create_shareable_event(get("create_shareable_event"), &out));
    return DeviceEvent::adopt(out);
  }
  // Opens an event another process exported.
  DeviceEvent import_event(const ShareHandle& handle) const {
    anydev_event_t out = nullptr;
    detail::check(anydev_event_import(get("import_event"), &handle.raw(), &out));
    return DeviceEvent::adopt(out);
  }
  // Timed events (docs/timing.md): an event that can measure time
  // (DeviceEvent::elapsed_time) and/or whose synchronize sleeps in the OS.
  // create_event() stays the cheap event without timing.
  DeviceEvent create_event(EventOptions options) const {
    const unsigned flags = (options.timing ? unsigned{ANYDEV_EVENT_TIMING} : 0U) |
                           (options.blocking_sync ? unsigned{ANYDEV_EVENT_BLOCKING_SYNC} : 0U);
    anydev_event_t out = nullptr;
    detail::check(anydev_context_create_event_with_flags(get("create_event"), flags, &out));
    return DeviceEvent::adopt(out);
  }
  // Stream priorities (docs/timing.md), as CUDA's: lower is higher. `least`
  // is the normal priority, `greatest` the highest; {0, 0} on a device
  // without priorities.
  StreamPriorityRange stream_priority_range() const {
    StreamPriorityRange out;
    detail::check(anydev_context_stream_priority_range(get("stream_priority_range"), &out.least,
                                                       &out.greatest));
    return out;
  }
  // A new stream at `priority`, clamped into stream_priority_range() as
  // CUDA does (DeviceStream::priority() says what it got).
  DeviceStream create_stream(int priority) const {
    anydev_stream_t out = nullptr;
    detail::check(anydev_context_create_stream_with_priority(get("create_stream"), priority, &out));
    return DeviceStream::adopt(out);
  }
  // Mojo's execution_time: the nanoseconds the device took for the work that
  // `iterations` calls of fn(*this) enqueue on this context's stream (timing
  // events around them; waits for the end). An exception from fn propagates
  // (the work it already enqueued stays enqueued).
  template <class Fn>
  std::int64_t execution_time(Fn&& fn, std::size_t iterations = 1) const {
    return timed(iterations, [&](std::size_t) { fn(*this); });
  }
  // Mojo's execution_time_iter: the same with fn(*this, i) for i in
  // [0, iterations).
  template <class Fn>
  std::int64_t execution_time_iter(Fn&& fn, std::size_t iterations) const {
    return timed(iterations, [&](std::size_t i) { fn(*this, i); });
  }
  // Later work on this context waits (on the device) for the work already
  // enqueued on `other`.
  void enqueue_wait_for(const DeviceContext& other) const {
    const anydev_context_t ctx = get("enqueue_wait_for");
    detail::check(anydev_context_wait_for(ctx, other.get("enqueue_wait_for")));
  }
  // True when this device can access `peer`'s memory (false for itself and cpu).
  bool can_access(const DeviceContext& peer) const {
    const anydev_context_t ctx = get("can_access");
    int out = 0;
    detail::check(anydev_context_can_access(ctx, peer.get("can_access"), &out));
    return out != 0;
  }
  // Lets this device access `peer`'s memory (one direction).
  void enable_peer_access(const DeviceContext& peer) const {
    const anydev_context_t ctx = get("enable_peer_access");
    detail::check(anydev_context_enable_peer_access(ctx, peer.get("enable_peer_access")));
  }
  // ANYDEV_NATIVE_DEVICE or ANYDEV_NATIVE_CONTEXT: borrowed, valid while this
  // context lives.
  void* native_handle(anydev_native_kind_t kind) const {
    void* out = nullptr;
    detail::check(anydev_context_native_handle(get("native_handle"), kind, &out));
    return out;
  }

  // The C handle, borrowed (no reference added); NULL when empty.
  anydev_context_t handle() const noexcept { return handle_.get(); }
  // Wraps a C handle, taking over the one reference the caller holds.
  static DeviceContext adopt(anydev_context_t owned) noexcept {
    DeviceContext ctx(Adopt{});
    ctx.handle_ = detail::ContextHandle(owned);
    return ctx;
  }

 private:
  struct Adopt {};
  explicit DeviceContext(Adopt) noexcept {}

  static int checked_index(int device_id) {
    if (device_id < 0) {
      throw Error(Status::invalid_argument,
                  "DeviceContext: device index " + std::to_string(device_id) +
                      " is negative (pass an index >= 0, or use DeviceContext() for the default "
                      "device)");
    }
    return device_id;
  }
  template <class Body>
  std::int64_t timed(std::size_t iterations, Body&& body) const {
    struct Call {
      Body* body;
      std::size_t next;
      std::exception_ptr error;
    } call{&body, 0, nullptr};
    const auto trampoline = [](anydev_context_t, void* user) noexcept -> anydev_status_t {
      auto* c = static_cast<Call*>(user);
      try {
        (*c->body)(c->next++);
        return ANYDEV_SUCCESS;
      } catch (...) {
        c->error = std::current_exception();
        return ANYDEV_ERROR_INVALID_STATE;
      }
    };
    std::int64_t ns = 0;
    const anydev_status_t s =
        anydev_context_execution_time(get("execution_time"), trampoline, &call, iterations, &ns);
    if (call.error) std::rethrow_exception(call.error);
    detail::check(s);
    return ns;
  }
  static anydev_context_t create(const char* api, int device) {
    anydev_context_t out = nullptr;
    detail::check(anydev_context_create(api, device, &out));
    return out;
  }
  anydev_context_t get(const char* method) const {
    if (handle_.get() == nullptr) detail::throw_empty("DeviceContext", method, "context");
    return handle_.get();
  }

  detail::ContextHandle handle_;
};

}  // namespace anydev

#endif  // ANYDEV_CONTEXT_HPP_
