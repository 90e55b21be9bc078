// SPDX-License-Identifier: Apache-2.0
// Importing a producer's DLManagedTensor: zero copy, the producer's deleter
// called exactly once after the last anydev reference and anydev's work,
// never on failure; errors name the field and its value.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "anydev/dlpack.hpp"

namespace {

using anydev::DeviceContext;

std::string error_of(anydev_status_t status) {
  return status == ANYDEV_SUCCESS ? "" : anydev_last_error_message();
}

// A producer: owns host memory and counts deleter calls.
struct Producer {
  std::vector<float> data;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  DLManagedTensor managed{};
  std::mutex mutex;
  std::condition_variable deleted_cv;
  int deleted = 0;

  explicit Producer(std::size_t n, std::vector<std::int64_t> extents = {})
      : data(n, 0.0f), shape(std::move(extents)) {
    if (shape.empty()) shape = {static_cast<std::int64_t>(n)};
    DLTensor& t = managed.dl_tensor;
    t.data = data.data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      auto* p = static_cast<Producer*>(self->manager_ctx);
      std::lock_guard lock(p->mutex);
      ++p->deleted;
      p->deleted_cv.notify_all();
    };
  }
  int deletions() {
    std::lock_guard lock(mutex);
    return deleted;
  }
  // Waits for the deleter (it may run on anydev's reclaimer thread). The
  // bound only turns a hang into a failure.
  bool wait_deleted() {
    std::unique_lock lock(mutex);
    return deleted_cv.wait_for(lock, std::chrono::seconds(60), [&] { return deleted > 0; });
  }
};

TEST(DlpackImport, HostTensorBecomesAZeroCopyHostBuffer) {
  Producer producer(64);
  producer.data[5] = 5.0f;
  {
    auto h = anydev::from_dlpack<float, anydev::HostBuffer>(&producer.managed);
    EXPECT_EQ(h.unsafe_ptr(), producer.data.data());
    EXPECT_EQ(h.size(), 64u);
    EXPECT_EQ(h[5], 5.0f);
    EXPECT_EQ(h.context().api(), "cpu");
    h.enqueue_fill(3.0f);
    h.context().synchronize();
    EXPECT_EQ(producer.data[63], 3.0f);
    EXPECT_EQ(producer.deletions(), 0);  // anydev holds the tensor
  }
  ASSERT_TRUE(producer.wait_deleted());
  EXPECT_EQ(producer.deletions(), 1);
}

TEST(DlpackImport, DeleterWaitsForAnydevWorkAndRunsOnce) {
  Producer producer(1 << 18);
  const DeviceContext ctx(0, "cpu");
  {
    auto h = anydev::from_dlpack<float, anydev::HostBuffer>(&producer.managed, &ctx);
    const auto d = ctx.enqueue_create_buffer<float>(1 << 18);
    d.enqueue_fill(4.0f);
    h.enqueue_copy_from(d);  // in flight when h goes
    const auto view = h.create_sub_buffer<float>(8, 8);
    h = anydev::HostBuffer<float>();
    EXPECT_EQ(producer.deletions(), 0);  // the view still holds it
  }
  ASSERT_TRUE(producer.wait_deleted());
  EXPECT_EQ(producer.data[(1 << 18) - 1], 4.0f);  // the copy finished before the deleter
  EXPECT_EQ(producer.deletions(), 1);
}

TEST(DlpackImport, MultiDimensionalByteOffsetAndEmptyTensors) {
  Producer producer(12, {3, 4});
  std::int64_t strides[] = {4, 1};
  producer.managed.dl_tensor.strides = strides;
  producer.managed.dl_tensor.byte_offset = 0;
  {
    auto h = anydev::from_dlpack<float, anydev::HostBuffer>(&producer.managed);
    EXPECT_EQ(h.size(), 12u);
  }
  ASSERT_TRUE(producer.wait_deleted());

  Producer offset(16);
  offset.managed.dl_tensor.byte_offset = 8;
  offset.shape[0] = 14;
  {
    auto h = anydev::from_dlpack<float, anydev::HostBuffer>(&offset.managed);
    EXPECT_EQ(h.unsafe_ptr(), offset.data.data() + 2);
    EXPECT_EQ(h.size(), 14u);
  }
  ASSERT_TRUE(offset.wait_deleted());

  Producer empty(0);
  empty.managed.dl_tensor.data = nullptr;
  {
    auto h = anydev::from_dlpack<float, anydev::HostBuffer>(&empty.managed);
    EXPECT_EQ(h.size(), 0u);
  }
  ASSERT_TRUE(empty.wait_deleted());
}

TEST(DlpackImport, ExportedTensorImportsAsTheSameMemory) {
  const DeviceContext ctx(0, "cpu");
  const auto h = ctx.enqueue_create_host_buffer<std::int64_t>(8);
  auto back = anydev::from_dlpack<std::int64_t, anydev::HostBuffer>(anydev::to_dlpack(h));
  EXPECT_EQ(back.unsafe_ptr(), h.unsafe_ptr());
}

