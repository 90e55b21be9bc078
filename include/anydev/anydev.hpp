// anydev C++20 API: header-only RAII types over the C ABI in anydev/anydev.h.
//
// The names follow Mojo's gpu.host module (DeviceContext, HostBuffer,
// DeviceBuffer, DeviceStream, DeviceEvent) so that its documentation carries
// over. Every failing C call becomes `throw anydev::Error(status, message)`
// where the message is the C ABI's, naming the operation and the values.
//
// Ownership: every class here holds one reference to a C handle. Copying an
// object retains the handle (both copies share the same object); moving
// transfers the reference and leaves the source empty; the destructor releases
// it. Releasing a buffer never blocks: its memory is freed after the work
// already enqueued that uses it.
//
// Thread safety: each call is thread-safe as the C ABI says (any call from any
// thread; calls on one stream from several threads are serialized in some
// order). Copies of one handle may be used from several threads at once; a
// single C++ object must not be assigned to while another thread uses it.
#ifndef ANYDEV_ANYDEV_HPP_
#define ANYDEV_ANYDEV_HPP_

#include <bit>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "anydev/anydev.h"

namespace anydev {

// ---- status and errors ------------------------------------------------------

// Outcome of an operation; the same numeric values as anydev_status_t.
enum class Status {
  success = ANYDEV_SUCCESS,
  invalid_argument = ANYDEV_ERROR_INVALID_ARGUMENT,
  out_of_range = ANYDEV_ERROR_OUT_OF_RANGE,
  out_of_memory = ANYDEV_ERROR_OUT_OF_MEMORY,
  backend_unavailable = ANYDEV_ERROR_BACKEND_UNAVAILABLE,
  device_error = ANYDEV_ERROR_DEVICE,
  unsupported = ANYDEV_ERROR_UNSUPPORTED,
  invalid_state = ANYDEV_ERROR_INVALID_STATE,
  internal = ANYDEV_ERROR_INTERNAL,
};

// "success", "invalid_argument", ...; "unknown" for a value outside the enum.
constexpr const char* to_string(Status status) noexcept {
  switch (status) {
    case Status::success:
      return "success";
    case Status::invalid_argument:
      return "invalid_argument";
    case Status::out_of_range:
      return "out_of_range";
    case Status::out_of_memory:
      return "out_of_memory";
    case Status::backend_unavailable:
      return "backend_unavailable";
    case Status::device_error:
      return "device_error";
    case Status::unsupported:
      return "unsupported";
    case Status::invalid_state:
      return "invalid_state";
    case Status::internal:
      return "internal";
  }
  return "unknown";
}

// The exception every failing operation throws: what() is the message (naming
// the operation and the values), status() the code. Immutable, so it may be
// shared between threads.
class Error : public std::runtime_error {
 public:
  Error(Status status, std::string message)
      : std::runtime_error(std::move(message)), status_(status) {}
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

namespace detail {

// Throws Error(status, the calling thread's last C error message) unless
// `status` is success.
inline void check(anydev_status_t status) {
  if (status == ANYDEV_SUCCESS) return;
  std::string message = anydev_last_error_message();
  if (message.empty()) {
    message = std::string("anydev call failed with ") + to_string(static_cast<Status>(status));
  }
  throw Error(static_cast<Status>(status), std::move(message));
}

// Whether the validation layer is on (ANYDEV_VALIDATE), asked once.
inline bool validation_on() noexcept {
  static const bool on = anydev_validation_enabled() != 0;
  return on;
}
// The same, read when the program starts: a plain constant the compiler can
// hoist out of element loops, so that operator[] stays as fast as a pointer
// access when validation is off (code that runs before this initializer sees
// false).
inline const bool validation_on_at_start = anydev_validation_enabled() != 0;

[[noreturn]] inline void throw_empty(const char* type, const char* method, const char* what) {
  throw Error(Status::invalid_state, std::string(type) + "::" + method + ": the " + what +
                                         " is empty (default-constructed or moved-from)");
}

// NUL-terminated copy of an optional name: empty -> NULL.
class OptionalCString {
 public:
  explicit OptionalCString(std::string_view s) : value_(s) {}
  const char* get() const noexcept { return value_.empty() ? nullptr : value_.c_str(); }

 private:
  std::string value_;
};

inline std::string to_std_string(const char* s) {
  return s != nullptr ? std::string(s) : std::string();
}

}  // namespace detail

// ---- element types ------------------------------------------------------------

// Element type of a buffer; the same numeric values as anydev_dtype_t.
enum class DType {
  boolean = ANYDEV_DTYPE_BOOL,
  int8 = ANYDEV_DTYPE_INT8,
  int16 = ANYDEV_DTYPE_INT16,
  int32 = ANYDEV_DTYPE_INT32,
  int64 = ANYDEV_DTYPE_INT64,
  uint8 = ANYDEV_DTYPE_UINT8,
  uint16 = ANYDEV_DTYPE_UINT16,
  uint32 = ANYDEV_DTYPE_UINT32,
  uint64 = ANYDEV_DTYPE_UINT64,
  float16 = ANYDEV_DTYPE_FLOAT16,
  bfloat16 = ANYDEV_DTYPE_BFLOAT16,
  float32 = ANYDEV_DTYPE_FLOAT32,
  float64 = ANYDEV_DTYPE_FLOAT64,
  complex64 = ANYDEV_DTYPE_COMPLEX64,
  complex128 = ANYDEV_DTYPE_COMPLEX128,
};

// "bool", "int8", ..., "complex128" (the C ABI's names); "unknown" otherwise.
constexpr const char* to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::boolean:
      return "bool";
    case DType::int8:
      return "int8";
    case DType::int16:
      return "int16";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::uint8:
      return "uint8";
    case DType::uint16:
      return "uint16";
    case DType::uint32:
      return "uint32";
    case DType::uint64:
      return "uint64";
    case DType::float16:
      return "float16";
    case DType::bfloat16:
      return "bfloat16";
    case DType::float32:
      return "float32";
    case DType::float64:
      return "float64";
    case DType::complex64:
      return "complex64";
    case DType::complex128:
      return "complex128";
  }
  return "unknown";
}

