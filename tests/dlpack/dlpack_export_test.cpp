// SPDX-License-Identifier: Apache-2.0
// Exporting buffers as DLManagedTensors: devices, dtypes, shapes, views,
// lifetimes (the deleter from any thread, in any order) and errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "anydev/dlpack.hpp"

namespace {

using anydev::DeviceContext;
using anydev::HostBuffer;

DeviceContext cpu() { return DeviceContext(0, "cpu"); }

std::string error_of(anydev_status_t status) {
  return status == ANYDEV_SUCCESS ? "" : anydev_last_error_message();
}

TEST(DlpackExport, HostBufferIsA1DViewOnTheCpu) {
  const DeviceContext ctx = cpu();
  const HostBuffer<float> h = ctx.enqueue_create_host_buffer<float>(16);
  h.enqueue_fill(1.5f);
  anydev::make_ready(h);
  anydev::DLPackTensor t = anydev::to_dlpack(h);
  EXPECT_EQ(t->device.device_type, kDLCPU);
  EXPECT_EQ(t->device.device_id, 0);
  EXPECT_EQ(t->ndim, 1);
  EXPECT_EQ(t->shape[0], 16);
  EXPECT_EQ(t->strides[0], 1);
  EXPECT_EQ(t->byte_offset, 0u);
  EXPECT_EQ(t->dtype.code, kDLFloat);
  EXPECT_EQ(t->dtype.bits, 32);
  EXPECT_EQ(t->dtype.lanes, 1);
  EXPECT_EQ(t->data, h.unsafe_ptr());
  EXPECT_EQ(static_cast<float*>(t->data)[15], 1.5f);
  static_cast<float*>(t->data)[3] = 7.0f;
  EXPECT_EQ(h[3], 7.0f);  // the same memory
}

TEST(DlpackExport, CpuDeviceBufferIsKDLCPU) {
  const DeviceContext ctx = cpu();
  const auto d = ctx.enqueue_create_buffer<std::int16_t>(4);
  const DLDevice device = anydev::dlpack_device(d);
  EXPECT_EQ(device.device_type, kDLCPU);
  anydev::DLPackTensor t = anydev::to_dlpack(d);
  EXPECT_EQ(t->data, d.unsafe_ptr());
  EXPECT_EQ(t->dtype.code, kDLInt);
  EXPECT_EQ(t->dtype.bits, 16);
}

TEST(DlpackExport, EveryDtypeButBoolMaps) {
  const DeviceContext ctx = cpu();
  struct Case {
    anydev_dtype_t dtype;
    int code;
    int bits;
  };
  const Case cases[] = {
      {ANYDEV_DTYPE_INT8, kDLInt, 8},
      {ANYDEV_DTYPE_INT64, kDLInt, 64},
      {ANYDEV_DTYPE_UINT8, kDLUInt, 8},
      {ANYDEV_DTYPE_UINT32, kDLUInt, 32},
      {ANYDEV_DTYPE_FLOAT16, kDLFloat, 16},
      {ANYDEV_DTYPE_BFLOAT16, kDLBfloat, 16},
      {ANYDEV_DTYPE_FLOAT64, kDLFloat, 64},
      {ANYDEV_DTYPE_COMPLEX64, kDLComplex, 64},
      {ANYDEV_DTYPE_COMPLEX128, kDLComplex, 128},
  };
  for (const Case& c : cases) {
    anydev_buffer_t buf = nullptr;
    ASSERT_EQ(anydev_buffer_create(ctx.handle(), ANYDEV_MEMORY_HOST, c.dtype, 2, &buf),
              ANYDEV_SUCCESS);
    DLManagedTensor* t = nullptr;
    ASSERT_EQ(anydev_buffer_to_dlpack(buf, 0, nullptr, &t), ANYDEV_SUCCESS);
    EXPECT_EQ(t->dl_tensor.dtype.code, c.code) << anydev_dtype_name(c.dtype);
    EXPECT_EQ(t->dl_tensor.dtype.bits, c.bits) << anydev_dtype_name(c.dtype);
    t->deleter(t);
    anydev_buffer_release(buf);
  }
  const auto flags = ctx.enqueue_create_host_buffer<bool>(4);
  DLManagedTensor* t = nullptr;
  const anydev_status_t s = anydev_buffer_to_dlpack(flags.handle(), 0, nullptr, &t);
  EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED);
  EXPECT_NE(error_of(s).find("dtype bool has no DLPack 0.6 type"), std::string::npos);
  EXPECT_EQ(t, nullptr);  // nothing changed
}

