// SPDX-License-Identifier: Apache-2.0
// DLPack on every backend (EveryBackend/*/<backend>): device and host buffers
// export with the backend's DLPack device types (kDLCUDA/kDLCUDAHost,
// kDLROCM/kDLROCMHost, kDLOneAPI, kDLOpenCL, kDLCPU), unversioned and as
// DLPack 1.x versioned tensors, and an exported tensor imports back as the
// same memory. cpu runs in the plain dlpack.* entries; cuda, hip and
// level_zero on their emulators (dlpack.every_backend_*_emulator entries in
// tests/emulators/*/). A backend unavailable here is skipped with its reason
// (the emulator entries fail on a skip).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "anydev/dlpack.hpp"

namespace {

using anydev::DeviceContext;

// DLPack 0.7 added kDLOneAPI (14); the dlpack.h in use may be older.
constexpr int kOneApi = 14;

std::string error_of(anydev_status_t status) {
  return status == ANYDEV_SUCCESS ? "" : anydev_last_error_message();
}

std::string backend_reason(const std::string& name) {
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

// A backend and the DLPack device types of its memory (docs/dlpack.md).
struct BackendTypes {
  const char* name;
  int device_type;  // device memory
  int host_type;    // host (pinned) memory
  bool imports_device_memory;
};

constexpr BackendTypes kBackends[] = {
    {"cpu", kDLCPU, kDLCPU, true},
    {"opencl", kDLOpenCL, kDLCPU, false},  // cl_mem: anydev cannot adopt one
    {"cuda", kDLCUDA, kDLCUDAHost, true},
    {"hip", kDLROCM, kDLROCMHost, true},
    {"level_zero", kOneApi, kDLCPU, true},
};

// How test output shows a parameter.
void PrintTo(const BackendTypes& b, std::ostream* out) { *out << b.name; }

class EveryBackendDlpack : public ::testing::TestWithParam<BackendTypes> {
 protected:
  void SetUp() override {
    if (const std::string why = backend_reason(GetParam().name); !why.empty()) {
      GTEST_SKIP() << GetParam().name << " is unavailable here: " << why;
    }
    ctx_.emplace(0, GetParam().name);
  }

  // A buffer of `count` int32 filled with `value` (ordered on the stream).
  anydev_buffer_t filled(anydev_memory_kind_t kind, std::size_t count, std::int32_t value) {
    anydev_buffer_t buf = nullptr;
    EXPECT_EQ(anydev_buffer_create(ctx_->handle(), kind, ANYDEV_DTYPE_INT32, count, &buf),
              ANYDEV_SUCCESS)
        << anydev_last_error_message();
    if (buf != nullptr) {
      EXPECT_EQ(anydev_enqueue_fill(nullptr, buf, &value, sizeof value), ANYDEV_SUCCESS)
          << anydev_last_error_message();
    }
    return buf;
  }

  // The buffer's contents, read through anydev.
  std::vector<std::int32_t> read(anydev_buffer_t buf, std::size_t count) {
    std::vector<std::int32_t> out(count, -1);
    EXPECT_EQ(anydev_enqueue_copy_to_host(nullptr, out.data(), count * 4, buf), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    ctx_->synchronize();
    return out;
  }

  int expected_type(anydev_memory_kind_t kind) const {
    return kind == ANYDEV_MEMORY_HOST ? GetParam().host_type : GetParam().device_type;
  }

  bool imports(anydev_memory_kind_t kind) const {
    return kind == ANYDEV_MEMORY_HOST || GetParam().imports_device_memory;
  }

  std::optional<DeviceContext> ctx_;
};

constexpr anydev_memory_kind_t kKinds[] = {ANYDEV_MEMORY_DEVICE, ANYDEV_MEMORY_HOST};

const char* kind_name(anydev_memory_kind_t kind) {
  return kind == ANYDEV_MEMORY_HOST ? "host" : "device";
}

TEST_P(EveryBackendDlpack, BuffersExportWithTheBackendsDeviceTypes) {
  for (const anydev_memory_kind_t kind : kKinds) {
    SCOPED_TRACE(kind_name(kind));
    anydev_buffer_t buf = filled(kind, 12, 0x11223344);
    ASSERT_NE(buf, nullptr);
    int type = -1;
    int id = -1;
    ASSERT_EQ(anydev_buffer_dlpack_device(buf, &type, &id), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    EXPECT_EQ(type, expected_type(kind));
    EXPECT_EQ(id, 0);
    const std::int64_t shape[2] = {3, 4};
    DLManagedTensor* t = nullptr;
    ASSERT_EQ(anydev_buffer_to_dlpack(buf, 2, shape, &t), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    EXPECT_EQ(t->dl_tensor.device.device_type, expected_type(kind));
    EXPECT_EQ(t->dl_tensor.device.device_id, 0);
    EXPECT_NE(t->dl_tensor.data, nullptr);
    EXPECT_EQ(t->dl_tensor.ndim, 2);
    EXPECT_EQ(t->dl_tensor.shape[0], 3);
    EXPECT_EQ(t->dl_tensor.shape[1], 4);
    EXPECT_EQ(t->dl_tensor.strides[0], 4);
    EXPECT_EQ(t->dl_tensor.dtype.code, kDLInt);
    EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
    if (kind == ANYDEV_MEMORY_HOST) {
      // Host memory is a plain host pointer on every backend: readable once
      // the fill is done.
      ASSERT_EQ(anydev_buffer_make_ready(buf, nullptr), ANYDEV_SUCCESS);
      const auto* words = static_cast<const std::int32_t*>(t->dl_tensor.data);
      EXPECT_EQ(words[0], 0x11223344);
      EXPECT_EQ(words[11], 0x11223344);
    }
    t->deleter(t);
    EXPECT_EQ(anydev_buffer_release(buf), ANYDEV_SUCCESS);
  }
}

TEST_P(EveryBackendDlpack, ExportedTensorsImportAsTheSameMemory) {
  for (const anydev_memory_kind_t kind : kKinds) {
    SCOPED_TRACE(kind_name(kind));
    anydev_buffer_t buf = filled(kind, 64, 5);
    ASSERT_NE(buf, nullptr);
    DLManagedTensor* t = nullptr;
    ASSERT_EQ(anydev_buffer_to_dlpack(buf, 0, nullptr, &t), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    anydev_buffer_t back = nullptr;
    const anydev_status_t s = anydev_buffer_from_dlpack(ctx_->handle(), t, &back);
    if (!imports(kind)) {
      EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED) << error_of(s);
      t->deleter(t);  // a refused tensor is still the caller's
      EXPECT_EQ(anydev_buffer_release(buf), ANYDEV_SUCCESS);
      continue;
    }
    ASSERT_EQ(s, ANYDEV_SUCCESS) << error_of(s);
    anydev_buffer_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(anydev_buffer_get_info(back, &info), ANYDEV_SUCCESS);
    EXPECT_EQ(info.count, 64u);
    EXPECT_EQ(info.dtype, ANYDEV_DTYPE_INT32);
    // Written through the import, read through the exported buffer.
    const std::int32_t nine = 9;
    ASSERT_EQ(anydev_enqueue_fill(nullptr, back, &nine, sizeof nine), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    const std::vector<std::int32_t> seen = read(buf, 64);
    EXPECT_EQ(seen, std::vector<std::int32_t>(64, 9));
    EXPECT_EQ(anydev_buffer_release(back), ANYDEV_SUCCESS);  // runs the tensor's deleter
    EXPECT_EQ(anydev_buffer_release(buf), ANYDEV_SUCCESS);
  }
}

TEST_P(EveryBackendDlpack, VersionedExportAndImport) {
  for (const anydev_memory_kind_t kind : kKinds) {
    SCOPED_TRACE(kind_name(kind));
    anydev_buffer_t buf = filled(kind, 16, 21);
    ASSERT_NE(buf, nullptr);
    anydev_dlpack_managed_tensor_versioned_t* t = nullptr;
    ASSERT_EQ(anydev_buffer_to_dlpack_versioned(buf, 0, nullptr, ANYDEV_DLPACK_FLAG_READ_ONLY, &t),
              ANYDEV_SUCCESS)
        << anydev_last_error_message();
    EXPECT_EQ(t->version.major, 1u);
    EXPECT_EQ(t->version.minor, 0u);
    EXPECT_EQ(t->flags, std::uint64_t{ANYDEV_DLPACK_FLAG_READ_ONLY});
    EXPECT_EQ(t->dl_tensor.device.device_type, expected_type(kind));
    EXPECT_EQ(t->dl_tensor.device.device_id, 0);
    EXPECT_EQ(t->dl_tensor.shape[0], 16);
    t->deleter(t);

    ASSERT_EQ(anydev_buffer_to_dlpack_versioned(buf, 0, nullptr, 0, &t), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    anydev_buffer_t back = nullptr;
    const anydev_status_t s = anydev_buffer_from_dlpack_versioned(ctx_->handle(), t, &back);
    if (!imports(kind)) {
      EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED) << error_of(s);
      t->deleter(t);
      EXPECT_EQ(anydev_buffer_release(buf), ANYDEV_SUCCESS);
      continue;
    }
    ASSERT_EQ(s, ANYDEV_SUCCESS) << error_of(s);
    EXPECT_EQ(read(back, 16), std::vector<std::int32_t>(16, 21));
    EXPECT_EQ(anydev_buffer_release(back), ANYDEV_SUCCESS);
    EXPECT_EQ(anydev_buffer_release(buf), ANYDEV_SUCCESS);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, EveryBackendDlpack, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<BackendTypes>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