static_assert(std::numeric_limits<float>::is_iec559 && sizeof(float) == 4,
              "anydev needs IEEE 754 binary32 float");
static_assert(std::numeric_limits<double>::is_iec559 && sizeof(double) == 8,
              "anydev needs IEEE 754 binary64 double");

namespace detail {

// IEEE 754 binary32 -> binary16, round to nearest even. Overflow gives
// infinity; NaN stays NaN (quiet, sign and top payload bits kept).
constexpr std::uint16_t float_to_half_bits(float value) noexcept {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  const std::uint32_t magnitude = f & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u) {  // infinity or NaN
    if (magnitude == 0x7F800000u) return sign | 0x7C00u;
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x03FFu));
  }
  if (magnitude >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 rounds to infinity
  if (magnitude >= 0x38800000u) {                       // normal half: >= 2^-14
    const std::uint32_t rebiased = magnitude - (112u << 23);
    const std::uint32_t rounded = rebiased + 0x0FFFu + ((rebiased >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | (rounded >> 13));
  }
  if (magnitude <= 0x33000000u) return sign;  // <= 2^-25 rounds (to even) to zero
  // Subnormal half: the value in units of 2^-24, rounded to nearest even.
  const std::uint32_t mantissa = (magnitude & 0x007FFFFFu) | 0x00800000u;
  const std::uint32_t shift = 126u - (magnitude >> 23);  // 14..24
  std::uint32_t units = mantissa >> shift;
  const std::uint32_t remainder = mantissa & ((1u << shift) - 1u);
  const std::uint32_t half_unit = 1u << (shift - 1u);
  if (remainder > half_unit || (remainder == half_unit && (units & 1u) != 0)) ++units;
  return static_cast<std::uint16_t>(sign | units);
}

// IEEE 754 binary16 -> binary32, exact.
constexpr float half_bits_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x03FFu;
  std::uint32_t f = 0;
  if (exponent == 0x1Fu) {
    f = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    f = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    f = sign;
  } else {  // subnormal: normalize
    std::uint32_t float_exponent = 113;
    while ((mantissa & 0x0400u) == 0) {
      mantissa <<= 1;
      --float_exponent;
    }
    f = sign | (float_exponent << 23) | ((mantissa & 0x03FFu) << 13);
  }
  return std::bit_cast<float>(f);
}

// binary32 -> bfloat16, round to nearest even; NaN stays NaN (made quiet).
constexpr std::uint16_t float_to_bfloat16_bits(float value) noexcept {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((f >> 16) | 0x0040u);
  const std::uint32_t rounded = f + 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

constexpr float bfloat16_bits_to_float(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

}  // namespace detail

// IEEE 754 half precision, as 16-bit storage: convert to and from float
// (round to nearest even; overflow gives infinity). == compares bits. A plain
// value type.
struct float16 {
  std::uint16_t bits = 0;

  float16() = default;
  constexpr explicit float16(float value) noexcept : bits(detail::float_to_half_bits(value)) {}
  constexpr explicit operator float() const noexcept { return detail::half_bits_to_float(bits); }
  static constexpr float16 from_bits(std::uint16_t raw) noexcept {
    float16 h;
    h.bits = raw;
    return h;
  }
  friend constexpr bool operator==(float16, float16) = default;
};

// bfloat16 (the top half of a binary32), as 16-bit storage: convert to and
// from float (round to nearest even; NaN stays NaN). == compares bits. A
// plain value type.
struct bfloat16 {
  std::uint16_t bits = 0;

  bfloat16() = default;
  constexpr explicit bfloat16(float value) noexcept : bits(detail::float_to_bfloat16_bits(value)) {}
  constexpr explicit operator float() const noexcept {
    return detail::bfloat16_bits_to_float(bits);
  }
  static constexpr bfloat16 from_bits(std::uint16_t raw) noexcept {
    bfloat16 b;
    b.bits = raw;
    return b;
  }
  friend constexpr bool operator==(bfloat16, bfloat16) = default;
};

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2 && sizeof(bool) == 1 &&
                  sizeof(complex64) == 8 && sizeof(complex128) == 16,
              "anydev element types must have the C ABI's sizes");

