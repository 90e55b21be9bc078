// SPDX-License-Identifier: Apache-2.0
// Registered host memory (DeviceContext::register_host_memory,
// docs/registered-memory.md): the caller's memory as a HostBuffer whose
// copies reach the device and come back byte for byte; the argument rules
// (null, zero, misaligned for the type, past the address space, unmapped,
// a page registered twice), each an error that registers nothing; take_ptr
// refused; the memory never freed, the registration undone (and the
// caller's callback run) once the last handle is gone, after its work.
#include <sys/mman.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <numeric>
#include <utility>
#include <vector>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::HostBuffer;
using anydev::Status;

std::size_t PageBytes() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// Pages of anonymous memory the test owns (munmap'ed at the end).
class Pages {
 public:
  explicit Pages(std::size_t count) : bytes_(count * PageBytes()) {
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
  }
  ~Pages() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
  }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  unsigned char* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  unsigned char* data_;
};

// Counts the unregistration callback's runs; Wait() returns once it ran.
struct Unregistered {
  std::mutex mutex;
  std::condition_variable cv;
  int runs = 0;

  static void Callback(void* self) {
    auto* u = static_cast<Unregistered*>(self);
    std::lock_guard lock(u->mutex);
    ++u->runs;
    u->cv.notify_all();
  }
  void Wait() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return runs > 0; });
  }
  int Runs() {
    std::lock_guard lock(mutex);
    return runs;
  }
};

// A C API registration of `bytes` at `pointer` as uint8; the status and,
// on success, the buffer released again.
anydev_status_t TryRegister(const anydev::DeviceContext& ctx, void* pointer, std::size_t bytes,
                            anydev_dtype_t dtype = ANYDEV_DTYPE_UINT8) {
  anydev_buffer_t out = nullptr;
  const anydev_status_t s = anydev_context_register_host_memory(ctx.handle(), pointer, bytes, dtype,
                                                                nullptr, nullptr, &out);
  if (out != nullptr) anydev_buffer_release(out);
  return s;
}

class RegisteredMemoryTest : public DeviceTest {
 protected:
  // Skips on a backend that declines registration (never on the backends
  // anydev ships: each registers), after checking that it says why.
  bool Declined() {
    Pages pages(1);
    anydev_buffer_t out = nullptr;
    const anydev_status_t s = anydev_context_register_host_memory(
        ctx().handle(), pages.data(), 64, ANYDEV_DTYPE_UINT8, nullptr, nullptr, &out);
    if (out != nullptr) anydev_buffer_release(out);
    if (s != ANYDEV_ERROR_UNSUPPORTED) return false;
    EXPECT_NE(std::string(anydev_last_error_message()).find(api()), std::string::npos);
    return true;
  }
};

TEST_P(RegisteredMemoryTest, EveryShippedBackendRegisters) {
  if (!shipped()) GTEST_SKIP() << api() << " is not one of the backends anydev ships";
  EXPECT_FALSE(Declined()) << anydev_last_error_message();
}

TEST_P(RegisteredMemoryTest, CopiesReachTheDeviceAndComeBackIntoTheCallersMemory) {
  if (Declined()) GTEST_SKIP() << "the backend declines: " << anydev_last_error_message();
  constexpr std::size_t kCount = 3000;
  Pages pages(4);
  auto* values = reinterpret_cast<std::uint32_t*>(pages.data());
  std::iota(values, values + kCount, 17u);
  Unregistered unregistered;
  {
    HostBuffer<std::uint32_t> host =
        ctx().register_host_memory(values, kCount, &Unregistered::Callback, &unregistered);
    EXPECT_EQ(host.size(), kCount);
    EXPECT_EQ(host.unsafe_ptr(), values) << "the buffer is the caller's memory, not a copy";
    EXPECT_TRUE(host.is_registered());
    auto device = ctx().enqueue_create_buffer<std::uint32_t>(kCount);
    device.enqueue_copy_from(host);
    host.enqueue_fill(0u);  // ordered after the copy read it
    ctx().synchronize();
    for (std::size_t i = 0; i < kCount; ++i) ASSERT_EQ(values[i], 0u) << i;
    device.enqueue_copy_to(host);
    ctx().synchronize();
    for (std::size_t i = 0; i < kCount; ++i) ASSERT_EQ(values[i], 17u + i) << i;
    EXPECT_EQ(unregistered.Runs(), 0) << "unregistered while a handle lives";
  }
  unregistered.Wait();
  EXPECT_EQ(unregistered.Runs(), 1);
  EXPECT_EQ(values[kCount - 1], 17u + kCount - 1) << "the memory is the caller's afterwards";
  values[0] = 5;  // still mapped and writable: anydev freed nothing
}

