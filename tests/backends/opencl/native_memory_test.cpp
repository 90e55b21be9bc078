// SPDX-License-Identifier: Apache-2.0
// OpenCL device buffers handed to OpenCL code, through the core: the cl_mem
// of anydev_buffer_native_handle at anydev_buffer_info_t.native_offset_bytes
// (and DLPack's data + byte_offset) is the buffer's first byte, whether the
// caching pool carved the buffer out of a shared cl_mem (small buffers,
// ANYDEV_POOL_CARVE unset) or gave it a cl_mem of its own (ANYDEV_POOL_CARVE=0).
// The bytes are read back with the test's own clEnqueueReadBuffer.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/anydev_dlpack.h"

namespace {

constexpr std::size_t kBytes = 200;  // small: a carved block where carving is on

bool carving_expected() {
  const char* carve = std::getenv("ANYDEV_POOL_CARVE");
  const char* pool = std::getenv("ANYDEV_POOL");
  return (carve == nullptr || std::string(carve) != "0") &&
         (pool == nullptr || std::string(pool) != "0");
}

class OpenclNativeMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (anydev_context_create("opencl", 0, &ctx_) != ANYDEV_SUCCESS) {
      GTEST_SKIP() << "no opencl device: " << anydev_last_error_message();
    }
    void* library = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
    read_ = reinterpret_cast<decltype(&clEnqueueReadBuffer)>(dlsym(library, "clEnqueueReadBuffer"));
    ASSERT_NE(read_, nullptr);
    anydev_stream_t stream = nullptr;
    ASSERT_EQ(anydev_context_stream(ctx_, &stream), ANYDEV_SUCCESS);
    void* queue = nullptr;
    const anydev_status_t s = anydev_stream_native_handle(stream, &queue);
    anydev_stream_release(stream);  // the context keeps its stream
    ASSERT_EQ(s, ANYDEV_SUCCESS) << anydev_last_error_message();
    queue_ = static_cast<cl_command_queue>(queue);
  }
  void TearDown() override {
    for (anydev_buffer_t b : buffers_) anydev_buffer_release(b);
    if (ctx_ != nullptr) anydev_context_release(ctx_);
  }

  anydev_buffer_t filled(std::uint8_t seed) {
    anydev_buffer_t b = nullptr;
    EXPECT_EQ(anydev_buffer_create(ctx_, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes, &b),
              ANYDEV_SUCCESS)
        << anydev_last_error_message();
    std::vector<std::uint8_t> bytes(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) bytes[i] = static_cast<std::uint8_t>(seed + i);
    EXPECT_EQ(anydev_enqueue_copy_from_host(nullptr, b, bytes.data(), kBytes), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    EXPECT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS);  // `bytes` is read until then
    buffers_.push_back(b);
    return b;
  }

  // `count` bytes at the buffer's native object and offset, read by OpenCL.
  std::vector<std::uint8_t> read_native(anydev_buffer_t b, std::size_t count, cl_mem* mem_out,
                                        std::size_t* offset_out) {
    void* mem = nullptr;
    EXPECT_EQ(anydev_buffer_native_handle(b, &mem), ANYDEV_SUCCESS) << anydev_last_error_message();
    anydev_buffer_info_t info{};
    info.struct_size = sizeof info;
    EXPECT_EQ(anydev_buffer_get_info(b, &info), ANYDEV_SUCCESS);
    EXPECT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS);
    std::vector<std::uint8_t> out(count);
    EXPECT_EQ(read_(queue_, static_cast<cl_mem>(mem), CL_TRUE, info.native_offset_bytes, count,
                    out.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    *mem_out = static_cast<cl_mem>(mem);
    *offset_out = info.native_offset_bytes;
    return out;
  }

  anydev_context_t ctx_ = nullptr;
  cl_command_queue queue_ = nullptr;
  decltype(&clEnqueueReadBuffer) read_ = nullptr;
  std::vector<anydev_buffer_t> buffers_;
};