namespace detail {

template <class T>
struct DTypeOf {
  static constexpr bool known = false;
  static constexpr DType value = DType::boolean;  // unused: dtype_of fails first
};
#define ANYDEV_DETAIL_DTYPE(type, dtype)         \
  template <>                                    \
  struct DTypeOf<type> {                         \
    static constexpr bool known = true;          \
    static constexpr DType value = DType::dtype; \
  }
ANYDEV_DETAIL_DTYPE(bool, boolean);
ANYDEV_DETAIL_DTYPE(std::int8_t, int8);
ANYDEV_DETAIL_DTYPE(std::int16_t, int16);
ANYDEV_DETAIL_DTYPE(std::int32_t, int32);
ANYDEV_DETAIL_DTYPE(std::int64_t, int64);
ANYDEV_DETAIL_DTYPE(std::uint8_t, uint8);
ANYDEV_DETAIL_DTYPE(std::uint16_t, uint16);
ANYDEV_DETAIL_DTYPE(std::uint32_t, uint32);
ANYDEV_DETAIL_DTYPE(std::uint64_t, uint64);
ANYDEV_DETAIL_DTYPE(anydev::float16, float16);
ANYDEV_DETAIL_DTYPE(anydev::bfloat16, bfloat16);
ANYDEV_DETAIL_DTYPE(float, float32);
ANYDEV_DETAIL_DTYPE(double, float64);
ANYDEV_DETAIL_DTYPE(std::complex<float>, complex64);
ANYDEV_DETAIL_DTYPE(std::complex<double>, complex128);
#undef ANYDEV_DETAIL_DTYPE

template <class T>
consteval DType dtype_or_fail() {
  static_assert(DTypeOf<T>::known,
                "anydev: T is not a buffer element type; use bool, std::int8_t ... std::uint64_t, "
                "anydev::float16, anydev::bfloat16, float, double, std::complex<float> or "
                "std::complex<double> (without const)");
  return DTypeOf<T>::value;
}

}  // namespace detail

// The DType of a C++ element type; any other type is a compile-time error.
template <class T>
inline constexpr DType dtype_of = detail::dtype_or_fail<T>();

// The element types a buffer can hold: exactly those dtype_of accepts.
template <class T>
concept Element = detail::DTypeOf<T>::known;

// ---- plain data -----------------------------------------------------------------

// Free and total memory of a device, in bytes.
struct MemoryInfo {
  std::size_t free;
  std::size_t total;
};

// Where a buffer's memory is: pinned host memory (HostBuffer) or device
// memory (DeviceBuffer).
enum class MemoryKind {
  host = ANYDEV_MEMORY_HOST,
  device = ANYDEV_MEMORY_DEVICE,
};

// Statistics of one caching pool (docs/memory-pools.md). Sizes are block
// sizes (requests rounded up to a size class); allocation_count ==
// cache_hits + cache_misses.
struct PoolStats {
  std::size_t bytes_in_use;
  std::size_t bytes_cached;
  std::size_t peak_bytes_in_use;
  std::uint64_t allocation_count;
  std::uint64_t cache_hits;
  std::uint64_t cache_misses;
};

// Host memory held from one device (live host buffers, taken pointers and
// the host pool's cache) and how much of it is page-locked.
struct HostMemoryLocks {
  std::size_t locked_bytes;
  std::size_t total_bytes;
};

// False when ANYDEV_POOL=0 turned the caching pools off.
inline bool pool_enabled() noexcept { return anydev_pool_enabled() != 0; }

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

class DeviceContext;
class DeviceStream;
class DeviceEvent;
template <Element T>
class HostBuffer;
template <Element T>
class DeviceBuffer;
template <Element T>
class HostMapping;

namespace detail {

// Shared ownership of one C handle: copy = retain, move = transfer (the
// source becomes empty), destruction = release. Release failures are ignored
// (there is nothing a destructor can do about them).
template <class Handle, anydev_status_t (*Retain)(Handle), anydev_status_t (*Release)(Handle)>
class SharedHandle {
 public:
  SharedHandle() noexcept = default;
  explicit SharedHandle(Handle owned) noexcept : handle_(owned) {}
  SharedHandle(const SharedHandle& other) noexcept : handle_(other.handle_) {
    if (handle_ != nullptr) static_cast<void>(Retain(handle_));
  }
  SharedHandle(SharedHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  SharedHandle& operator=(const SharedHandle& other) noexcept {
    if (other.handle_ != nullptr) static_cast<void>(Retain(other.handle_));
    reset(other.handle_);
    return *this;
  }
  SharedHandle& operator=(SharedHandle&& other) noexcept {
    if (this != &other) reset(std::exchange(other.handle_, nullptr));
    return *this;
  }
  ~SharedHandle() { reset(nullptr); }

  Handle get() const noexcept { return handle_; }
  // Gives up the reference without releasing it.
  Handle detach() noexcept { return std::exchange(handle_, nullptr); }

 private:
  void reset(Handle owned) noexcept {
    Handle old = std::exchange(handle_, owned);
    if (old != nullptr) static_cast<void>(Release(old));
  }

  Handle handle_ = nullptr;
};

using ContextHandle = SharedHandle<anydev_context_t, anydev_context_retain, anydev_context_release>;
using StreamHandle = SharedHandle<anydev_stream_t, anydev_stream_retain, anydev_stream_release>;
using EventHandle = SharedHandle<anydev_event_t, anydev_event_retain, anydev_event_release>;
using BufferHandle = SharedHandle<anydev_buffer_t, anydev_buffer_retain, anydev_buffer_release>;

}  // namespace detail

// ---- events and streams -----------------------------------------------------------

// A point in a stream's work: recorded with DeviceStream::record_event, waited
// for on the host (synchronize) or by another stream (enqueue_wait_for).
// Shared by copy; a default-constructed or moved-from event is empty and its
// operations throw Error(invalid_state). Thread-safe as the C ABI.
class DeviceEvent {
 public:
  DeviceEvent() noexcept = default;

  // Blocks until the work the event captured has finished.
  void synchronize() const { detail::check(anydev_event_synchronize(get("synchronize"))); }
  // True when the captured work has finished (also for an event never recorded).
  bool is_complete() const {
    int complete = 0;
    detail::check(anydev_event_query(get("is_complete"), &complete));
    return complete != 0;
  }
  // CUevent, cl_event, ...: borrowed, valid while this event lives.
  void* native_handle() const {
    void* out = nullptr;
    detail::check(anydev_event_native_handle(get("native_handle"), &out));
    return out;
  }
  // The C handle, borrowed (no reference added); NULL when empty.
  anydev_event_t handle() const noexcept { return handle_.get(); }
  // Wraps a C handle, taking over the one reference the caller holds.
  static DeviceEvent adopt(anydev_event_t owned) noexcept { return DeviceEvent(owned); }