TEST_P(RegisteredMemoryTest, AnyAlignmentAsBytes) {
  if (Declined()) GTEST_SKIP() << "the backend declines: " << anydev_last_error_message();
  Pages pages(3);
  unsigned char* odd = pages.data() + 1;
  const std::size_t bytes = PageBytes() + 3;  // crosses a page boundary
  for (std::size_t i = 0; i < bytes; ++i) odd[i] = static_cast<unsigned char>(i * 7);
  std::vector<unsigned char> expected(odd, odd + bytes);
  HostBuffer<std::uint8_t> host = ctx().register_host_memory(odd, bytes);
  auto device = ctx().enqueue_create_buffer<std::uint8_t>(bytes);
  device.enqueue_copy_from(host);
  host.enqueue_fill(0);
  device.enqueue_copy_to(host);
  ctx().synchronize();
  EXPECT_EQ(std::memcmp(odd, expected.data(), bytes), 0);
}

TEST_P(RegisteredMemoryTest, ViewsAndTheBufferShareOneRegistration) {
  if (Declined()) GTEST_SKIP() << "the backend declines: " << anydev_last_error_message();
  Pages pages(1);
  Unregistered unregistered;
  auto* values = reinterpret_cast<std::int16_t*>(pages.data());
  {
    HostBuffer<std::int16_t> view = [&] {
      HostBuffer<std::int16_t> whole =
          ctx().register_host_memory(values, 100, &Unregistered::Callback, &unregistered);
      return whole.create_sub_buffer<std::int16_t>(10, 20);
    }();
    EXPECT_TRUE(view.is_registered());
    view.enqueue_fill(std::int16_t{-3});
    ctx().synchronize();
    EXPECT_EQ(values[10], -3);
    EXPECT_EQ(values[29], -3);
    EXPECT_EQ(values[30], 0);
    EXPECT_EQ(unregistered.Runs(), 0) << "the view keeps the registration";
  }
  unregistered.Wait();
}