TEST_F(OpenclNativeMemory, TheNativeObjectAtTheNativeOffsetHoldsTheBuffersBytes) {
  std::set<cl_mem> objects;
  for (int i = 0; i < 16; ++i) {
    anydev_buffer_t b = filled(static_cast<std::uint8_t>(7 * i));
    cl_mem mem = nullptr;
    std::size_t offset = 0;
    const std::vector<std::uint8_t> seen = read_native(b, kBytes, &mem, &offset);
    for (std::size_t k = 0; k < kBytes; ++k) {
      ASSERT_EQ(seen[k], static_cast<std::uint8_t>(7 * i + k)) << "buffer " << i << " byte " << k;
    }
    anydev_buffer_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(anydev_buffer_get_info(b, &info), ANYDEV_SUCCESS);
    EXPECT_EQ(info.offset_bytes, 0u) << "a buffer starts its own allocation";
    objects.insert(mem);
  }
  if (carving_expected()) {
    EXPECT_EQ(objects.size(), 1u) << "16 small buffers carved out of one cl_mem";
  } else {
    EXPECT_EQ(objects.size(), 16u) << "without carving, a cl_mem each";
  }
}

TEST_F(OpenclNativeMemory, ASubBufferAddsItsOffsetToTheNativeOffset) {
  filled(1);  // so that the next block is not the first of its segment
  anydev_buffer_t b = filled(40);
  anydev_buffer_t view = nullptr;
  ASSERT_EQ(anydev_buffer_create_sub_buffer(b, ANYDEV_DTYPE_UINT8, 24, 100, &view), ANYDEV_SUCCESS);
  buffers_.push_back(view);
  cl_mem parent_mem = nullptr, view_mem = nullptr;
  std::size_t parent_offset = 0, view_offset = 0;
  read_native(b, kBytes, &parent_mem, &parent_offset);
  const std::vector<std::uint8_t> seen = read_native(view, 100, &view_mem, &view_offset);
  EXPECT_EQ(view_mem, parent_mem);
  EXPECT_EQ(view_offset, parent_offset + 24);
  for (std::size_t k = 0; k < 100; ++k) {
    ASSERT_EQ(seen[k], static_cast<std::uint8_t>(40 + 24 + k)) << "byte " << k;
  }
  anydev_buffer_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(anydev_buffer_get_info(view, &info), ANYDEV_SUCCESS);
  EXPECT_EQ(info.offset_bytes, 24u) << "offset_bytes stays the view's offset in its allocation";
}

TEST_F(OpenclNativeMemory, DlpackExportsTheNativeObjectAndOffset) {
  filled(2);
  anydev_buffer_t b = filled(90);
  DLManagedTensor* t = nullptr;
  ASSERT_EQ(anydev_buffer_to_dlpack(b, 0, nullptr, &t), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  cl_mem mem = nullptr;
  std::size_t offset = 0;
  read_native(b, kBytes, &mem, &offset);
  EXPECT_EQ(t->dl_tensor.data, static_cast<void*>(mem));
  EXPECT_EQ(t->dl_tensor.byte_offset, offset);
  t->deleter(t);
}

TEST_F(OpenclNativeMemory, AnOlderInfoStructGetsTheFieldsItHas) {
  anydev_buffer_t b = filled(3);
  anydev_buffer_info_t info{};
  info.native_offset_bytes = 12345;
  info.struct_size = offsetof(anydev_buffer_info_t, native_offset_bytes);
  ASSERT_EQ(anydev_buffer_get_info(b, &info), ANYDEV_SUCCESS) << anydev_last_error_message();
  EXPECT_EQ(info.size_bytes, kBytes);
  EXPECT_EQ(info.native_offset_bytes, 12345u) << "written past the caller's struct";
  info.struct_size = offsetof(anydev_buffer_info_t, native_offset_bytes) - 1;
  EXPECT_EQ(anydev_buffer_get_info(b, &info), ANYDEV_ERROR_INVALID_ARGUMENT);
}

}  // namespace