 private:
  explicit DeviceEvent(anydev_event_t owned) noexcept : handle_(owned) {}
  anydev_event_t get(const char* method) const {
    if (handle_.get() == nullptr) detail::throw_empty("DeviceEvent", method, "event");
    return handle_.get();
  }

  detail::EventHandle handle_;
};

// An in-order queue of work on one device (CUstream, cl_command_queue, ...).
// Shared by copy; a default-constructed or moved-from stream is empty and its
// operations throw Error(invalid_state). Thread-safe as the C ABI.
class DeviceStream {
 public:
  DeviceStream() noexcept = default;

  // Blocks until everything enqueued on the stream has finished.
  void synchronize() const { detail::check(anydev_stream_synchronize(get("synchronize"))); }
  // Makes `event` capture the work enqueued on this stream so far.
  void record_event(const DeviceEvent& event) const {
    const anydev_stream_t stream = get("record_event");
    if (event.handle() == nullptr) detail::throw_empty("DeviceStream", "record_event", "event");
    detail::check(anydev_stream_record_event(stream, event.handle()));
  }
  // Later work on this stream waits (on the device) for `event`'s work.
  void enqueue_wait_for(const DeviceEvent& event) const {
    const anydev_stream_t stream = get("enqueue_wait_for");
    if (event.handle() == nullptr) {
      detail::throw_empty("DeviceStream", "enqueue_wait_for", "event");
    }
    detail::check(anydev_stream_wait_event(stream, event.handle()));
  }
  // CUstream, cl_command_queue, ...: borrowed, valid while this stream lives.
  void* native_handle() const {
    void* out = nullptr;
    detail::check(anydev_stream_native_handle(get("native_handle"), &out));
    return out;
  }
  anydev_stream_t handle() const noexcept { return handle_.get(); }
  static DeviceStream adopt(anydev_stream_t owned) noexcept { return DeviceStream(owned); }

 private:
  explicit DeviceStream(anydev_stream_t owned) noexcept : handle_(owned) {}
  anydev_stream_t get(const char* method) const {
    if (handle_.get() == nullptr) detail::throw_empty("DeviceStream", method, "stream");
    return handle_.get();
  }

  detail::StreamHandle handle_;
};

// ---- context ------------------------------------------------------------------------

// One device of one backend plus one stream on it: every enqueue_* call returns
// at once and runs in order on that stream. Copying shares the context
// (reference count); a moved-from context is empty and its operations throw
// Error(invalid_state). Thread-safe as the C ABI: copies may be used from any
// thread, and work enqueued from several threads is serialized in some order.
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
    return PoolStats{stats.bytes_in_use,     stats.bytes_cached, stats.peak_bytes_in_use,
                     stats.allocation_count, stats.cache_hits,   stats.cache_misses};
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

  // enqueue_copy(dst, src), on this context's stream. Buffer <- buffer moves
  // dst.size() elements (src must be at least that large); buffer <- pointer
  // moves dst.size(); buffer <- span needs a span of at least dst.size();
  // pointer <- buffer moves src.size(); span <- buffer needs at least
  // src.size(). Host memory given by pointer or span must stay valid until
  // the copy completes (synchronize).
  template <Element T>
  void enqueue_copy(const HostBuffer<T>& dst, const HostBuffer<T>& src) const;
  template <Element T>
  void enqueue_copy(const HostBuffer<T>& dst, const DeviceBuffer<T>& src) const;
  template <Element T>
  void enqueue_copy(const HostBuffer<T>& dst, std::type_identity_t<const T*> src) const;
  template <Element T>
  void enqueue_copy(const HostBuffer<T>& dst, std::type_identity_t<std::span<const T>> src) const;
  template <Element T>
  void enqueue_copy(const DeviceBuffer<T>& dst, const HostBuffer<T>& src) const;
  template <Element T>
  void enqueue_copy(const DeviceBuffer<T>& dst, const DeviceBuffer<T>& src) const;
  template <Element T>
  void enqueue_copy(const DeviceBuffer<T>& dst, std::type_identity_t<const T*> src) const;
  template <Element T>
  void enqueue_copy(const DeviceBuffer<T>& dst, std::type_identity_t<std::span<const T>> src) const;
  template <Element T>
  void enqueue_copy(std::type_identity_t<T*> dst, const HostBuffer<T>& src) const;
  template <Element T>
  void enqueue_copy(std::type_identity_t<T*> dst, const DeviceBuffer<T>& src) const;
  template <Element T>
  void enqueue_copy(std::type_identity_t<std::span<T>> dst, const HostBuffer<T>& src) const;
  template <Element T>
  void enqueue_copy(std::type_identity_t<std::span<T>> dst, const DeviceBuffer<T>& src) const;

  // Writes the exact bits of `value` into every element, on this stream.
  template <Element T>
  void enqueue_memset(const HostBuffer<T>& buffer, std::type_identity_t<T> value) const;
  template <Element T>
  void enqueue_memset(const DeviceBuffer<T>& buffer, std::type_identity_t<T> value) const;

  // Releases memory obtained with take_ptr(), after the work already
  // enqueued on this stream.
  template <Element T>
  void free(T* taken) const {
    detail::check(anydev_context_free(get("free"), static_cast<void*>(taken)));
  }