TEST_P(RegisteredMemoryTest, ArgumentErrorsRegisterNothing) {
  if (Declined()) GTEST_SKIP() << "the backend declines: " << anydev_last_error_message();
  Pages pages(2);
  struct Case {
    const char* name;
    void* pointer;
    std::size_t bytes;
    anydev_dtype_t dtype;
    anydev_status_t status;
    const char* mention;
  };
  const auto end = reinterpret_cast<void*>(UINTPTR_MAX - 15);
  const Case cases[] = {
      {"null pointer", nullptr, 64, ANYDEV_DTYPE_UINT8, ANYDEV_ERROR_INVALID_ARGUMENT, "NULL"},
      {"zero bytes", pages.data(), 0, ANYDEV_DTYPE_UINT8, ANYDEV_ERROR_INVALID_ARGUMENT, "0"},
      {"not whole elements", pages.data(), 6, ANYDEV_DTYPE_UINT32, ANYDEV_ERROR_INVALID_ARGUMENT,
       "uint32"},
      {"misaligned for the type", pages.data() + 2, 8, ANYDEV_DTYPE_UINT32,
       ANYDEV_ERROR_INVALID_ARGUMENT, "aligned"},
      {"past the address space", end, 64, ANYDEV_DTYPE_UINT8, ANYDEV_ERROR_OUT_OF_RANGE,
       "address space"},
      {"above PTRDIFF_MAX", pages.data(), SIZE_MAX / 2 + 1, ANYDEV_DTYPE_UINT8,
       ANYDEV_ERROR_OUT_OF_RANGE, "address space"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(TryRegister(ctx(), c.pointer, c.bytes, c.dtype), c.status);
    EXPECT_NE(std::string(anydev_last_error_message()).find(c.mention), std::string::npos)
        << anydev_last_error_message();
  }
  // Nothing stayed registered: the whole range registers now.
  EXPECT_EQ(TryRegister(ctx(), pages.data(), pages.bytes()), ANYDEV_SUCCESS)
      << anydev_last_error_message();
}

TEST_P(RegisteredMemoryTest, AHoleInTheRangeIsInvalidAndRegistersNothing) {
  if (Declined()) GTEST_SKIP() << "the backend declines: " << anydev_last_error_message();
  Pages pages(3);
  ASSERT_EQ(::munmap(pages.data() + PageBytes(), PageBytes()), 0);
  EXPECT_EQ(TryRegister(ctx(), pages.data(), pages.bytes()), ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(anydev_last_error_message()).find("mapped"), std::string::npos);
  EXPECT_EQ(TryRegister(ctx(), pages.data(), PageBytes()), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  // Map the hole again so that Pages unmaps what it mapped.
  ASSERT_NE(::mmap(pages.data() + PageBytes(), PageBytes(), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
            MAP_FAILED);
}

TEST_P(RegisteredMemoryTest, APageRegisteredTwiceIsRefusedUntilReleased) {
  if (Declined()) GTEST_SKIP() << "the backend declines: " << anydev_last_error_message();
  Pages pages(3);
  const std::size_t page = PageBytes();
  unsigned char* first = pages.data();
  Unregistered unregistered;
  {
    HostBuffer<std::uint8_t> held =
        ctx().register_host_memory(first + 16, page - 32, &Unregistered::Callback, &unregistered);
    struct Case {
      const char* name;
      unsigned char* pointer;
      std::size_t bytes;
    };
    const Case overlapping[] = {
        {"the same range", first + 16, page - 32},
        {"the same page, other bytes", first, 8},
        {"a range that ends in the page", first - 0, 20},
        {"a range that starts in the page", first + page - 8, page},
        {"a range around it", first, 3 * page},
    };
    for (const Case& c : overlapping) {
      SCOPED_TRACE(c.name);
      EXPECT_EQ(TryRegister(ctx(), c.pointer, c.bytes), ANYDEV_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(anydev_last_error_message()).find("registered"), std::string::npos)
          << anydev_last_error_message();
    }
    // The next page is free.
    EXPECT_EQ(TryRegister(ctx(), first + page, page), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    // The refusals changed nothing: the held registration still works.
    held.enqueue_fill(std::uint8_t{9});
    ctx().synchronize();
    EXPECT_EQ(first[16], 9);
    EXPECT_EQ(first[15], 0);
  }
  // Released (its work done or not): registering it again succeeds.
  EXPECT_EQ(TryRegister(ctx(), first + 16, page - 32), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  unregistered.Wait();
}

TEST_P(RegisteredMemoryTest, TakePtrIsUnsupported) {
  if (Declined()) GTEST_SKIP() << "the backend declines: " << anydev_last_error_message();
  Pages pages(1);
  HostBuffer<std::uint8_t> host = ctx().register_host_memory(pages.data(), 64);
  EXPECT_TRUE(
      Fails(Status::unsupported, [&] { (void)std::move(host).take_ptr(); }, {"registered"}));
  EXPECT_TRUE(host.is_registered()) << "the refused take_ptr left the buffer as it was";
}

TEST_P(RegisteredMemoryTest, PinnedBuffersAreNotRegistered) {
  const HostBuffer<float> pinned = ctx().enqueue_create_host_buffer<float>(4);
  EXPECT_FALSE(pinned.is_registered());
}

ANYDEV_CONFORMANCE_SUITE(RegisteredMemoryTest);

}  // namespace
}  // namespace anydev_conformance
