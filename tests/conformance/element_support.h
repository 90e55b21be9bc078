// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the conformance tests: the list of element types, values
// with non-trivial bit patterns, byte-exact comparison, host arrays (also of
// bool), reading and writing buffers, and checking the anydev::Error a call
// throws. Header-only; every function is pure or works only on its arguments.
#ifndef ANYDEV_TESTS_CONFORMANCE_ELEMENT_SUPPORT_H_
#define ANYDEV_TESTS_CONFORMANCE_ELEMENT_SUPPORT_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "anydev/anydev.hpp"

namespace anydev_conformance {

template <class... Ts>
struct TypeList {};

// Every element type of the API, in dtype order.
using AllElementTypes =
    TypeList<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t,
             std::uint16_t, std::uint32_t, std::uint64_t, anydev::float16, anydev::bfloat16, float,
             double, std::complex<float>, std::complex<double>>;

// Calls f.template operator()<T>() for every T of the list, with the type's
// name as a gtest scoped trace.
template <class... Ts, class F>
void ForEachType(TypeList<Ts...>, F&& f) {
  (
      [&] {
        SCOPED_TRACE(std::string("element type ") + anydev::to_string(anydev::dtype_of<Ts>));
        f.template operator()<Ts>();
      }(),
      ...);
}

template <class F>
void ForEachElementType(F&& f) {
  ForEachType(AllElementTypes{}, std::forward<F>(f));
}

inline std::uint64_t SplitMix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A value of T whose every byte depends on `seed` (any bit pattern, NaNs
// included; bool is true or false).
template <class T>
T MakeValue(std::uint64_t seed) {
  if constexpr (std::is_same_v<T, bool>) {
    return (SplitMix64(seed) & 1) != 0;
  } else {
    unsigned char bytes[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); i += 8) {
      const std::uint64_t word = SplitMix64(seed * 31 + i);
      std::memcpy(bytes + i, &word, std::min<std::size_t>(8, sizeof(T) - i));
    }
    T value{};
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  }
}

// The bytes of a value, in memory order: "0x01 0x23 ...".
template <class T>
std::string HexBytes(const T& value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  std::string out;
  char piece[8];
  for (unsigned char b : bytes) {
    std::snprintf(piece, sizeof piece, "%s%02x", out.empty() ? "" : " ", b);
    out += piece;
  }
  return out;
}

// Host memory of n value-initialized elements (std::vector<bool> has no data()).
template <class T>
class Array {
 public:
  Array() = default;
  explicit Array(std::size_t n) : data_(std::make_unique<T[]>(n)), size_(n) {}
  explicit Array(std::span<const T> values) : Array(values.size()) {
    std::copy(values.begin(), values.end(), data_.get());
  }
  Array(const Array& other) : Array(other.cspan()) {}
  Array& operator=(const Array& other) {
    *this = Array(other.cspan());
    return *this;
  }
  Array(Array&&) noexcept = default;
  Array& operator=(Array&&) noexcept = default;

  T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) const { return data_[i]; }
  std::span<T> span() const { return {data_.get(), size_}; }
  std::span<const T> cspan() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t size_ = 0;
};

// n values whose bytes are pseudo-random, derived from `seed` (bool: true
// or false). Generated eight bytes at a time: large patterns stay cheap
// under sanitizers.
template <class T>
Array<T> Pattern(std::size_t n, std::uint64_t seed) {
  Array<T> out(n);
  if constexpr (std::is_same_v<T, bool>) {
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = ((SplitMix64(seed * 1000003 + i / 64) >> (i % 64)) & 1) != 0;
    }
  } else {
    auto* bytes = reinterpret_cast<unsigned char*>(out.data());
    const std::size_t total = n * sizeof(T);
    for (std::size_t i = 0; i < total; i += 8) {
      const std::uint64_t word = SplitMix64(seed * 0x100000001B3ull + i);
      std::memcpy(bytes + i, &word, std::min<std::size_t>(8, total - i));
    }
  }
  return out;
}

template <class T>
Array<T> Filled(std::size_t n, T value) {
  Array<T> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = value;
  return out;
}

// Byte-exact comparison that names the first differing element.
template <class T>
::testing::AssertionResult BytesEqual(std::span<const T> actual, std::span<const T> expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << "sizes differ: " << actual.size() << " vs " << expected.size() << " elements";
  }
  if (actual.empty() || std::memcmp(actual.data(), expected.data(), actual.size_bytes()) == 0) {
    return ::testing::AssertionSuccess();
  }
  std::size_t first = actual.size();
  std::size_t count = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(T)) != 0) {
      if (first == actual.size()) first = i;
      ++count;
    }
  }
  return ::testing::AssertionFailure()
         << count << " of " << actual.size() << " elements differ; first at index " << first
         << ": actual [" << HexBytes(actual[first]) << "], expected [" << HexBytes(expected[first])
         << "]";
}

template <class T>
::testing::AssertionResult BytesEqual(const Array<T>& actual, const Array<T>& expected) {
  return BytesEqual(actual.cspan(), expected.cspan());
}