  // Waits for everything enqueued on this stream; throws the first
  // asynchronous error since the previous synchronize.
  void synchronize() const { detail::check(anydev_context_synchronize(get("synchronize"))); }

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

// ---- buffers ---------------------------------------------------------------------------

namespace detail {

template <class Buffer>
struct BufferTraits;
template <Element T>
struct BufferTraits<HostBuffer<T>> {
  static constexpr anydev_memory_kind_t kind = ANYDEV_MEMORY_HOST;
  static constexpr const char* name = "HostBuffer";
  template <Element U>
  using rebind = HostBuffer<U>;
};
template <Element T>
struct BufferTraits<DeviceBuffer<T>> {
  static constexpr anydev_memory_kind_t kind = ANYDEV_MEMORY_DEVICE;
  static constexpr const char* name = "DeviceBuffer";
  template <Element U>
  using rebind = DeviceBuffer<U>;
};

// What HostBuffer<T> and DeviceBuffer<T> share (`Derived` is one of them):
// one reference to a C buffer plus its element pointer and size, cached so
// that size(), unsafe_ptr() and element access cost nothing. Shared by copy;
// a default-constructed or moved-from buffer is empty, and every operation
// but size(), size_bytes(), unsafe_ptr() and handle() throws
// Error(invalid_state). Thread-safe as the C ABI; the cached fields change
// only by assignment and take_ptr(), which need exclusive use of the object.
template <class Derived, Element T>
class BufferBase {
 public:
  using element_type = T;

  // Elements.
  std::size_t size() const noexcept { return size_; }
  std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  // Host pointer of a HostBuffer, device address of a DeviceBuffer; nullptr
  // when empty (also for a zero-size buffer). The buffer keeps ownership.
  T* unsafe_ptr() const noexcept { return ptr_; }
  // The C handle, borrowed (no reference added); NULL when empty.
  anydev_buffer_t handle() const noexcept { return handle_.get(); }

  // A view of `size` elements of U from element `offset` (counted in U) that
  // shares this buffer's memory and keeps it alive.
  template <Element U>
  typename BufferTraits<Derived>::template rebind<U> create_sub_buffer(std::size_t offset,
                                                                       std::size_t size) const {
    anydev_buffer_t out = nullptr;
    check(anydev_buffer_create_sub_buffer(
        get("create_sub_buffer"), static_cast<anydev_dtype_t>(dtype_of<U>), offset, size, &out));
    return BufferTraits<Derived>::template rebind<U>::adopt(out);
  }

  // Copies this buffer into `dst` (dst.size() elements; this buffer must be
  // at least as large), on dst's context.
  void enqueue_copy_to(const HostBuffer<T>& dst) const {
    const anydev_buffer_t src = get("enqueue_copy_to");
    check(anydev_enqueue_copy(nullptr, other(dst, "enqueue_copy_to", "destination"), src));
  }
  void enqueue_copy_to(const DeviceBuffer<T>& dst) const {
    const anydev_buffer_t src = get("enqueue_copy_to");
    check(anydev_enqueue_copy(nullptr, other(dst, "enqueue_copy_to", "destination"), src));
  }
  // Copies size() elements to host memory at `dst`, on this buffer's context.
  void enqueue_copy_to(T* dst) const {
    check(anydev_enqueue_copy_to_host(nullptr, dst, size_bytes(), get("enqueue_copy_to")));
  }
  // `dst` must hold at least size() elements.
  void enqueue_copy_to(std::span<T> dst) const {
    check(
        anydev_enqueue_copy_to_host(nullptr, dst.data(), dst.size_bytes(), get("enqueue_copy_to")));
  }

  // Fills this buffer (size() elements) from `src`, which must be at least as
  // large, on this buffer's context.
  void enqueue_copy_from(const HostBuffer<T>& src) const {
    const anydev_buffer_t dst = get("enqueue_copy_from");
    check(anydev_enqueue_copy(nullptr, dst, other(src, "enqueue_copy_from", "source")));
  }
  void enqueue_copy_from(const DeviceBuffer<T>& src) const {
    const anydev_buffer_t dst = get("enqueue_copy_from");
    check(anydev_enqueue_copy(nullptr, dst, other(src, "enqueue_copy_from", "source")));
  }
  void enqueue_copy_from(const T* src) const {
    check(anydev_enqueue_copy_from_host(nullptr, get("enqueue_copy_from"), src, size_bytes()));
  }
  void enqueue_copy_from(std::span<const T> src) const {
    check(anydev_enqueue_copy_from_host(nullptr, get("enqueue_copy_from"), src.data(),
                                        src.size_bytes()));
  }

  // Writes the exact bits of `value` into every element.
  void enqueue_fill(T value) const {
    check(anydev_enqueue_fill(nullptr, get("enqueue_fill"), &value, sizeof(T)));
  }

  // Makes `ctx` this buffer's context: its later operations and its release
  // run on ctx's stream (same backend and device).
  void reassign_ownership_to(const DeviceContext& ctx) const {
    const anydev_buffer_t buf = get("reassign_ownership_to");
    if (ctx.handle() == nullptr) {
      throw_empty(BufferTraits<Derived>::name, "reassign_ownership_to", "context");
    }
    check(anydev_buffer_reassign_ownership(buf, ctx.handle()));
  }

  // Hands the memory to the caller, who releases it with ctx.free(p). Needs
  // the only handle to that memory; afterwards this buffer is empty and its
  // operations throw Error(invalid_state).
  T* take_ptr() && {
    void* out = nullptr;
    check(anydev_buffer_take_ptr(get("take_ptr"), &out));
    ptr_ = nullptr;
    size_ = 0;
    return static_cast<T*>(out);
  }

