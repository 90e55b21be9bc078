// SPDX-License-Identifier: Apache-2.0
// DLPack 1.x: the versioned tensor (anydev_dlpack_managed_tensor_versioned_t)
// through the C ABI and the C++ layer: version and flags on export, bool as
// kDLBool, the import's version and flag checks (a refused tensor is not
// deleted), lifetimes, and the C declarations compiled as C
// (dlpack_versioned_c.c).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "anydev/dlpack.hpp"

extern "C" int anydev_test_versioned_round_trip_in_c(char* message, size_t capacity);

namespace {

using anydev::DeviceContext;
using anydev::HostBuffer;

DeviceContext cpu() { return DeviceContext(0, "cpu"); }

std::string error_of(anydev_status_t status) {
  return status == ANYDEV_SUCCESS ? "" : anydev_last_error_message();
}

// A DLPack 1.x producer: owns host memory and counts deleter calls (the
// cpu backend runs the deleter on release of the last reference, possibly
// on its own thread once the work on it is done: tests synchronize first).
struct VersionedProducer {
  std::vector<std::int32_t> data;
  std::int64_t shape[1];
  anydev_dlpack_managed_tensor_versioned_t managed{};
  std::atomic<int> deleted{0};

  explicit VersionedProducer(std::size_t n) : data(n, 0), shape{static_cast<std::int64_t>(n)} {
    managed.version = {1, 0};
    managed.manager_ctx = this;
    managed.deleter = [](anydev_dlpack_managed_tensor_versioned_t* self) {
      static_cast<VersionedProducer*>(self->manager_ctx)->deleted.fetch_add(1);
    };
    managed.flags = 0;
    DLTensor& t = managed.dl_tensor;
    t.data = data.data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = 1;
    t.dtype = DLDataType{kDLInt, 32, 1};
    t.shape = shape;
    t.strides = nullptr;
    t.byte_offset = 0;
  }
};

// Releases the buffer and waits until the producer's deleter ran (the
// release of imported memory may finish on anydev's reclaimer thread).
void release_and_wait(anydev_buffer_t buf, const VersionedProducer& producer) {
  anydev_buffer_release(buf);
  for (int i = 0; i < 60000 && producer.deleted.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(DlpackVersioned, ExportIsVersion1WithTheAskedFlags) {
  const DeviceContext ctx = cpu();
  const HostBuffer<float> h = ctx.enqueue_create_host_buffer<float>(12);
  h.enqueue_fill(2.5f);
  anydev::make_ready(h);
  for (const std::uint64_t flags :
       {std::uint64_t{0}, std::uint64_t{ANYDEV_DLPACK_FLAG_READ_ONLY}}) {
    anydev::DLPackVersionedTensor t = anydev::to_dlpack_versioned(h, {3, 4}, flags);
    ASSERT_NE(t.get(), nullptr);
    EXPECT_EQ(t.get()->version.major, 1u);
    EXPECT_EQ(t.get()->version.minor, 0u);
    EXPECT_EQ(t.get()->flags, flags);
    EXPECT_EQ(t->device.device_type, kDLCPU);
    EXPECT_EQ(t->ndim, 2);
    EXPECT_EQ(t->shape[0], 3);
    EXPECT_EQ(t->shape[1], 4);
    EXPECT_EQ(t->strides[0], 4);
    EXPECT_EQ(t->strides[1], 1);
    EXPECT_EQ(t->dtype.code, kDLFloat);
    EXPECT_EQ(t->dtype.bits, 32);
    EXPECT_EQ(t->data, h.unsafe_ptr());
    EXPECT_EQ(static_cast<float*>(t->data)[11], 2.5f);
  }
}

TEST(DlpackVersioned, ExportHoldsTheBufferUntilTheDeleter) {
  const DeviceContext ctx = cpu();
  anydev_buffer_t buf = nullptr;
  ASSERT_EQ(anydev_buffer_create(ctx.handle(), ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_INT32, 8, &buf),
            ANYDEV_SUCCESS);
  anydev_dlpack_managed_tensor_versioned_t* t = nullptr;
  ASSERT_EQ(anydev_buffer_to_dlpack_versioned(buf, 0, nullptr, 0, &t), ANYDEV_SUCCESS)
      << error_of(ANYDEV_ERROR_INTERNAL);
  void* taken = nullptr;
  // The tensor holds a reference: the memory cannot change hands.
  EXPECT_EQ(anydev_buffer_take_ptr(buf, &taken), ANYDEV_ERROR_INVALID_STATE);
  t->deleter(t);
  ASSERT_EQ(anydev_buffer_take_ptr(buf, &taken), ANYDEV_SUCCESS) << error_of(ANYDEV_ERROR_INTERNAL);
  EXPECT_EQ(anydev_context_free(ctx.handle(), taken), ANYDEV_SUCCESS);
  anydev_buffer_release(buf);
}

TEST(DlpackVersioned, BoolIsKDLBoolInTheVersionedTensorOnly) {
  const DeviceContext ctx = cpu();
  const auto flags = ctx.enqueue_create_host_buffer<bool>(5);
  flags.enqueue_fill(true);
  anydev::make_ready(flags);
  anydev::DLPackVersionedTensor t = anydev::to_dlpack_versioned(flags);
  EXPECT_EQ(t->dtype.code, ANYDEV_DLPACK_CODE_BOOL);
  EXPECT_EQ(t->dtype.bits, 8);
  EXPECT_EQ(t->dtype.lanes, 1);
  // Imported back: a bool buffer over the same memory.
  const auto back = anydev::from_dlpack<bool, anydev::HostBuffer>(std::move(t), &ctx);
  EXPECT_EQ(back.unsafe_ptr(), flags.unsafe_ptr());
  EXPECT_TRUE(back[4]);
  // The unversioned (0.6) export has no bool code and says what to do.
  DLManagedTensor* old = nullptr;
  const anydev_status_t s = anydev_buffer_to_dlpack(flags.handle(), 0, nullptr, &old);
  EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED);
  EXPECT_NE(error_of(s).find("anydev_buffer_to_dlpack_versioned"), std::string::npos);
  EXPECT_EQ(old, nullptr);
}

TEST(DlpackVersioned, UnversionedImportTakesKDLBool) {
  std::vector<std::uint8_t> bytes = {1, 0, 1};
  std::int64_t shape[1] = {3};
  int deleted = 0;
  DLManagedTensor managed{};
  managed.dl_tensor = DLTensor{bytes.data(),
                               DLDevice{kDLCPU, 0},
                               1,
                               DLDataType{ANYDEV_DLPACK_CODE_BOOL, 8, 1},
                               shape,
                               nullptr,
                               0};
  managed.manager_ctx = &deleted;
  managed.deleter = [](DLManagedTensor* self) { ++*static_cast<int*>(self->manager_ctx); };
  const DeviceContext ctx = cpu();
  {
    const auto b = anydev::from_dlpack<bool, anydev::HostBuffer>(&managed, &ctx);
    EXPECT_EQ(b.size(), 3u);
    EXPECT_TRUE(b[0]);
    EXPECT_FALSE(b[1]);
  }
  ctx.synchronize();
}

TEST(DlpackVersioned, BadExportFlagsAreRejectedWithTheirValue) {
  const DeviceContext ctx = cpu();
  const auto h = ctx.enqueue_create_host_buffer<float>(4);
  for (const std::uint64_t flags :
       {std::uint64_t{ANYDEV_DLPACK_FLAG_IS_COPIED}, std::uint64_t{8}}) {
    anydev_dlpack_managed_tensor_versioned_t* t = nullptr;
    const anydev_status_t s = anydev_buffer_to_dlpack_versioned(h.handle(), 0, nullptr, flags, &t);
    EXPECT_EQ(s, ANYDEV_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(error_of(s).find("anydev_buffer_to_dlpack_versioned: flags 0x"), std::string::npos)
        << error_of(s);
    EXPECT_EQ(t, nullptr);
  }
  anydev_dlpack_managed_tensor_versioned_t* t = nullptr;
  EXPECT_EQ(anydev_buffer_to_dlpack_versioned(h.handle(), 2, nullptr, 0, &t),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(anydev_buffer_to_dlpack_versioned(h.handle(), 0, nullptr, 0, nullptr),
            ANYDEV_ERROR_INVALID_ARGUMENT);
}

TEST(DlpackVersioned, ImportIsZeroCopyAndDeletesOnce) {
  for (const std::uint64_t flags :
       {std::uint64_t{0}, std::uint64_t{ANYDEV_DLPACK_FLAG_IS_COPIED}}) {
    for (const std::uint32_t minor : {0u, 3u}) {
      VersionedProducer producer(16);
      producer.managed.flags = flags;
      producer.managed.version.minor = minor;
      producer.data[7] = 77;
      anydev_buffer_t buf = nullptr;
      ASSERT_EQ(anydev_buffer_from_dlpack_versioned(nullptr, &producer.managed, &buf),
                ANYDEV_SUCCESS)
          << error_of(ANYDEV_ERROR_INTERNAL);
      anydev_buffer_info_t info{};
      info.struct_size = sizeof(info);
      ASSERT_EQ(anydev_buffer_get_info(buf, &info), ANYDEV_SUCCESS);
      EXPECT_EQ(info.address, producer.data.data());
      EXPECT_EQ(info.count, 16u);
      EXPECT_EQ(info.dtype, ANYDEV_DTYPE_INT32);
      EXPECT_EQ(producer.deleted.load(), 0);
      release_and_wait(buf, producer);
      EXPECT_EQ(producer.deleted.load(), 1) << "flags " << flags << " minor " << minor;
    }
  }
}

TEST(DlpackVersioned, ImportRefusesVersionsAndFlagsItCannotHonourWithoutDeleting) {
  struct Case {
    const char* name;
    void (*spoil)(anydev_dlpack_managed_tensor_versioned_t&);
    const char* message;
  };
  const Case cases[] = {
      {"major 0",
       [](anydev_dlpack_managed_tensor_versioned_t& t) {
         t.version = {0, 8};
       },
       "DLPack version is 0.8"},
      {"major 2",
       [](anydev_dlpack_managed_tensor_versioned_t& t) {
         t.version = {2, 0};
       },
       "DLPack version is 2.0"},
      {"read-only",
       [](anydev_dlpack_managed_tensor_versioned_t& t) { t.flags = ANYDEV_DLPACK_FLAG_READ_ONLY; },
       "is read-only (flags 0x1"},
      {"unknown bit", [](anydev_dlpack_managed_tensor_versioned_t& t) { t.flags = 0x4; },
       "bits DLPack 1.0 does not define (0x4)"},
  };
  for (const Case& c : cases) {
    VersionedProducer producer(4);
    c.spoil(producer.managed);
    anydev_buffer_t out = nullptr;
    const anydev_status_t s = anydev_buffer_from_dlpack_versioned(nullptr, &producer.managed, &out);
    EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED) << c.name;
    EXPECT_NE(error_of(s).find(c.message), std::string::npos) << c.name << ": " << error_of(s);
    EXPECT_EQ(out, nullptr) << c.name;
    EXPECT_EQ(producer.deleted.load(), 0) << c.name;
  }
  // The checks of the unversioned import apply too (here: the dtype).
  VersionedProducer producer(4);
  producer.managed.dl_tensor.dtype = DLDataType{kDLUInt, 7, 1};
  anydev_buffer_t out = nullptr;
  const anydev_status_t s = anydev_buffer_from_dlpack_versioned(nullptr, &producer.managed, &out);
  EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED);
  EXPECT_NE(error_of(s).find("anydev_buffer_from_dlpack_versioned: the tensor's dtype (uint of 7"),
            std::string::npos)
      << error_of(s);
  EXPECT_EQ(producer.deleted.load(), 0);
  EXPECT_EQ(anydev_buffer_from_dlpack_versioned(nullptr, nullptr, &out),
            ANYDEV_ERROR_INVALID_ARGUMENT);
}

TEST(DlpackVersioned, CDeclarationsWorkFromC) {
  char message[512] = "";
  EXPECT_EQ(anydev_test_versioned_round_trip_in_c(message, sizeof(message)), 0) << message;
}

}  // namespace