TEST(DlpackImport, WrongElementTypeForTheCppLayerIsAnError) {
  Producer producer(4);
  try {
    anydev::from_dlpack<double, anydev::HostBuffer>(&producer.managed);
    FAIL() << "expected anydev::Error";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), anydev::Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("host buffer of float32"), std::string::npos) << e.what();
  }
  ASSERT_TRUE(producer.wait_deleted());  // the buffer (and the tensor) were released
}

// Each bad tensor is rejected with its status and message, and the
// producer's deleter is not called (the caller still owns the tensor).
TEST(DlpackImport, UnsupportedTensorsAreRejectedAndNotDeleted) {
  struct Case {
    const char* name;
    void (*spoil)(Producer&);
    anydev_status_t status;
    const char* message;
  };
  static std::int64_t transposed[] = {1, 3};
  const Case cases[] = {
      {"opencl", [](Producer& p) { p.managed.dl_tensor.device.device_type = kDLOpenCL; },
       ANYDEV_ERROR_UNSUPPORTED, "cannot import a tensor on kDLOpenCL (4)"},
      {"vulkan", [](Producer& p) { p.managed.dl_tensor.device.device_type = kDLVulkan; },
       ANYDEV_ERROR_UNSUPPORTED, "cannot import a tensor on kDLVulkan (7)"},
      {"lanes", [](Producer& p) { p.managed.dl_tensor.dtype.lanes = 4; }, ANYDEV_ERROR_UNSUPPORTED,
       "float of 32 bits x 4 lanes"},
      {"bits",
       [](Producer& p) {
         p.managed.dl_tensor.dtype = DLDataType{kDLUInt, 7, 1};
       },
       ANYDEV_ERROR_UNSUPPORTED, "uint of 7 bits x 1 lanes"},
      {"opaque",
       [](Producer& p) {
         p.managed.dl_tensor.dtype = DLDataType{kDLOpaqueHandle, 64, 1};
       },
       ANYDEV_ERROR_UNSUPPORTED, "opaque handle of 64 bits"},
      {"strides",
       [](Producer& p) {
         p.shape = {3, 4};
         p.managed.dl_tensor.shape = p.shape.data();
         p.managed.dl_tensor.ndim = 2;
         p.managed.dl_tensor.strides = transposed;
       },
       ANYDEV_ERROR_UNSUPPORTED, "shape [3, 4], strides [1, 3]"},
      {"misaligned", [](Producer& p) { p.managed.dl_tensor.byte_offset = 2; },
       ANYDEV_ERROR_INVALID_ARGUMENT, "+ byte_offset 2 is not aligned to 4 bytes"},
      {"offset wraps the address space",  // found by the fuzzer (fuzz/regressions/)
       [](Producer& p) {
         // data + byte_offset is 16 bytes before the end of the address space
         // (aligned, and data + byte_offset itself fits): 32 bytes wrap.
         const auto data = reinterpret_cast<std::uintptr_t>(p.managed.dl_tensor.data);
         p.managed.dl_tensor.byte_offset = (~std::uintptr_t{0} - 15) - data;
       },
       ANYDEV_ERROR_OUT_OF_RANGE, "runs past the end of the address space"},
      {"null data", [](Producer& p) { p.managed.dl_tensor.data = nullptr; },
       ANYDEV_ERROR_INVALID_ARGUMENT, "data is NULL but it holds 8 elements"},
      {"negative extent", [](Producer& p) { p.shape[0] = -8; }, ANYDEV_ERROR_INVALID_ARGUMENT,
       "negative extent -8"},
      {"ndim", [](Producer& p) { p.managed.dl_tensor.ndim = -1; }, ANYDEV_ERROR_UNSUPPORTED,
       "ndim -1 is outside"},
      {"cuda without cuda",
       [](Producer& p) {
         p.managed.dl_tensor.device = DLDevice{kDLCUDA, 0};
       },
       ANYDEV_ERROR_UNSUPPORTED,
       "cannot import a tensor on kDLCUDA (2): no available backend declares that DLPack "
       "device type"},
  };
  for (const Case& c : cases) {
    Producer producer(8);
    c.spoil(producer);
    anydev_buffer_t out = nullptr;
    const anydev_status_t s = anydev_buffer_from_dlpack(nullptr, &producer.managed, &out);
    if (std::string(c.name) == "cuda without cuda" && anydev_device_count("cuda") > 0) {
      if (s == ANYDEV_SUCCESS) anydev_buffer_release(out);  // a real GPU took it
      continue;
    }
    EXPECT_EQ(s, c.status) << c.name << ": " << error_of(s);
    EXPECT_NE(error_of(s).find(c.message), std::string::npos) << c.name << ": " << error_of(s);
    EXPECT_EQ(out, nullptr) << c.name;
    EXPECT_EQ(producer.deletions(), 0) << c.name;
  }
}

