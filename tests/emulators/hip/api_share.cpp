// SPDX-License-Identifier: Apache-2.0
// Sharing between processes (core_share.h): the VMM calls with POSIX-fd
// handles, hipHostRegister, interprocess events and device UUIDs. Both
// variants export them (Debian's HIP 5.2 does too); each reads the
// allocation properties in its own runtime's layout (HIP 5's headers, or
// ROCm 6's CUDA-like order), so a backend passing the wrong one fails.
// ANYDEV_HIP_EMULATOR_VMM=0 makes the VMM calls answer hipErrorNotSupported,
// as ROCm does on a device without VMM.
#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "core_config.h"
#include "core_memory.h"
#include "core_share.h"
#include "core_stream.h"
#include "hip_face.h"

namespace hip = anydev_emu::hip;
namespace core = anydev_emu::core;
using hip::Call;

namespace {

// hipMemAllocationProp as ROCm 6 lays it out.
struct PropV6 {
  hipMemAllocationType type;
  hipMemAllocationHandleType requestedHandleTypes;
  hipMemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
  } allocFlags;
};

struct Prop {
  hipMemAllocationType type;
  hipMemAllocationHandleType handles;
  hipMemLocation location;
};

// The properties in this variant's layout.
Prop read_prop(const void* raw) {
  Prop p{};
  if (hip::runtime_version() >= 60000000) {
    const auto* v6 = static_cast<const PropV6*>(raw);
    p = Prop{v6->type, v6->requestedHandleTypes, v6->location};
  } else {
    const auto* v5 = static_cast<const hipMemAllocationProp*>(raw);
    p = Prop{v5->type, v5->requestedHandleType, v5->location};
  }
  return p;
}

// The device `raw` names: hipErrorInvalidValue for anything but pinned
// device memory of a device that exists.
hipError_t prop_device(const void* raw, const char* api, Prop* prop) {
  if (raw == nullptr) return hipErrorInvalidValue;
  *prop = read_prop(raw);
  if (prop->type != hipMemAllocationTypePinned || prop->location.type != hipMemLocationTypeDevice) {
    return hip::to_hip(
        core::misuse(core::Status::invalid_value,
                     std::string(api) + ": properties other than pinned device memory (type " +
                         std::to_string(prop->type) + ", location type " +
                         std::to_string(prop->location.type) + ": the other runtime's layout?)"));
  }
  core::Device* d = nullptr;
  return hip::device_of(prop->location.id, &d);
}

std::uint64_t handle_value(hipMemGenericAllocationHandle_t handle) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle));
}
hipMemGenericAllocationHandle_t to_handle(std::uint64_t value) {
  return reinterpret_cast<hipMemGenericAllocationHandle_t>(static_cast<std::uintptr_t>(value));
}

}  // namespace

extern "C" {

hipError_t hipDeviceGetUuid(hipUUID* uuid, hipDevice_t device) {
  hip::count(Call::hipDeviceGetUuid);
  core::Device* d = nullptr;
  if (const hipError_t e = hip::device_of(device, &d); e != hipSuccess) return e;
  if (uuid == nullptr) return hipErrorInvalidValue;
  std::memset(uuid->bytes, 0, sizeof uuid->bytes);
  std::memcpy(uuid->bytes, "anydev-emu-hip", 14);
  uuid->bytes[15] = static_cast<char>(d->index);
  return hipSuccess;
}

hipError_t hipMemGetAllocationGranularity(size_t* granularity, const hipMemAllocationProp* raw,
                                          hipMemAllocationGranularity_flags option) {
  hip::count(Call::hipMemGetAllocationGranularity);
  Prop prop{};
  if (const hipError_t e = prop_device(raw, "hipMemGetAllocationGranularity", &prop);
      e != hipSuccess)
    return e;
  if (granularity == nullptr || (option != hipMemAllocationGranularityMinimum &&
                                 option != hipMemAllocationGranularityRecommended)) {
    return hipErrorInvalidValue;
  }
  if (!core::vmm_supported()) return hipErrorNotSupported;
  *granularity = core::kGranularity;
  return hipSuccess;
}

hipError_t hipMemCreate(hipMemGenericAllocationHandle_t* handle, size_t size,
                        const hipMemAllocationProp* raw, unsigned long long flags) {
  hip::count(Call::hipMemCreate);
  Prop prop{};
  if (const hipError_t e = prop_device(raw, "hipMemCreate", &prop); e != hipSuccess) return e;
  if (flags != 0 || handle == nullptr) return hipErrorInvalidValue;
  if ((prop.handles & ~hipMemHandleTypePosixFileDescriptor) != 0) return hipErrorNotSupported;
  std::uint64_t h = 0;
  const hipError_t e = hip::to_hip(core::vmm_create(
      prop.location.id, size, (prop.handles & hipMemHandleTypePosixFileDescriptor) != 0, &h,
      "hipMemCreate"));
  if (e == hipSuccess) *handle = to_handle(h);
  return e;
}

hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle) {
  hip::count(Call::hipMemRelease);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  return hip::to_hip(core::vmm_release(handle_value(handle), "hipMemRelease"));
}

hipError_t hipMemExportToShareableHandle(void* shareable, hipMemGenericAllocationHandle_t handle,
                                         hipMemAllocationHandleType type,
                                         unsigned long long flags) {
  hip::count(Call::hipMemExportToShareableHandle);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (type != hipMemHandleTypePosixFileDescriptor || flags != 0) return hipErrorInvalidValue;
  return hip::to_hip(core::vmm_export_fd(handle_value(handle), static_cast<int*>(shareable),
                                         "hipMemExportToShareableHandle"));
}