  // The context whose stream runs this buffer's operations and release.
  DeviceContext context() const {
    anydev_context_t out = nullptr;
    check(anydev_buffer_context(get("context"), &out));
    return DeviceContext::adopt(out);
  }

  // Wraps a C buffer of T and of this kind, taking over the one reference the
  // caller holds (released again if this throws: Error(invalid_argument) for
  // another dtype or kind).
  static Derived adopt(anydev_buffer_t owned) {
    BufferHandle handle(owned);
    anydev_buffer_info_t info{};
    info.struct_size = sizeof(info);
    check(anydev_buffer_get_info(owned, &info));
    if (info.kind != BufferTraits<Derived>::kind ||
        info.dtype != static_cast<anydev_dtype_t>(dtype_of<T>)) {
      const char* dtype = to_string(static_cast<DType>(info.dtype));
      throw Error(Status::invalid_argument,
                  std::string(BufferTraits<Derived>::name) + "<" + to_string(dtype_of<T>) +
                      ">::adopt: the handle is a " +
                      (info.kind == ANYDEV_MEMORY_HOST ? "host" : "device") + " buffer of " +
                      dtype);
    }
    Derived result;
    BufferBase& base = result;
    base.handle_ = std::move(handle);
    base.ptr_ = static_cast<T*>(info.address);
    base.size_ = info.count;
    return result;
  }

