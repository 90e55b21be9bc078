// SPDX-License-Identifier: Apache-2.0
// The cuda backend's own paths that the conformance suite does not reach,
// run through the public C ABI against the CUDA emulator with two devices:
// copies between devices (cuMemcpyPeerAsync), wrapped native streams, native
// handles, exact fill bits through every memset path, driver errors carried
// into anydev's messages, stream-ordered release returning memory, anydev's
// own memory pool, and what the real driver does that the emulator now
// checks: impossible sizes, sticky faults, fork.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../../process/fork_child.h"
#include "anydev/anydev.h"

namespace {

constexpr std::size_t kEmulatorMemoryMiB = 256;

std::string last_error() { return anydev_last_error_message(); }

// A cuda context on `device`, released at the end of the scope.
class Context {
 public:
  explicit Context(int device) {
    status_ = anydev_context_create("cuda", device, &ctx_);
    if (status_ != ANYDEV_SUCCESS) error_ = last_error();
  }
  ~Context() {
    if (ctx_ != nullptr) anydev_context_release(ctx_);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  anydev_context_t get() const { return ctx_; }
  anydev_status_t status() const { return status_; }
  const std::string& error() const { return error_; }

 private:
  anydev_context_t ctx_ = nullptr;
  anydev_status_t status_;
  std::string error_;
};

// A buffer released at the end of the scope.
class Buffer {
 public:
  Buffer(anydev_context_t ctx, anydev_memory_kind_t kind, anydev_dtype_t dtype, std::size_t count) {
    status_ = anydev_buffer_create(ctx, kind, dtype, count, &buf_);
    if (status_ != ANYDEV_SUCCESS) error_ = last_error();
  }
  ~Buffer() {
    if (buf_ != nullptr) anydev_buffer_release(buf_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  anydev_buffer_t get() const { return buf_; }
  anydev_status_t status() const { return status_; }
  const std::string& error() const { return error_; }

 private:
  anydev_buffer_t buf_ = nullptr;
  anydev_status_t status_;
  std::string error_;
};

#define ASSERT_OK(expr) ASSERT_EQ((expr), ANYDEV_SUCCESS) << last_error()

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The emulator's entry points, from the very library the backend opened
// (dlopen of the same path finds it), resolved with its cuGetProcAddress.
// Read-only after construction; thread-safe.
struct Emulator {
  Emulator() {
    void* library = dlopen(std::getenv("ANYDEV_CUDA_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
    auto proc = library == nullptr ? nullptr
                                   : reinterpret_cast<decltype(&cuGetProcAddress_v2)>(
                                         dlsym(library, "cuGetProcAddress_v2"));
    auto find = [proc](const char* name) {
      void* fn = nullptr;
      if (proc != nullptr) proc(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
      return fn;
    };
#define ANYDEV_TEST_RESOLVE(name) name = reinterpret_cast<decltype(name)>(find("cu" #name))
    ANYDEV_TEST_RESOLVE(CtxPushCurrent);
    ANYDEV_TEST_RESOLVE(CtxPopCurrent);
    ANYDEV_TEST_RESOLVE(MemAlloc);
    ANYDEV_TEST_RESOLVE(MemFree);
    ANYDEV_TEST_RESOLVE(MemsetD8Async);
    ANYDEV_TEST_RESOLVE(LaunchHostFunc);
    ANYDEV_TEST_RESOLVE(PointerGetAttribute);
    ANYDEV_TEST_RESOLVE(DeviceGetDefaultMemPool);
    ANYDEV_TEST_RESOLVE(MemPoolGetAttribute);
    ANYDEV_TEST_RESOLVE(MemPoolGetAccess);
#undef ANYDEV_TEST_RESOLVE
  }
  bool complete() const {
    return CtxPushCurrent && CtxPopCurrent && MemAlloc && MemFree && MemsetD8Async &&
           LaunchHostFunc && PointerGetAttribute && DeviceGetDefaultMemPool &&
           MemPoolGetAttribute && MemPoolGetAccess;
  }
  decltype(&cuCtxPushCurrent) CtxPushCurrent = nullptr;
  decltype(&cuCtxPopCurrent) CtxPopCurrent = nullptr;
  decltype(&cuMemAlloc) MemAlloc = nullptr;
  decltype(&cuMemFree) MemFree = nullptr;
  decltype(&cuMemsetD8Async) MemsetD8Async = nullptr;
  decltype(&cuLaunchHostFunc) LaunchHostFunc = nullptr;
  decltype(&cuPointerGetAttribute) PointerGetAttribute = nullptr;
  decltype(&cuDeviceGetDefaultMemPool) DeviceGetDefaultMemPool = nullptr;
  decltype(&cuMemPoolGetAttribute) MemPoolGetAttribute = nullptr;
  decltype(&cuMemPoolGetAccess) MemPoolGetAccess = nullptr;
};

bool emulator_has_pools() {
  const char* pools = std::getenv("ANYDEV_CUDA_EMULATOR_MEMORY_POOLS");
  return pools == nullptr || std::string(pools) != "0";
}

// The CUdeviceptr behind a buffer.
CUdeviceptr device_pointer(anydev_buffer_t buffer) {
  void* memory = nullptr;
  EXPECT_EQ(anydev_buffer_native_handle(buffer, &memory), ANYDEV_SUCCESS) << last_error();
  return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(memory));
}

std::vector<unsigned char> read_back(anydev_context_t ctx, anydev_buffer_t buf, std::size_t bytes) {
  std::vector<unsigned char> out(bytes, 0xee);
  EXPECT_EQ(anydev_enqueue_copy_to_host(ctx, out.data(), out.size(), buf), ANYDEV_SUCCESS)
      << last_error();
  EXPECT_EQ(anydev_context_synchronize(ctx), ANYDEV_SUCCESS) << last_error();
  return out;
}

TEST(CudaBackend, EmulatorHasTwoDevices) {
  EXPECT_EQ(anydev_device_count("cuda"), 2) << "run with ANYDEV_CUDA_EMULATOR_DEVICES=2";
}

TEST(CudaBackend, DeviceIndexPastTheLastIsOutOfRange) {
  Context ctx(anydev_device_count("cuda"));
  EXPECT_EQ(ctx.status(), ANYDEV_ERROR_OUT_OF_RANGE) << ctx.error();
}

TEST(CudaBackend, CopiesBetweenDevices) {
  Context c0(0), c1(1);
  ASSERT_OK(c0.status());
  ASSERT_OK(c1.status());
  constexpr std::size_t kBytes = 1 << 16;
  std::vector<unsigned char> source(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) source[i] = static_cast<unsigned char>(i * 13 + 1);
  Buffer d0(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes);
  Buffer d1(c1.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes);
  ASSERT_OK(d0.status());
  ASSERT_OK(d1.status());
  ASSERT_OK(anydev_enqueue_copy_from_host(c0.get(), d0.get(), source.data(), kBytes));
  ASSERT_OK(anydev_enqueue_copy(c1.get(), d1.get(), d0.get()));  // device 0 -> device 1
  EXPECT_EQ(read_back(c1.get(), d1.get(), kBytes), source);
  ASSERT_OK(anydev_enqueue_fill(c1.get(), d1.get(), "\x7f", 1));
  ASSERT_OK(anydev_enqueue_copy(c0.get(), d0.get(), d1.get()));  // and back, on device 0
  EXPECT_EQ(read_back(c0.get(), d0.get(), kBytes), std::vector<unsigned char>(kBytes, 0x7f));
}

TEST(CudaBackend, PeerAccessIsRealAndRepeatable) {
  Context c0(0), c1(1);
  ASSERT_OK(c0.status());
  ASSERT_OK(c1.status());
  int can = -1;
  ASSERT_OK(anydev_context_can_access(c0.get(), c1.get(), &can));
  EXPECT_EQ(can, 1);
  ASSERT_OK(anydev_context_can_access(c0.get(), c0.get(), &can));
  EXPECT_EQ(can, 0) << "a device is not its own peer";
  ASSERT_OK(anydev_context_enable_peer_access(c0.get(), c1.get()));
  ASSERT_OK(anydev_context_enable_peer_access(c0.get(), c1.get())) << "already enabled is fine";
}

TEST(CudaBackend, WrappedStreamIsUsedButNotDestroyed) {
  Context c0(0);
  ASSERT_OK(c0.status());
  anydev_stream_t stream = nullptr;
  ASSERT_OK(anydev_context_stream(c0.get(), &stream));
  void* native = nullptr;
  ASSERT_OK(anydev_stream_native_handle(stream, &native));
  anydev_stream_release(stream);
  ASSERT_NE(native, nullptr);

  Buffer d(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT32, 64);
  ASSERT_OK(d.status());
  {
    anydev_context_t wrapped = nullptr;
    ASSERT_OK(anydev_context_wrap_native_stream("cuda", 0, native, &wrapped));
    const std::uint32_t word = 0xa1b2c3d4u;
    ASSERT_OK(anydev_enqueue_fill(wrapped, d.get(), &word, sizeof(word)));
    ASSERT_OK(anydev_context_synchronize(wrapped));
    ASSERT_OK(anydev_context_release(wrapped));
  }
  // The original context's stream still works: the wrapper did not destroy it.
  const std::vector<unsigned char> bytes = read_back(c0.get(), d.get(), 256);
  std::uint32_t first = 0;
  std::memcpy(&first, bytes.data(), 4);
  EXPECT_EQ(first, 0xa1b2c3d4u);
}

TEST(CudaBackend, WrappingAStreamOfAnotherDeviceIsInvalidArgument) {
  Context c1(1);
  ASSERT_OK(c1.status());
  anydev_stream_t stream = nullptr;
  ASSERT_OK(anydev_context_stream(c1.get(), &stream));
  void* native = nullptr;
  ASSERT_OK(anydev_stream_native_handle(stream, &native));
  anydev_stream_release(stream);
  anydev_context_t wrapped = nullptr;
  EXPECT_EQ(anydev_context_wrap_native_stream("cuda", 0, native, &wrapped),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("not to the primary context"), std::string::npos) << last_error();
}

TEST(CudaBackend, NativeHandles) {
  Context c0(0);
  ASSERT_OK(c0.status());
  void* context = nullptr;
  void* device = reinterpret_cast<void*>(1);
  ASSERT_OK(anydev_context_native_handle(c0.get(), ANYDEV_NATIVE_CONTEXT, &context));
  ASSERT_OK(anydev_context_native_handle(c0.get(), ANYDEV_NATIVE_DEVICE, &device));
  EXPECT_NE(context, nullptr);
  EXPECT_EQ(device, nullptr) << "CUdevice 0, as a pointer-sized value";
  Buffer d(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_FLOAT32, 16);
  ASSERT_OK(d.status());
  void* memory = nullptr;
  ASSERT_OK(anydev_buffer_native_handle(d.get(), &memory));
  anydev_buffer_info_t info = {};
  info.struct_size = sizeof(info);
  ASSERT_OK(anydev_buffer_get_info(d.get(), &info));
  EXPECT_EQ(memory, info.address) << "a CUdeviceptr, the buffer's address";
}

// Patterns that take each memset path: D8, D16, D32 after reduction, and the
// strided D2D32 passes for 8- and 16-byte periods.
TEST(CudaBackend, FillsWriteExactBitsOnEveryPath) {
  Context c0(0);
  ASSERT_OK(c0.status());
  struct Case {
    std::size_t size;
    std::array<unsigned char, 16> pattern;
  };
  const Case cases[] = {
      {8, {1, 1, 1, 1, 1, 1, 1, 1}},                                  // -> D8
      {8, {1, 2, 1, 2, 1, 2, 1, 2}},                                  // -> D16
      {16, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}},         // -> D32
      {8, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f}},          // double 1.0: D2D32 x2
      {16, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},  // D2D32 x4
      {16, {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}},         // 8-byte period
      {2, {0xff, 0x7f}},
      {4, {0x00, 0x00, 0xc0, 0x7f}},  // a float NaN
  };
  constexpr std::size_t kElements = 777;
  for (const Case& c : cases) {
    for (anydev_memory_kind_t kind : {ANYDEV_MEMORY_DEVICE, ANYDEV_MEMORY_HOST}) {
      SCOPED_TRACE("pattern of " + std::to_string(c.size) + " bytes, " +
                   (kind == ANYDEV_MEMORY_DEVICE ? "device" : "host") + " buffer");
      const anydev_dtype_t dtype = c.size == 16  ? ANYDEV_DTYPE_COMPLEX128
                                   : c.size == 8 ? ANYDEV_DTYPE_UINT64
                                   : c.size == 4 ? ANYDEV_DTYPE_UINT32
                                                 : ANYDEV_DTYPE_UINT16;
      Buffer b(c0.get(), kind, dtype, kElements + 2);
      ASSERT_OK(b.status());
      ASSERT_OK(anydev_enqueue_fill(c0.get(), b.get(), "\x00", 1));
      anydev_buffer_t view = nullptr;  // leaves one element untouched on each side
      ASSERT_OK(anydev_buffer_create_sub_buffer(b.get(), dtype, 1, kElements, &view));
      ASSERT_OK(anydev_enqueue_fill(c0.get(), view, c.pattern.data(), c.size));
      anydev_buffer_release(view);
      const std::vector<unsigned char> bytes =
          read_back(c0.get(), b.get(), (kElements + 2) * c.size);
      for (std::size_t i = 0; i < kElements + 2; ++i) {
        const bool inside = i >= 1 && i <= kElements;
        for (std::size_t k = 0; k < c.size; ++k) {
          ASSERT_EQ(bytes[i * c.size + k], inside ? c.pattern[k] : 0)
              << "element " << i << " byte " << k;
        }
      }
    }
  }
}

TEST(CudaBackend, OutOfDeviceMemoryNamesTheDriverCall) {
  Context c0(0);
  ASSERT_OK(c0.status());
  constexpr std::size_t kChunk = (kEmulatorMemoryMiB / 2 + kEmulatorMemoryMiB / 4) << 20;
  Buffer first(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kChunk);
  ASSERT_OK(first.status());
  Buffer second(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kChunk);
  EXPECT_EQ(second.status(), ANYDEV_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(second.error().find("CUDA_ERROR_OUT_OF_MEMORY (out of memory)"), std::string::npos)
      << second.error();
  EXPECT_NE(second.error().find("cuMemAlloc"), std::string::npos) << second.error();
}

TEST(CudaBackend, ReleasedDeviceMemoryReturnsToTheDevice) {
  Context c0(0);
  ASSERT_OK(c0.status());
  // Earlier tests' buffers may still be on their way back, or kept by the
  // core's caching pool (docs/memory-pools.md): hand the cache back and wait.
  auto wait_until_all_free = [&](anydev_memory_info_t* info) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    do {
      ASSERT_OK(anydev_context_release_cached_memory(c0.get()));
      ASSERT_OK(anydev_context_memory_info(c0.get(), info));
      if (info->free_bytes == info->total_bytes) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (std::chrono::steady_clock::now() < deadline);
  };
  anydev_memory_info_t before = {sizeof(anydev_memory_info_t), 0, 0};
  wait_until_all_free(&before);
  ASSERT_EQ(before.total_bytes, kEmulatorMemoryMiB << 20);
  ASSERT_EQ(before.free_bytes, before.total_bytes);
  {
    Buffer b(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 1 << 20);
    ASSERT_OK(b.status());
    ASSERT_OK(anydev_enqueue_fill(c0.get(), b.get(), "\x01", 1));
    anydev_memory_info_t during = {sizeof(anydev_memory_info_t), 0, 0};
    ASSERT_OK(anydev_context_memory_info(c0.get(), &during));
    EXPECT_EQ(during.free_bytes + (1 << 20), before.free_bytes);
  }  // released while the fill may still be queued: the free is ordered after it
  ASSERT_OK(anydev_context_synchronize(c0.get()));
  anydev_memory_info_t after = {sizeof(anydev_memory_info_t), 0, 0};
  wait_until_all_free(&after);
  EXPECT_EQ(after.free_bytes, before.free_bytes);
}

// A real driver may answer CUDA_ERROR_INVALID_VALUE for a size it can never
// satisfy (cuda.h lists it for cuMemHostAlloc and cuMemAllocAsync): the
// request is still out of memory. The cuda-backend-huge-is-invalid run sets
// ANYDEV_CUDA_EMULATOR_HUGE_IS_INVALID=1 to make the emulator answer so.
TEST(CudaBackend, ImpossibleSizeIsOutOfMemoryWhateverTheDriverAnswers) {
  Context c0(0);
  ASSERT_OK(c0.status());
  const char* huge = std::getenv("ANYDEV_CUDA_EMULATOR_HUGE_IS_INVALID");
  const std::string answer = huge != nullptr && std::string(huge) == "1"
                                 ? "CUDA_ERROR_INVALID_VALUE"
                                 : "CUDA_ERROR_OUT_OF_MEMORY";
  constexpr std::size_t kImpossible = std::size_t{1} << 62;
  for (anydev_memory_kind_t kind : {ANYDEV_MEMORY_DEVICE, ANYDEV_MEMORY_HOST}) {
    SCOPED_TRACE(kind == ANYDEV_MEMORY_DEVICE ? "device memory" : "host memory");
    Buffer b(c0.get(), kind, ANYDEV_DTYPE_UINT8, kImpossible);
    EXPECT_EQ(b.status(), ANYDEV_ERROR_OUT_OF_MEMORY) << b.error();
    EXPECT_TRUE(contains(b.error(), answer)) << b.error();
    EXPECT_TRUE(contains(b.error(), std::to_string(kImpossible))) << b.error();
  }
  Buffer small(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 64);
  EXPECT_EQ(small.status(), ANYDEV_SUCCESS) << small.error();
}

// Device memory comes from a pool anydev created, with a release threshold,
// not from the device's default pool; peer access is granted on that pool.
TEST(CudaBackend, DeviceMemoryComesFromAnydevsOwnPool) {
  Context c0(0), c1(1);
  ASSERT_OK(c0.status());
  ASSERT_OK(c1.status());
  const Emulator emu;  // now that the backend opened it
  ASSERT_TRUE(emu.complete()) << "ANYDEV_CUDA_LIBRARY must name the emulator";
  Buffer b0(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096);
  Buffer b1(c1.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096);
  ASSERT_OK(b0.status());
  ASSERT_OK(b1.status());
  CUmemoryPool pool0 = nullptr, pool1 = nullptr;
  ASSERT_EQ(emu.PointerGetAttribute(&pool0, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                    device_pointer(b0.get())),
            CUDA_SUCCESS);
  ASSERT_EQ(emu.PointerGetAttribute(&pool1, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                    device_pointer(b1.get())),
            CUDA_SUCCESS);
  if (!emulator_has_pools()) {  // the no-pools run: cuMemAlloc, no pool at all
    EXPECT_EQ(pool0, nullptr);
    EXPECT_EQ(pool1, nullptr);
    return;
  }
  ASSERT_NE(pool0, nullptr);
  ASSERT_NE(pool1, nullptr);
  EXPECT_NE(pool0, pool1);
  CUmemoryPool default1 = nullptr;
  ASSERT_EQ(emu.DeviceGetDefaultMemPool(&default1, 1), CUDA_SUCCESS);
  EXPECT_NE(pool1, default1) << "memory from the device's default pool";
  cuuint64_t threshold = 0;
  ASSERT_EQ(emu.MemPoolGetAttribute(pool1, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
            CUDA_SUCCESS);
  EXPECT_EQ(threshold, std::uint64_t{64} << 20);

  ASSERT_OK(anydev_context_enable_peer_access(c0.get(), c1.get()));
  CUmemLocation device0 = {};
  device0.type = CU_MEM_LOCATION_TYPE_DEVICE;
  device0.id = 0;
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  ASSERT_EQ(emu.MemPoolGetAccess(&flags, pool1, &device0), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE) << "peer access on anydev's pool";
  ASSERT_EQ(emu.MemPoolGetAccess(&flags, default1, &device0), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE) << "the default pool is left alone";
}

void wait_for_release(void* flag) {
  while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
}

// Runs in a fresh process (a death test): the fault breaks device 0 for good.
// Returns what went wrong, or "" when all is as it should be.
std::string break_the_context_and_use_it() {
  Context c0(0);
  if (c0.status() != ANYDEV_SUCCESS) return "context: " + c0.error();
  const Emulator emu;  // now that the backend opened it
  if (!emu.complete()) return "the emulator's entry points are missing";
  Buffer b(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096);
  if (b.status() != ANYDEV_SUCCESS) return "buffer: " + b.error();
  anydev_stream_t stream = nullptr;
  void* native_stream = nullptr;
  void* native_context = nullptr;
  if (anydev_context_stream(c0.get(), &stream) != ANYDEV_SUCCESS ||
      anydev_stream_native_handle(stream, &native_stream) != ANYDEV_SUCCESS ||
      anydev_context_native_handle(c0.get(), ANYDEV_NATIVE_CONTEXT, &native_context) !=
          ANYDEV_SUCCESS) {
    return "native handles: " + last_error();
  }
  anydev_stream_release(stream);
  // A memset of memory freed before it runs: an illegal address on the device.
  auto* cu_stream = static_cast<CUstream>(native_stream);
  std::atomic<bool> release{false};
  CUdeviceptr p = 0;
  CUcontext popped = nullptr;
  if (emu.CtxPushCurrent(static_cast<CUcontext>(native_context)) != CUDA_SUCCESS ||
      emu.MemAlloc(&p, 64) != CUDA_SUCCESS ||
      emu.LaunchHostFunc(cu_stream, wait_for_release, &release) != CUDA_SUCCESS ||
      emu.MemsetD8Async(p, 1, 64, cu_stream) != CUDA_SUCCESS || emu.MemFree(p) != CUDA_SUCCESS) {
    return "provoking the fault failed";
  }
  release = true;
  emu.CtxPopCurrent(&popped);

  std::string wrong;
  auto expect_broken = [&wrong](const char* what, anydev_status_t status) {
    const std::string message = last_error();
    if (status != ANYDEV_ERROR_DEVICE || !contains(message, "CUDA_ERROR_ILLEGAL_ADDRESS") ||
        !contains(message, "context is broken")) {
      wrong += std::string(what) + ": status " + std::to_string(status) + ", \"" + message + "\"\n";
    }
  };
  expect_broken("synchronize", anydev_context_synchronize(c0.get()));
  expect_broken("synchronize again", anydev_context_synchronize(c0.get()));
  anydev_buffer_t more = nullptr;
  expect_broken("buffer_create", anydev_buffer_create(c0.get(), ANYDEV_MEMORY_DEVICE,
                                                      ANYDEV_DTYPE_UINT8, 1 << 20, &more));
  anydev_context_t another = nullptr;
  expect_broken("context_create", anydev_context_create("cuda", 0, &another));
  return wrong;  // the buffer and context are released on the way out: no hang
}

TEST(CudaBackendFault, AsynchronousFaultReportsABrokenContextAndNeverHangs) {
  EXPECT_EXIT(
      {
        alarm(30);  // a hang ends the child with SIGALRM: the test fails, not blocks
        const std::string wrong = break_the_context_and_use_it();
        std::fprintf(stderr, "%s", wrong.c_str());
        std::exit(wrong.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A forked child cannot use the CUDA driver its parent initialized: a new
// context there fails with a message that says so, promptly.
TEST(CudaBackendFork, ContextInAForkedChildFailsWithAClearMessage) {
  ANYDEV_SKIP_FORK_UNDER_ASAN();
  Context c0(0);
  ASSERT_OK(c0.status());
  Buffer b(c0.get(), ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096);
  ASSERT_OK(b.status());
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    alarm(30);  // a hang ends the child with SIGALRM
    anydev_context_t ctx = nullptr;
    const anydev_status_t status = anydev_context_create("cuda", 0, &ctx);
    const std::string message = last_error();
    const bool clear = status != ANYDEV_SUCCESS && contains(message, "fork");
    if (!clear) std::fprintf(stderr, "status %d: %s\n", static_cast<int>(status), message.c_str());
    _exit(clear ? 0 : 1);
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0)
      << "wait status " << wait_status;
  ASSERT_OK(anydev_enqueue_fill(c0.get(), b.get(), "\x01", 1));  // the parent still works
  ASSERT_OK(anydev_context_synchronize(c0.get()));
}

}  // namespace

int main(int argc, char** argv) {
  setenv("ANYDEV_CUDA_LIBRARY", ANYDEV_TEST_CUDA_EMULATOR, 0);
  setenv("ANYDEV_CUDA_EMULATOR_DEVICES", "2", 0);
  setenv("ANYDEV_CUDA_EMULATOR_MEMORY_MB", std::to_string(kEmulatorMemoryMiB).c_str(), 1);
  ::testing::InitGoogleTest(&argc, argv);
  // Death tests re-run this program: the child starts with no driver state.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}