TEST(DlpackExport, ShapesAndStrides) {
  const DeviceContext ctx = cpu();
  const auto h = ctx.enqueue_create_host_buffer<double>(24);
  anydev::DLPackTensor t = anydev::to_dlpack(h, {2, 3, 4});
  ASSERT_EQ(t->ndim, 3);
  EXPECT_EQ(t->strides[0], 12);
  EXPECT_EQ(t->strides[1], 4);
  EXPECT_EQ(t->strides[2], 1);
  const auto one = ctx.enqueue_create_host_buffer<double>(1);
  anydev::DLPackTensor scalar = anydev::to_dlpack(one, std::span<const std::int64_t>{});
  EXPECT_EQ(scalar->ndim, 1);  // empty shape: 1-D
  DLManagedTensor* raw = nullptr;
  const std::int64_t none = 0;
  ASSERT_EQ(anydev_buffer_to_dlpack(one.handle(), 0, &none, &raw), ANYDEV_SUCCESS);
  EXPECT_EQ(raw->dl_tensor.ndim, 0);  // ndim 0 with a shape pointer: a scalar
  raw->deleter(raw);
}

TEST(DlpackExport, BadShapesAreRejectedWithTheirValues) {
  const DeviceContext ctx = cpu();
  const auto h = ctx.enqueue_create_host_buffer<float>(12);
  DLManagedTensor* t = nullptr;
  const std::int64_t wrong[] = {5, 3};
  anydev_status_t s = anydev_buffer_to_dlpack(h.handle(), 2, wrong, &t);
  EXPECT_EQ(s, ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error_of(s).find("shape [5, 3] holds 15 elements but the buffer holds 12"),
            std::string::npos);
  const std::int64_t negative[] = {-4, -3};
  s = anydev_buffer_to_dlpack(h.handle(), 2, negative, &t);
  EXPECT_EQ(s, ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error_of(s).find("negative extent -4"), std::string::npos);
  s = anydev_buffer_to_dlpack(h.handle(), 2, nullptr, &t);
  EXPECT_EQ(s, ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error_of(s).find("shape is NULL but ndim is 2"), std::string::npos);
  s = anydev_buffer_to_dlpack(h.handle(), 33, wrong, &t);
  EXPECT_EQ(s, ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error_of(s).find("ndim 33"), std::string::npos);
  EXPECT_EQ(anydev_buffer_to_dlpack(nullptr, 0, nullptr, &t), ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(anydev_buffer_to_dlpack(h.handle(), 0, nullptr, nullptr),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
}

TEST(DlpackExport, ViewPointsIntoItsParent) {
  const DeviceContext ctx = cpu();
  const auto h = ctx.enqueue_create_host_buffer<std::int32_t>(10);
  const auto view = h.create_sub_buffer<std::int32_t>(4, 3);
  anydev::DLPackTensor t = anydev::to_dlpack(view);
  EXPECT_EQ(t->data, h.unsafe_ptr() + 4);
  EXPECT_EQ(t->shape[0], 3);
}

TEST(DlpackExport, TensorOutlivesEveryAnydevHandle) {
  anydev::DLPackTensor t;
  {
    const DeviceContext ctx = cpu();
    const auto h = ctx.enqueue_create_host_buffer<std::uint8_t>(4096);
    h.enqueue_fill(std::uint8_t{0xab});
    anydev::make_ready(h);
    t = anydev::to_dlpack(h);
  }  // buffer and context released: the tensor still holds the memory
  auto* bytes = static_cast<std::uint8_t*>(t->data);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(bytes[i], 0xab) << i;
  std::memset(bytes, 1, 4096);  // still writable (ASan would catch a freed block)
}

TEST(DlpackExport, DeleterRunsOnAnotherThread) {
  std::vector<DLManagedTensor*> tensors;
  {
    const DeviceContext ctx = cpu();
    for (int i = 0; i < 8; ++i) {
      const auto h = ctx.enqueue_create_host_buffer<float>(1024);
      h.enqueue_fill(static_cast<float>(i));
      tensors.push_back(anydev::to_dlpack(h).release());
    }
  }
  std::vector<std::thread> threads;
  for (DLManagedTensor* t : tensors) {
    threads.emplace_back([t] {
      EXPECT_NE(t->dl_tensor.data, nullptr);
      t->deleter(t);
    });
  }
  for (std::thread& th : threads) th.join();
}

TEST(DlpackExport, MakeReadyWaitsOrRefusesAForeignStreamOnCpu) {
  const DeviceContext ctx = cpu();
  const auto h = ctx.enqueue_create_host_buffer<float>(1 << 16);
  h.enqueue_fill(2.0f);
  anydev::make_ready(h);  // waits for the fill
  EXPECT_EQ(h[(1 << 16) - 1], 2.0f);
  int stream = 0;
  const anydev_status_t s = anydev_buffer_make_ready(h.handle(), &stream);
  EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED);
  EXPECT_NE(error_of(s).find("cpu backend cannot wrap"), std::string::npos);
}

// A caller's integer is handed to a backend as a native stream only when it
// has a defined meaning there: 1 and 2 are CUDA's reserved streams (PoCL
// dereferenced queue 0x1 in clGetCommandQueueInfo), and nothing lives
// below address 4096. Runs on each backend that can wrap native streams.
TEST(DlpackExport, CallerIntegersWithoutAMeaningAreRefusedAsStreams) {
  int tested = 0;
  // ctest's dlpack.caller_integers_cuda_emulator names the emulator: then
  // cuda must be there.
  if (std::getenv("ANYDEV_CUDA_LIBRARY") != nullptr) {
    ASSERT_GT(DeviceContext::number_of_devices("cuda"), 0)
        << "ANYDEV_CUDA_LIBRARY is set but the cuda backend has no device";
  }
  for (const char* api : {"opencl", "cuda"}) {
    if (DeviceContext::number_of_devices(api) == 0) continue;
    SCOPED_TRACE(api);
    ++tested;
    const bool cuda = std::string(api) == "cuda";
    const DeviceContext ctx(0, api);
    const auto d = ctx.enqueue_create_buffer<float>(1024);
    d.enqueue_fill(1.0f);  // work the consumer would have to wait for
    for (const std::uintptr_t value : {1u, 2u, 3u, 100u, 4095u}) {
      SCOPED_TRACE(value);
      auto* native = reinterpret_cast<void*>(value);
      const bool meaningful = cuda && value <= 2;
      const anydev_status_t s = anydev_buffer_make_ready(d.handle(), native);
      EXPECT_EQ(s, meaningful ? ANYDEV_SUCCESS : ANYDEV_ERROR_INVALID_ARGUMENT) << error_of(s);
      if (!meaningful) {
        EXPECT_NE(error_of(s).find("anydev_buffer_make_ready"), std::string::npos);
        EXPECT_NE(error_of(s).find("native stream " + std::to_string(value)), std::string::npos)
            << error_of(s);
      }
      anydev_context_t wrapped = nullptr;
      const anydev_status_t w = anydev_context_wrap_native_stream(api, 0, native, &wrapped);
      EXPECT_EQ(w, meaningful ? ANYDEV_SUCCESS : ANYDEV_ERROR_INVALID_ARGUMENT) << error_of(w);
      if (w == ANYDEV_SUCCESS) {
        anydev_context_release(wrapped);
      } else {
        EXPECT_EQ(wrapped, nullptr);
        EXPECT_NE(error_of(w).find(api), std::string::npos) << error_of(w);
      }
    }
    ctx.synchronize();
  }
  if (tested == 0) {
    GTEST_SKIP() << "neither the opencl nor the cuda backend has a device here (cpu cannot wrap "
                    "native streams at all)";
  }
}

TEST(DlpackExport, TakenBufferCannotBeExported) {
  const DeviceContext ctx = cpu();
  auto h = ctx.enqueue_create_host_buffer<float>(4);
  const anydev_buffer_t handle = h.handle();  // h keeps its (now empty) handle after take_ptr
  float* p = std::move(h).take_ptr();
  DLManagedTensor* t = nullptr;
  const anydev_status_t s = anydev_buffer_to_dlpack(handle, 0, nullptr, &t);
  EXPECT_EQ(s, ANYDEV_ERROR_INVALID_STATE);
  EXPECT_NE(error_of(s).find("take_ptr"), std::string::npos);
  ctx.free(p);
}

}  // namespace

namespace {

// Native interop from C++: the cpu backend has no native objects, and says so.
TEST(NativeInterop, CpuBackendRefusesNativeStreamsClearly) {
  int not_a_stream = 0;
  try {
    anydev::DeviceContext::wrap_native_stream("cpu", 0, &not_a_stream);
    FAIL() << "expected anydev::Error";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), anydev::Status::unsupported);
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos) << e.what();
  }
  const anydev::DeviceContext ctx(0, "cpu");
  EXPECT_THROW(ctx.stream().native_handle(), anydev::Error);
}

}  // namespace
