// SPDX-License-Identifier: Apache-2.0
// Device memory (hipMalloc, stream-ordered hipMallocAsync from the default
// pool or hipMallocFromPoolAsync from a created one), pinned host memory and
// pointer attributes. Creating pools: api_pool.cpp.
//
// As HIP documents: hipMalloc and hipHostMalloc of 0 bytes succeed with a
// null pointer; hipFree and hipHostFree of null succeed; hipFree and
// hipHostFree synchronize the device first. As HIP 5.2 does (alpaka#2197):
// hipMallocAsync of 0 bytes and hipFreeAsync of null are hipErrorInvalidValue
// (and reported as misuse: anydev must not make them).
#include <hip/hip_runtime_api.h>

#include <cstdint>

#include "core_config.h"
#include "core_memory.h"
#include "core_pool.h"
#include "core_transfer.h"
#include "hip_face.h"

namespace hip = anydev_emu::hip;
namespace core = anydev_emu::core;
using hip::Call;

namespace {

std::uintptr_t U(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// The stream of a stream-ordered allocation call, when pools are on.
hipError_t pool_stream(hipStream_t stream, const char* api, core::StreamRef* out) {
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (!core::get_config().memory_pools) return hipErrorNotSupported;
  return hip::stream_of(stream, api, out);
}

hipError_t host_malloc(void** out, size_t bytes, unsigned int flags, const char* api) {
  core::Context* c = nullptr;
  if (const hipError_t e = hip::current(&c); e != hipSuccess) return e;
  constexpr unsigned int kKnown = hipHostMallocPortable | hipHostMallocMapped |
                                  hipHostMallocWriteCombined | hipHostMallocNumaUser |
                                  hipHostMallocCoherent | hipHostMallocNonCoherent;
  if ((flags & ~kKnown) != 0) return hipErrorInvalidValue;
  if (out != nullptr && bytes == 0) {
    *out = nullptr;
    return hipSuccess;
  }
  return hip::to_hip(core::allocate_pinned(bytes, out, api));
}

}  // namespace

namespace anydev_emu::hip {
// Device memory of `device` from `pool` (null: hipMalloc) into a void*.
hipError_t allocate(int device, size_t bytes, void** out, const char* api, core::Pool* pool) {
  std::uintptr_t address = 0;
  const core::Status s =
      core::allocate_device(device, bytes, out == nullptr ? nullptr : &address, api, pool);
  if (s == core::Status::success) *out = reinterpret_cast<void*>(address);
  return to_hip(s);
}
}  // namespace anydev_emu::hip

extern "C" {

hipError_t hipMalloc(void** out, size_t bytes) {
  hip::count(Call::hipMalloc);
  core::Context* c = nullptr;
  if (const hipError_t e = hip::current(&c); e != hipSuccess) return e;
  if (out != nullptr && bytes == 0) {
    *out = nullptr;
    return hipSuccess;
  }
  return hip::allocate(c->device, bytes, out, "hipMalloc", nullptr);
}

hipError_t hipFree(void* address) {
  hip::count(Call::hipFree);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (address == nullptr) return hipSuccess;
  core::drain_streams();
  const core::Status s = core::free_device(U(address), "hipFree");
  return s == core::Status::invalid_value ? hipErrorInvalidDevicePointer : hip::to_hip(s);
}

hipError_t hipHostMalloc(void** out, size_t bytes, unsigned int flags) {
  hip::count(Call::hipHostMalloc);
  return host_malloc(out, bytes, flags, "hipHostMalloc");
}

// Later ROCm releases deprecate hipHostMalloc for this one; the same call.
hipError_t hipHostAlloc(void** out, size_t bytes, unsigned int flags) {
  hip::count(Call::hipHostAlloc);
  return host_malloc(out, bytes, flags, "hipHostAlloc");
}

hipError_t hipHostFree(void* address) {
  hip::count(Call::hipHostFree);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (address == nullptr) return hipSuccess;
  core::drain_streams();
  return hip::to_hip(core::free_pinned(address, "hipHostFree"));
}

hipError_t hipMallocAsync(void** out, size_t bytes, hipStream_t stream) {
  hip::count(Call::hipMallocAsync);
  core::StreamRef s;
  if (const hipError_t e = pool_stream(stream, "hipMallocAsync", &s); e != hipSuccess) return e;
  // The memory is usable by work enqueued after this call: allocate now.
  const int device = s->context()->device;
  return hip::allocate(device, bytes, out, "hipMallocAsync", core::device_at(device)->default_pool);
}

hipError_t hipFreeAsync(void* address, hipStream_t stream) {
  hip::count(Call::hipFreeAsync);
  core::StreamRef s;
  if (const hipError_t e = pool_stream(stream, "hipFreeAsync", &s); e != hipSuccess) return e;
  return hip::to_hip(core::enqueue_free("hipFreeAsync", s, U(address)));
}

hipError_t hipMallocFromPoolAsync(void** out, size_t bytes, hipMemPool_t handle,
                                  hipStream_t stream) {
  hip::count(Call::hipMallocFromPoolAsync);
  constexpr const char* kApi = "hipMallocFromPoolAsync";
  core::StreamRef s;
  core::Pool* pool = nullptr;
  if (const hipError_t e = pool_stream(stream, kApi, &s); e != hipSuccess) return e;
  if (const hipError_t e = hip::to_hip(core::lookup_pool(handle, kApi, &pool)); e != hipSuccess) {
    return e;
  }
  // The memory is usable by work enqueued after this call: allocate now.
  return hip::allocate(pool->device, bytes, out, kApi, pool);
}

// Device memory: hipMemoryTypeDevice and its device; pinned memory:
// hipMemoryTypeHost, usable from the device at the same address. Memory the
// runtime did not allocate is hipErrorInvalidValue, as in HIP 5.2.
hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* address) {
  hip::count(Call::hipPointerGetAttributes);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (attributes == nullptr || address == nullptr) return hipErrorInvalidValue;
  const core::BlockRef block = core::find_containing(U(address));
  if (block == nullptr) return hipErrorInvalidValue;  // a query, not misuse
  *attributes = hipPointerAttribute_t{};
  const bool device = block->device >= 0;
  attributes->memoryType = device ? hipMemoryTypeDevice : hipMemoryTypeHost;
  attributes->device = device ? block->device : hip::current_device();
  attributes->devicePointer = const_cast<void*>(address);
  attributes->hostPointer = device ? nullptr : const_cast<void*>(address);
  return hipSuccess;
}

}  // extern "C"