 protected:
  BufferBase() noexcept = default;
  BufferBase(const BufferBase&) noexcept = default;
  BufferBase(BufferBase&& other) noexcept
      : handle_(std::move(other.handle_)),
        ptr_(std::exchange(other.ptr_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  BufferBase& operator=(const BufferBase&) noexcept = default;
  BufferBase& operator=(BufferBase&& other) noexcept {
    if (this != &other) {
      handle_ = std::move(other.handle_);
      ptr_ = std::exchange(other.ptr_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~BufferBase() = default;

  // This buffer's handle, or Error(invalid_state) naming `method` when empty.
  anydev_buffer_t get(const char* method) const {
    if (handle_.get() == nullptr) throw_empty(BufferTraits<Derived>::name, method, "buffer");
    return handle_.get();
  }

  // A taken buffer reports size 0: when the size is 0, let the C ABI say
  // whether the handle is still usable, and throw its error if not.
  void check_usable(const char* method) const {
    if (size_ != 0) return;
    anydev_buffer_info_t info{};
    info.struct_size = sizeof(info);
    const anydev_status_t status = anydev_buffer_get_info(get(method), &info);
    if (status != ANYDEV_SUCCESS) {
      throw Error(static_cast<Status>(status), std::string(BufferTraits<Derived>::name) + "::" +
                                                   method + ": " + anydev_last_error_message());
    }
  }

  [[noreturn]] void throw_out_of_range(const char* method, std::size_t index) const {
    check_usable(method);
    throw Error(Status::out_of_range, std::string(BufferTraits<Derived>::name) + "::" + method +
                                          ": index " + std::to_string(index) +
                                          " is out of range for a buffer of " +
                                          std::to_string(size_) + " elements");
  }

 private:
  template <class Other>
  static anydev_buffer_t other(const Other& buffer, const char* method, const char* role) {
    if (buffer.handle() == nullptr) {
      throw Error(Status::invalid_state, std::string(BufferTraits<Derived>::name) + "::" + method +
                                             ": the " + role +
                                             " buffer is empty (default-constructed or "
                                             "moved-from)");
    }
    return buffer.handle();
  }

  BufferHandle handle_;
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace detail

// Pinned (page-locked where the backend can pin) host memory of T, usable by
// the device's copy engines and by the host. Created by
// DeviceContext::enqueue_create_host_buffer. Shared by copy (reference count);
// the memory is released after the last handle goes away and the work already
// enqueued on it has finished, without blocking. Thread-safe as the C ABI;
// element access is plain memory access, so concurrent reads and writes of
// the same element (or during a copy) are data races as usual.
template <Element T>
class HostBuffer : public detail::BufferBase<HostBuffer<T>, T> {
  using Base = detail::BufferBase<HostBuffer<T>, T>;

 public:
  // Empty: every operation throws Error(invalid_state).
  HostBuffer() noexcept = default;

  // Unchecked element access. With ANYDEV_VALIDATE on, access to an element
  // an enqueued copy or fill still writes is reported (logged).
  T& operator[](std::size_t i) const noexcept {
    if (detail::validation_on_at_start) {
      static_cast<void>(anydev_buffer_check_host_access(this->handle(), i, 1));
    }
    return this->unsafe_ptr()[i];
  }
  // Checked element access: Error(out_of_range) naming i and size(). With
  // ANYDEV_VALIDATE on, also Error(invalid_state) when an enqueued copy or
  // fill still writes the element (synchronize first).
  T& at(std::size_t i) const {
    this->get("at");
    if (i >= this->size()) this->throw_out_of_range("at", i);
    if (detail::validation_on()) {
      detail::check(anydev_buffer_check_host_access(this->handle(), i, 1));
    }
    return this->unsafe_ptr()[i];
  }
  // The elements; valid while a handle to the buffer lives.
  std::span<T> as_span() const {
    this->check_usable("as_span");
    return std::span<T>(this->unsafe_ptr(), this->size());
  }
  // Whether the memory is really page-locked (pinned): false past the lock
  // limit (RLIMIT_MEMLOCK), with a backend that does not lock host memory,
  // for memory anydev did not allocate (DLPack imports) and for size 0.
  bool is_locked() const {
    int out = 0;
    detail::check(anydev_buffer_is_locked(this->get("is_locked"), &out));
    return out != 0;
  }
};

// Device memory of T (a device address: not dereferenceable on the host in
// general). Created by DeviceContext::enqueue_create_buffer. Ownership and
// thread safety as HostBuffer. Read or write it on the host with
// map_to_host() or by copying to and from a HostBuffer.
template <Element T>
class DeviceBuffer : public detail::BufferBase<DeviceBuffer<T>, T> {
 public:
  // Empty: every operation throws Error(invalid_state).
  DeviceBuffer() noexcept = default;

  // Copies the buffer to host memory and synchronizes; the mapping writes it
  // back when unmapped or destroyed.
  HostMapping<T> map_to_host() const;
};

// Host copy of a DeviceBuffer returned by map_to_host(): on creation it copies
// the buffer into a pinned HostBuffer on the buffer's context and
// synchronizes; unmap() (or the destructor, which swallows errors: call
// unmap() to see them) copies it back and synchronizes. Owns the host copy and
// a reference to the device buffer. Move-only; not for concurrent use.
template <Element T>
class HostMapping {
 public:
  HostMapping(const HostMapping&) = delete;
  HostMapping& operator=(const HostMapping&) = delete;
  HostMapping(HostMapping&& other) noexcept
      : device_(std::move(other.device_)),
        host_(std::move(other.host_)),
        mapped_(std::exchange(other.mapped_, false)) {}
  HostMapping& operator=(HostMapping&& other) noexcept {
    if (this != &other) {
      unmap_noexcept();
      device_ = std::move(other.device_);
      host_ = std::move(other.host_);
      mapped_ = std::exchange(other.mapped_, false);
    }
    return *this;
  }
  ~HostMapping() { unmap_noexcept(); }

  // Unchecked access to the host copy (valid until unmap()).
  T& operator[](std::size_t i) const noexcept { return host_[i]; }
  // Elements; 0 after unmap().
  std::size_t size() const noexcept { return host_.size(); }
  std::span<T> as_span() const {
    if (!mapped_) throw_unmapped("as_span");
    return host_.as_span();
  }
  // Writes the host copy back to the device buffer (on its context) and
  // synchronizes; then frees the host copy. Runs at most once.
  void unmap() {
    if (!mapped_) throw_unmapped("unmap");
    mapped_ = false;
    HostBuffer<T> host = std::move(host_);
    device_.enqueue_copy_from(host);
    device_.context().synchronize();
  }

 private:
  friend class DeviceBuffer<T>;

  explicit HostMapping(const DeviceBuffer<T>& device) : device_(device) {
    const DeviceContext ctx = device_.context();
    host_ = ctx.enqueue_create_host_buffer<T>(device_.size());
    host_.enqueue_copy_from(device_);
    ctx.synchronize();
    mapped_ = true;
  }

  void unmap_noexcept() noexcept {
    if (!mapped_) return;
    try {
      unmap();
    } catch (...) {  // a destructor cannot report it; unmap() does
    }
  }
  [[noreturn]] static void throw_unmapped(const char* method) {
    throw Error(Status::invalid_state, std::string("HostMapping::") + method +
                                           ": the mapping is already unmapped or moved-from");
  }

  DeviceBuffer<T> device_;
  HostBuffer<T> host_;
  bool mapped_ = false;
};

template <Element T>
HostMapping<T> DeviceBuffer<T>::map_to_host() const {
  this->get("map_to_host");
  return HostMapping<T>(*this);
}

// ---- DeviceContext members that need the buffer types ------------------------------------

template <Element T>
HostBuffer<T> DeviceContext::enqueue_create_host_buffer(std::size_t size) const {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_buffer_create(get("enqueue_create_host_buffer"), ANYDEV_MEMORY_HOST,
                                     static_cast<anydev_dtype_t>(dtype_of<T>), size, &out));
  return HostBuffer<T>::adopt(out);
}

template <Element T>
DeviceBuffer<T> DeviceContext::enqueue_create_buffer(std::size_t size) const {
  anydev_buffer_t out = nullptr;
  detail::check(anydev_buffer_create(get("enqueue_create_buffer"), ANYDEV_MEMORY_DEVICE,
                                     static_cast<anydev_dtype_t>(dtype_of<T>), size, &out));
  return DeviceBuffer<T>::adopt(out);
}

template <Element T>
DeviceBuffer<T> DeviceContext::create_buffer_sync(std::size_t size) const {
  DeviceBuffer<T> buffer = enqueue_create_buffer<T>(size);
  synchronize();
  return buffer;
}

namespace detail {

template <class Buffer>
anydev_buffer_t buffer_arg(const Buffer& buffer, const char* role) {
  if (buffer.handle() == nullptr) {
    throw Error(Status::invalid_state, std::string("DeviceContext::enqueue_copy: the ") + role +
                                           " " + BufferTraits<Buffer>::name +
                                           " is empty (default-constructed or moved-from)");
  }
  return buffer.handle();
}

template <class Dst, class Src>
void copy_buffers(anydev_context_t ctx, const Dst& dst, const Src& src) {
  check(anydev_enqueue_copy(ctx, buffer_arg(dst, "destination"), buffer_arg(src, "source")));
}

}  // namespace detail

template <Element T>
void DeviceContext::enqueue_copy(const HostBuffer<T>& dst, const HostBuffer<T>& src) const {
  detail::copy_buffers(get("enqueue_copy"), dst, src);
}
template <Element T>
void DeviceContext::enqueue_copy(const HostBuffer<T>& dst, const DeviceBuffer<T>& src) const {
  detail::copy_buffers(get("enqueue_copy"), dst, src);
}
template <Element T>
void DeviceContext::enqueue_copy(const DeviceBuffer<T>& dst, const HostBuffer<T>& src) const {
  detail::copy_buffers(get("enqueue_copy"), dst, src);
}
template <Element T>
void DeviceContext::enqueue_copy(const DeviceBuffer<T>& dst, const DeviceBuffer<T>& src) const {
  detail::copy_buffers(get("enqueue_copy"), dst, src);
}

template <Element T>
void DeviceContext::enqueue_copy(const HostBuffer<T>& dst,
                                 std::type_identity_t<const T*> src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy_from_host(ctx, detail::buffer_arg(dst, "destination"), src,
                                              dst.size_bytes()));
}
template <Element T>
void DeviceContext::enqueue_copy(const DeviceBuffer<T>& dst,
                                 std::type_identity_t<const T*> src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy_from_host(ctx, detail::buffer_arg(dst, "destination"), src,
                                              dst.size_bytes()));
}
template <Element T>
void DeviceContext::enqueue_copy(const HostBuffer<T>& dst,
                                 std::type_identity_t<std::span<const T>> src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy_from_host(ctx, detail::buffer_arg(dst, "destination"),
                                              src.data(), src.size_bytes()));
}
template <Element T>
void DeviceContext::enqueue_copy(const DeviceBuffer<T>& dst,
                                 std::type_identity_t<std::span<const T>> src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy_from_host(ctx, detail::buffer_arg(dst, "destination"),
                                              src.data(), src.size_bytes()));
}

template <Element T>
void DeviceContext::enqueue_copy(std::type_identity_t<T*> dst, const HostBuffer<T>& src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(
      anydev_enqueue_copy_to_host(ctx, dst, src.size_bytes(), detail::buffer_arg(src, "source")));
}
template <Element T>
void DeviceContext::enqueue_copy(std::type_identity_t<T*> dst, const DeviceBuffer<T>& src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(
      anydev_enqueue_copy_to_host(ctx, dst, src.size_bytes(), detail::buffer_arg(src, "source")));
}
template <Element T>
void DeviceContext::enqueue_copy(std::type_identity_t<std::span<T>> dst,
                                 const HostBuffer<T>& src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy_to_host(ctx, dst.data(), dst.size_bytes(),
                                            detail::buffer_arg(src, "source")));
}
template <Element T>
void DeviceContext::enqueue_copy(std::type_identity_t<std::span<T>> dst,
                                 const DeviceBuffer<T>& src) const {
  const anydev_context_t ctx = get("enqueue_copy");
  detail::check(anydev_enqueue_copy_to_host(ctx, dst.data(), dst.size_bytes(),
                                            detail::buffer_arg(src, "source")));
}

template <Element T>
void DeviceContext::enqueue_memset(const HostBuffer<T>& buffer,
                                   std::type_identity_t<T> value) const {
  const anydev_context_t ctx = get("enqueue_memset");
  if (buffer.handle() == nullptr) {
    detail::throw_empty("DeviceContext", "enqueue_memset", "HostBuffer");
  }
  detail::check(anydev_enqueue_fill(ctx, buffer.handle(), &value, sizeof(T)));
}
template <Element T>
void DeviceContext::enqueue_memset(const DeviceBuffer<T>& buffer,
                                   std::type_identity_t<T> value) const {
  const anydev_context_t ctx = get("enqueue_memset");
  if (buffer.handle() == nullptr) {
    detail::throw_empty("DeviceContext", "enqueue_memset", "DeviceBuffer");
  }
  detail::check(anydev_enqueue_fill(ctx, buffer.handle(), &value, sizeof(T)));
}

// ---- printing -----------------------------------------------------------------------------

namespace detail {

// Mojo's text of a buffer, made by the C ABI (a device buffer is copied to the
// host synchronously).
inline std::string format_buffer(anydev_buffer_t buffer) {
  char small[256];
  std::size_t needed = 0;
  anydev_status_t status = anydev_buffer_format(buffer, small, sizeof(small), &needed);
  if (status == ANYDEV_SUCCESS) return std::string(small);
  std::string text;
  // Contents may change between calls (other threads): retry while it grows.
  while (status == ANYDEV_ERROR_OUT_OF_RANGE && needed > text.size() + 1) {
    text.assign(needed, '\0');
    status = anydev_buffer_format(buffer, text.data(), text.size(), &needed);
    if (status == ANYDEV_SUCCESS) {
      text.resize(needed > 0 ? needed - 1 : 0);
      return text;
    }
  }
  check(status);
  throw Error(Status::internal, "anydev_buffer_format: failed without an error status");
}

}  // namespace detail

// Mojo's write_to: "HostBuffer([0.0, 1.0, 2.0])"; from 1000 elements on, the
// first three, "...", the last three.
template <Element T>
std::ostream& operator<<(std::ostream& os, const HostBuffer<T>& buffer) {
  if (buffer.handle() == nullptr) detail::throw_empty("HostBuffer", "operator<<", "buffer");
  return os << detail::format_buffer(buffer.handle());
}
// As HostBuffer, "DeviceBuffer([...])", through a synchronous host copy.
template <Element T>
std::ostream& operator<<(std::ostream& os, const DeviceBuffer<T>& buffer) {
  if (buffer.handle() == nullptr) detail::throw_empty("DeviceBuffer", "operator<<", "buffer");
  return os << detail::format_buffer(buffer.handle());
}

}  // namespace anydev

#endif  // ANYDEV_ANYDEV_HPP_
