// SPDX-License-Identifier: Apache-2.0
// Fuzz target: DLPack import of producer tensors with arbitrary ndim, shapes,
// strides, byte offsets, dtypes and devices, unversioned
// (anydev_buffer_from_dlpack) and, when the byte after the tensor's fields
// is odd, DLPack 1.x versioned (anydev_buffer_from_dlpack_versioned) with an
// arbitrary version, flags and kDLBool; inputs that end before that byte
// (every seed older than the versioned import) stay unversioned.
// The memory is never touched (an importer cannot know how much the producer
// has), so the invariants are about the arithmetic and the ownership:
//  - success: the element count is the product of the shape (which must not
//    overflow), the element size is bits/8, the address is data +
//    byte_offset, and exporting it again gives a 1-d tensor of that count;
//  - versioned: only major version 1 and flags without READ_ONLY or an
//    unknown bit import; a versioned export of the import is version 1.0;
//  - ownership: the tensor lives on the heap and its deleter deletes it, so
//    AddressSanitizer reports a deleter called twice, or called on a failed
//    import (which the harness then deletes itself), and LeakSanitizer one
//    never called.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/anydev_dlpack.h"

namespace {

[[noreturn]] void Fail(const char* what, int line) {
  std::fprintf(stderr, "dlpack_import_fuzz: %s (line %d): %s\n", what, line,
               anydev_last_error_message());
  std::abort();
}
#define REQUIRE(c) \
  if (!(c)) Fail(#c, __LINE__)

struct Input {
  const std::uint8_t* data;
  std::size_t size;
  std::uint8_t byte() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
  std::int64_t int64() {
    const std::uint8_t kind = byte();
    std::uint64_t raw = 0;
    for (int i = 0; i < 8; ++i) raw = raw << 8 | byte();
    switch (kind % 4) {
      case 0:
        return static_cast<std::int64_t>(raw % 8);  // small extents
      case 1:
        return -static_cast<std::int64_t>(raw % 4);
      default:
        return static_cast<std::int64_t>(raw);
    }
  }
};

// A producer's tensor (unversioned or versioned) and the arrays it points to.
// Owned by whoever holds the tensor: the harness, or anydev after a
// successful import (the deleter deletes it). Not thread-safe.
struct Producer {
  DLManagedTensor tensor{};
  anydev_dlpack_managed_tensor_versioned_t versioned{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
};

alignas(64) unsigned char g_arena[4096];

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  static anydev_context_t ctx = [] {
    anydev_context_t created = nullptr;
    REQUIRE(anydev_context_create("cpu", 0, &created) == ANYDEV_SUCCESS);
    return created;
  }();
  Input in{bytes, size};
  const int ndim = in.byte() % 40;
  auto* producer = new Producer;
  std::vector<std::int64_t>& shape = producer->shape;
  shape.resize(static_cast<std::size_t>(ndim));
  for (auto& extent : shape) extent = in.int64();
  std::vector<std::int64_t>& strides = producer->strides;
  strides.resize(static_cast<std::size_t>(ndim));
  const bool with_strides = in.byte() % 2 == 1;
  for (auto& stride : strides) stride = in.int64();
  static const std::uint8_t kCodes[] = {kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, 3, 9};
  static const std::uint8_t kBits[] = {8, 16, 32, 64, 128, 1, 7, 0};
  static const int kDevices[] = {kDLCPU, kDLCPU, kDLCUDAHost, kDLCUDA, kDLOpenCL, 0, 99};

  DLManagedTensor& tensor = producer->tensor;
  tensor.manager_ctx = producer;
  tensor.dl_tensor.data = g_arena + in.byte() % 64;
  // Stored as the int a C producer writes: 99 is no DLDeviceType value.
  const int device_type = kDevices[in.byte() % 7];
  static_assert(sizeof(tensor.dl_tensor.device.device_type) == sizeof(int));
  std::memcpy(&tensor.dl_tensor.device.device_type, &device_type, sizeof(int));
  tensor.dl_tensor.device.device_id = in.byte() % 3;
  tensor.dl_tensor.ndim = ndim;
  tensor.dl_tensor.dtype.code = kCodes[in.byte() % 7];
  tensor.dl_tensor.dtype.bits = kBits[in.byte() % 8];
  tensor.dl_tensor.dtype.lanes = static_cast<std::uint16_t>(in.byte() % 8 == 0 ? 2 : 1);
  tensor.dl_tensor.shape = ndim == 0 && in.byte() % 2 ? nullptr : shape.data();
  tensor.dl_tensor.strides = with_strides ? strides.data() : nullptr;
  tensor.dl_tensor.byte_offset = static_cast<std::uint64_t>(in.int64());
  tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Producer*>(self->manager_ctx); };

  // The versioned variant: the byte after the fields above (0 when the
  // input has ended: unversioned), then the version, flags and kDLBool.
  const std::uint8_t mode = in.byte();
  const bool versioned = mode % 2 == 1;
  anydev_dlpack_managed_tensor_versioned_t& v = producer->versioned;
  if (versioned) {
    static const std::uint32_t kMajors[] = {1, 1, 1, 0, 2, 0xFFFFFFFFu};
    static const std::uint64_t kFlags[] = {
        0,
        ANYDEV_DLPACK_FLAG_IS_COPIED,
        ANYDEV_DLPACK_FLAG_READ_ONLY,
        ANYDEV_DLPACK_FLAG_READ_ONLY | ANYDEV_DLPACK_FLAG_IS_COPIED,
        std::uint64_t{1} << 2,
        std::uint64_t{1} << 63};
    v.version.major = kMajors[in.byte() % 6];
    v.version.minor = in.byte();
    v.flags = kFlags[in.byte() % 6];
    if (mode & 2) tensor.dl_tensor.dtype.code = 6;  // kDLBool (DLPack 0.8)
    v.manager_ctx = producer;
    v.dl_tensor = tensor.dl_tensor;
    v.deleter = [](anydev_dlpack_managed_tensor_versioned_t* self) {
      delete static_cast<Producer*>(self->manager_ctx);
    };
  }

  anydev_buffer_t buf = nullptr;
  const anydev_status_t s = versioned ? anydev_buffer_from_dlpack_versioned(ctx, &v, &buf)
                                      : anydev_buffer_from_dlpack(ctx, &tensor, &buf);
  if (s != ANYDEV_SUCCESS) {
    REQUIRE(buf == nullptr);
    delete producer;  // still the caller's
    return 0;
  }
  if (versioned) {
    REQUIRE(v.version.major == 1);
    REQUIRE((v.flags & ~ANYDEV_DLPACK_FLAG_IS_COPIED) == 0);
  }
  // The product of the shape, without overflow.
  // (An extent of 0 makes the count 0 whatever the other extents are.)
  __extension__ unsigned __int128 count = 1;
  bool empty = false;
  for (std::int64_t extent : shape) {
    REQUIRE(extent >= 0);
    empty = empty || extent == 0;
  }
  for (std::int64_t extent : shape) {
    if (empty) break;
    count *= static_cast<std::uint64_t>(extent);
    REQUIRE(count <= SIZE_MAX);
  }
  if (empty) count = 0;
  anydev_buffer_info_t info{};
  info.struct_size = sizeof(info);
  REQUIRE(anydev_buffer_get_info(buf, &info) == ANYDEV_SUCCESS);
  REQUIRE(info.count == count);
  REQUIRE(info.dtype == ANYDEV_DTYPE_BOOL
              ? tensor.dl_tensor.dtype.bits == 8
              : anydev_dtype_size(info.dtype) * 8 == tensor.dl_tensor.dtype.bits);
  REQUIRE(tensor.dl_tensor.dtype.lanes == 1);
  if (info.count > 0) {
    REQUIRE(static_cast<unsigned char*>(info.address) ==
            static_cast<unsigned char*>(tensor.dl_tensor.data) + tensor.dl_tensor.byte_offset);
  }
  if (info.dtype != ANYDEV_DTYPE_BOOL) {
    DLManagedTensor* exported = nullptr;
    REQUIRE(anydev_buffer_to_dlpack(buf, 1, nullptr, &exported) == ANYDEV_SUCCESS);
    REQUIRE(exported->dl_tensor.ndim == 1);
    REQUIRE(static_cast<std::size_t>(exported->dl_tensor.shape[0]) == info.count);
    exported->deleter(exported);
  }
  if (versioned) {
    anydev_dlpack_managed_tensor_versioned_t* again = nullptr;
    REQUIRE(anydev_buffer_to_dlpack_versioned(buf, 1, nullptr, 0, &again) == ANYDEV_SUCCESS);
    REQUIRE(again->version.major == 1 && again->version.minor == 0 && again->flags == 0);
    REQUIRE(static_cast<std::size_t>(again->dl_tensor.shape[0]) == info.count);
    again->deleter(again);
  }
  const std::size_t elements = info.count;
  REQUIRE(anydev_buffer_release(buf) == ANYDEV_SUCCESS);  // the deleter runs later
  (void)elements;
  return 0;
}