hipError_t hipMemImportFromShareableHandle(hipMemGenericAllocationHandle_t* handle, void* os_handle,
                                           hipMemAllocationHandleType type) {
  hip::count(Call::hipMemImportFromShareableHandle);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (type != hipMemHandleTypePosixFileDescriptor || handle == nullptr) {
    return hipErrorInvalidValue;
  }
  const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle));
  std::uint64_t h = 0;
  const hipError_t e = hip::to_hip(core::vmm_import_fd(fd, &h, "hipMemImportFromShareableHandle"));
  if (e == hipSuccess) *handle = to_handle(h);
  return e;
}

hipError_t hipMemAddressReserve(void** ptr, size_t size, size_t alignment, void* addr,
                                unsigned long long flags) {
  hip::count(Call::hipMemAddressReserve);
  core::Context* c = nullptr;
  if (const hipError_t e = hip::current(&c); e != hipSuccess) return e;
  static_cast<void>(addr);  // a hint only: ignored
  if (flags != 0 || ptr == nullptr) return hipErrorInvalidValue;
  std::uintptr_t at = 0;
  const hipError_t e =
      hip::to_hip(core::vmm_reserve(c->device, size, alignment, &at, "hipMemAddressReserve"));
  if (e == hipSuccess) *ptr = reinterpret_cast<void*>(at);
  return e;
}

hipError_t hipMemAddressFree(void* ptr, size_t size) {
  hip::count(Call::hipMemAddressFree);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  return hip::to_hip(
      core::vmm_free_range(reinterpret_cast<std::uintptr_t>(ptr), size, "hipMemAddressFree"));
}

hipError_t hipMemMap(void* ptr, size_t size, size_t offset, hipMemGenericAllocationHandle_t handle,
                     unsigned long long flags) {
  hip::count(Call::hipMemMap);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (flags != 0) return hipErrorInvalidValue;
  return hip::to_hip(core::vmm_map(reinterpret_cast<std::uintptr_t>(ptr), size, offset,
                                   handle_value(handle), "hipMemMap"));
}

hipError_t hipMemUnmap(void* ptr, size_t size) {
  hip::count(Call::hipMemUnmap);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  return hip::to_hip(core::vmm_unmap(reinterpret_cast<std::uintptr_t>(ptr), size, "hipMemUnmap"));
}

hipError_t hipMemSetAccess(void* ptr, size_t size, const hipMemAccessDesc* desc, size_t count) {
  hip::count(Call::hipMemSetAccess);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (desc == nullptr || count != 1 || desc->location.type != hipMemLocationTypeDevice ||
      desc->flags != hipMemAccessFlagsProtReadWrite) {
    return hip::to_hip(
        core::misuse(core::Status::invalid_value,
                     "hipMemSetAccess: only one read-write device descriptor is emulated"));
  }
  return hip::to_hip(core::vmm_set_access(reinterpret_cast<std::uintptr_t>(ptr), size,
                                          desc->location.id, "hipMemSetAccess"));
}

hipError_t hipHostRegister(void* p, size_t bytes, unsigned int flags) {
  hip::count(Call::hipHostRegister);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  constexpr unsigned int kKnown = hipHostRegisterPortable | hipHostRegisterMapped;
  if ((flags & ~kKnown) != 0) return hipErrorInvalidValue;
  const hipError_t e = hip::to_hip(core::host_register(p, bytes, "hipHostRegister"));
  return e == hipErrorInvalidValue && p != nullptr && bytes != 0
             ? hipErrorHostMemoryAlreadyRegistered
             : e;
}

hipError_t hipHostUnregister(void* p) {
  hip::count(Call::hipHostUnregister);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  const hipError_t e = hip::to_hip(core::host_unregister(p, "hipHostUnregister"));
  return e == hipErrorInvalidValue ? hipErrorHostMemoryNotRegistered : e;
}

hipError_t hipIpcGetEventHandle(hipIpcEventHandle_t* handle, hipEvent_t event) {
  hip::count(Call::hipIpcGetEventHandle);
  core::EventRef e;
  if (const hipError_t r = hip::event_of(event, "hipIpcGetEventHandle", &e); r != hipSuccess) {
    return r;
  }
  if (handle == nullptr) return hipErrorInvalidValue;
  static_assert(sizeof handle->reserved == core::kIpcHandleBytes);
  unsigned char bytes[core::kIpcHandleBytes];
  const hipError_t r = hip::to_hip(core::ipc_event_handle(e, bytes, "hipIpcGetEventHandle"));
  if (r == hipSuccess) std::memcpy(handle->reserved, bytes, sizeof bytes);
  return r;
}

hipError_t hipIpcOpenEventHandle(hipEvent_t* event, hipIpcEventHandle_t handle) {
  hip::count(Call::hipIpcOpenEventHandle);
  core::Context* c = nullptr;
  if (const hipError_t e = hip::current(&c); e != hipSuccess) return e;
  if (event == nullptr) return hipErrorInvalidValue;
  unsigned char bytes[core::kIpcHandleBytes];
  std::memcpy(bytes, handle.reserved, sizeof bytes);
  core::EventRef e;
  const hipError_t r = hip::to_hip(core::ipc_event_open(c, bytes, &e, "hipIpcOpenEventHandle"));
  if (r == hipSuccess) *event = static_cast<hipEvent_t>(core::register_object(e));
  return r;
}

}  // extern "C"