// A tensor of `device_type` (one a GPU backend's devices declare; found by
// the capabilities, not the backend's name) needs a context of `backend`:
// a cpu context is refused, naming both, and the producer keeps its tensor.
void ExpectTensorNeedsContextOf(DLDeviceType device_type, const std::string& backend) {
  if (anydev_device_count(backend.c_str()) == 0) {
    GTEST_SKIP() << "no " << backend << " device (nor the emulator)";
  }
  Producer producer(8);
  producer.managed.dl_tensor.device = DLDevice{device_type, 0};
  const DeviceContext ctx(0, "cpu");
  anydev_buffer_t out = nullptr;
  const anydev_status_t s = anydev_buffer_from_dlpack(ctx.handle(), &producer.managed, &out);
  EXPECT_EQ(s, ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error_of(s).find("needs a context on " + backend + ":0, not cpu:0"), std::string::npos)
      << error_of(s);
  EXPECT_EQ(producer.deletions(), 0);
}

// kDLCUDA is cuda's. Run with the CUDA emulator by dlpack.import_cuda_emulator.
TEST(DlpackImport, CudaTensorNeedsACudaContext) { ExpectTensorNeedsContextOf(kDLCUDA, "cuda"); }

// kDLROCM is hip's. Run with the HIP emulator by dlpack.import_hip_emulator.
TEST(DlpackImport, RocmTensorNeedsAHipContext) { ExpectTensorNeedsContextOf(kDLROCM, "hip"); }

TEST(DlpackImport, NullArgumentsAreInvalid) {
  Producer producer(2);
  anydev_buffer_t out = nullptr;
  EXPECT_EQ(anydev_buffer_from_dlpack(nullptr, nullptr, &out), ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(anydev_buffer_from_dlpack(nullptr, &producer.managed, nullptr),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(producer.deletions(), 0);
}

// Foreign host memory (a kDLCPU tensor imported with a context of any
// backend) follows one rule on every backend (docs/embedding.md): fills and
// copies work and are ordered on the context's stream; native_handle() is
// unsupported (the producer holds the native object); take_ptr() is
// unsupported (the producer owns the memory). cuda and hip run on their
// emulators, level_zero on its emulated driver (ctest entries
// dlpack.every_backend_{cuda,hip,level_zero}_emulator run EveryBackend/*/<b>);
// a backend that is not available here is skipped with its reason.
class ForeignHostMemory : public ::testing::TestWithParam<const char*> {};

std::string BackendReason(const std::string& name) {
  std::size_t count = 0;
  if (anydev_backend_count(&count) != ANYDEV_SUCCESS) return "anydev_backend_count failed";
  for (std::size_t i = 0; i < count; ++i) {
    anydev_backend_info_t info{};
    info.struct_size = sizeof info;
    if (anydev_backend_info(i, &info) == ANYDEV_SUCCESS && name == info.name) {
      return info.available != 0 ? std::string() : std::string(info.reason);
    }
  }
  return "not a known backend";
}

TEST_P(ForeignHostMemory, FillCopyNativeHandleAndTakePtrFollowOneRule) {
  const std::string api = GetParam();
  if (const std::string why = BackendReason(api); !why.empty()) {
    GTEST_SKIP() << api << " is unavailable here: " << why;
  }
  const DeviceContext ctx(0, api);
  Producer producer(256);
  anydev_buffer_t imported = nullptr;
  ASSERT_EQ(anydev_buffer_from_dlpack(ctx.handle(), &producer.managed, &imported), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  const float three = 3.0f;
  ASSERT_EQ(anydev_enqueue_fill(nullptr, imported, &three, sizeof three), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  // A copy into it, ordered after the fill, overwrites the first 64.
  std::vector<float> source(64, 7.0f);
  anydev_buffer_t first = nullptr;
  ASSERT_EQ(anydev_buffer_create_sub_buffer(imported, ANYDEV_DTYPE_FLOAT32, 0, 64, &first),
            ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_enqueue_copy_from_host(nullptr, first, source.data(), source.size() * 4),
            ANYDEV_SUCCESS)
      << anydev_last_error_message();
  ctx.synchronize();
  EXPECT_EQ(producer.data[0], 7.0f);
  EXPECT_EQ(producer.data[63], 7.0f);
  EXPECT_EQ(producer.data[64], 3.0f);
  EXPECT_EQ(producer.data[255], 3.0f);
  EXPECT_EQ(anydev_buffer_release(first), ANYDEV_SUCCESS);
  void* out = nullptr;
  anydev_status_t s = anydev_buffer_native_handle(imported, &out);
  EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED) << error_of(s);
  EXPECT_NE(error_of(s).find("imported"), std::string::npos) << error_of(s);
  s = anydev_buffer_take_ptr(imported, &out);
  EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED) << error_of(s);
  EXPECT_NE(error_of(s).find("imported"), std::string::npos) << error_of(s);
  // The refused take changed nothing: the buffer still works.
  const float four = 4.0f;
  EXPECT_EQ(anydev_enqueue_fill(nullptr, imported, &four, sizeof four), ANYDEV_SUCCESS);
  ctx.synchronize();
  EXPECT_EQ(producer.data[0], 4.0f);
  EXPECT_EQ(anydev_buffer_release(imported), ANYDEV_SUCCESS);
  ASSERT_TRUE(producer.wait_deleted());
  EXPECT_EQ(producer.deletions(), 1);
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, ForeignHostMemory,
                         ::testing::Values("cpu", "opencl", "cuda", "hip", "level_zero"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