// Every element of `actual` has the bits of `value`.
template <class T>
::testing::AssertionResult AllEqual(std::span<const T> actual, std::type_identity_t<T> value) {
  return BytesEqual(actual, Filled(actual.size(), value).cspan());
}

template <class T>
::testing::AssertionResult AllEqual(const Array<T>& actual, std::type_identity_t<T> value) {
  return AllEqual(actual.cspan(), value);
}

// Contents of a buffer, read after synchronizing its context. A device
// buffer is read through a copy to host memory on its context.
template <class T>
Array<T> Contents(const anydev::HostBuffer<T>& buffer) {
  buffer.context().synchronize();
  return Array<T>(std::span<const T>(buffer.as_span()));
}

template <class T>
Array<T> Contents(const anydev::DeviceBuffer<T>& buffer) {
  Array<T> out(buffer.size());
  buffer.enqueue_copy_to(out.span());
  buffer.context().synchronize();
  return out;
}

// A host buffer holding `values`, written directly (no copy engine).
template <class T>
anydev::HostBuffer<T> HostWith(const anydev::DeviceContext& ctx, const Array<T>& values) {
  anydev::HostBuffer<T> buffer = ctx.enqueue_create_host_buffer<T>(values.size());
  std::copy(values.data(), values.data() + values.size(), buffer.as_span().begin());
  return buffer;
}

// A device buffer holding `values` (copied and synchronized).
template <class T>
anydev::DeviceBuffer<T> DeviceWith(const anydev::DeviceContext& ctx, const Array<T>& values) {
  anydev::DeviceBuffer<T> buffer = ctx.enqueue_create_buffer<T>(values.size());
  buffer.enqueue_copy_from(values.cspan());
  ctx.synchronize();
  return buffer;
}

enum class Kind { host, device };

template <Kind K, class T>
using Buffer = std::conditional_t<K == Kind::host, anydev::HostBuffer<T>, anydev::DeviceBuffer<T>>;

template <Kind K>
constexpr const char* KindName() {
  return K == Kind::host ? "HostBuffer" : "DeviceBuffer";
}

template <Kind K, class T>
Buffer<K, T> Create(const anydev::DeviceContext& ctx, std::size_t n) {
  if constexpr (K == Kind::host) {
    return ctx.enqueue_create_host_buffer<T>(n);
  } else {
    return ctx.enqueue_create_buffer<T>(n);
  }
}

template <Kind K, class T>
Buffer<K, T> CreateWith(const anydev::DeviceContext& ctx, const Array<T>& values) {
  if constexpr (K == Kind::host) {
    return HostWith(ctx, values);
  } else {
    return DeviceWith(ctx, values);
  }
}

// Runs f.template operator()<K>() for both kinds, with a scoped trace.
template <class F>
void ForEachKind(F&& f) {
  {
    SCOPED_TRACE("HostBuffer");
    f.template operator()<Kind::host>();
  }
  {
    SCOPED_TRACE("DeviceBuffer");
    f.template operator()<Kind::device>();
  }
}

// `f()` throws anydev::Error with `expected` status and a message that
// contains every string of `mentions`.
template <class F>
::testing::AssertionResult Fails(anydev::Status expected, F&& f,
                                 std::initializer_list<std::string_view> mentions = {}) {
  try {
    f();
  } catch (const anydev::Error& e) {
    const std::string message = e.what();
    if (e.status() != expected) {
      return ::testing::AssertionFailure()
             << "threw Error(" << anydev::to_string(e.status()) << ", \"" << message
             << "\"), expected Error(" << anydev::to_string(expected) << ")";
    }
    if (message.empty()) return ::testing::AssertionFailure() << "the error message is empty";
    for (std::string_view part : mentions) {
      if (message.find(part) == std::string::npos) {
        return ::testing::AssertionFailure()
               << "the message \"" << message << "\" does not mention \"" << part << "\"";
      }
    }
    return ::testing::AssertionSuccess() << message;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-anydev exception: " << e.what();
  }
  return ::testing::AssertionFailure()
         << "did not throw; expected Error(" << anydev::to_string(expected) << ")";
}

// Work enqueued through `a` is finished once `b` is synchronized: the two
// contexts share one stream. (Handles are not compared: the C ABI may give
// out a new handle object for the same context.) A 4 MiB fill makes a
// wrong answer show up.
inline ::testing::AssertionResult SharesStream(const anydev::DeviceContext& a,
                                               const anydev::DeviceContext& b) {
  constexpr std::size_t kWords = 1u << 20;
  const anydev::HostBuffer<std::uint32_t> probe =
      a.enqueue_create_host_buffer<std::uint32_t>(kWords);
  a.synchronize();
  a.enqueue_memset(probe, 0x5A5AA5A5u);
  b.synchronize();
  const std::span<const std::uint32_t> words = probe.as_span();
  const bool done =
      std::all_of(words.begin(), words.end(), [](std::uint32_t w) { return w == 0x5A5AA5A5u; });
  a.synchronize();
  if (done) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "work enqueued through the first context was not finished by synchronizing the "
            "second: they do not share a stream";
}

}  // namespace anydev_conformance

#endif  // ANYDEV_TESTS_CONFORMANCE_ELEMENT_SUPPORT_H_
