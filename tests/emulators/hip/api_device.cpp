// SPDX-License-Identifier: Apache-2.0
// Initialization, versions, devices (count, current device, name, memory,
// attributes) and peer access.
#include <hip/hip_runtime_api.h>

#include <cstdio>
#include <string>

#include "core_config.h"
#include "core_memory.h"
#include "hip_face.h"

namespace hip = anydev_emu::hip;
namespace core = anydev_emu::core;
using hip::Call;

namespace {

// The value of `attribute` for `device`, or false when it is not emulated.
bool attribute_value(hipDeviceAttribute_t attribute, const core::Device& device, int* value) {
  // Each emulated attribute and its value, as an MI200-like device would say.
  const struct {
    hipDeviceAttribute_t attribute;
    int value;
  } kValues[] = {{hipDeviceAttributeComputeCapabilityMajor, 9},
                 {hipDeviceAttributeComputeCapabilityMinor, 0},
                 {hipDeviceAttributeMultiprocessorCount, 1},
                 {hipDeviceAttributePciDomainID, 0},
                 {hipDeviceAttributePciBusId, device.index + 1},
                 {hipDeviceAttributePciDeviceId, 0},
                 {hipDeviceAttributeUnifiedAddressing, 1},
                 {hipDeviceAttributeClockRate, 1700000},
                 {hipDeviceAttributeMemoryClockRate, 1600000},
                 {hipDeviceAttributeMemoryBusWidth, 4096},
                 {hipDeviceAttributeL2CacheSize, 8 << 20},
                 {hipDeviceAttributeIntegrated, 0},
                 {hipDeviceAttributeMaxThreadsPerBlock, 1024},
                 {hipDeviceAttributeWarpSize, 64},
                 {hipDeviceAttributeMemoryPoolsSupported, core::get_config().memory_pools}};
  for (const auto& entry : kValues) {
    if (entry.attribute == attribute) {
      *value = entry.value;
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" {

// The real 5.2 runtime answers hipErrorInvalidDevice when there is no GPU
// (observed on a machine without one); so does the emulator with no device
// configured.
hipError_t hipInit(unsigned int flags) {
  hip::count(Call::hipInit);
  const core::Status s = core::initialize(flags);
  return s == core::Status::no_device ? hipErrorInvalidDevice : hip::to_hip(s);
}

// With no device: hipErrorNoDevice and a count of 0, as the real runtime.
hipError_t hipGetDeviceCount(int* count) {
  hip::count(Call::hipGetDeviceCount);
  if (count == nullptr) return hipErrorInvalidValue;
  *count = 0;
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  *count = core::device_count();
  return hipSuccess;
}

hipError_t hipDriverGetVersion(int* version) {
  hip::count(Call::hipDriverGetVersion);
  if (version == nullptr) return hipErrorInvalidValue;
  *version = hip::runtime_version();
  return hipSuccess;
}

hipError_t hipRuntimeGetVersion(int* version) {
  hip::count(Call::hipRuntimeGetVersion);
  if (version == nullptr) return hipErrorInvalidValue;
  *version = hip::runtime_version();
  return hipSuccess;
}

hipError_t hipGetDevice(int* device) {
  hip::count(Call::hipGetDevice);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (device == nullptr) return hipErrorInvalidValue;
  *device = hip::current_device();
  return hipSuccess;
}

hipError_t hipSetDevice(int device) {
  hip::count(Call::hipSetDevice);
  core::Device* d = nullptr;
  if (const hipError_t e = hip::device_of(device, &d); e != hipSuccess) return e;
  hip::set_current_device(d->index);
  return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attribute, int device) {
  hip::count(Call::hipDeviceGetAttribute);
  core::Device* d = nullptr;
  if (const hipError_t e = hip::device_of(device, &d); e != hipSuccess) return e;
  if (value == nullptr) return hipErrorInvalidValue;
  if (attribute_value(attribute, *d, value)) return hipSuccess;
  return hip::to_hip(
      core::misuse(core::Status::invalid_value, "hipDeviceGetAttribute: attribute " +
                                                    std::to_string(static_cast<int>(attribute)) +
                                                    " is not emulated"));
}

hipError_t hipDeviceGetName(char* name, int length, hipDevice_t device) {
  hip::count(Call::hipDeviceGetName);
  core::Device* d = nullptr;
  if (const hipError_t e = hip::device_of(device, &d); e != hipSuccess) return e;
  if (name == nullptr || length <= 0) return hipErrorInvalidValue;
  std::snprintf(name, static_cast<std::size_t>(length), "%s", "anydev HIP emulator");
  return hipSuccess;
}

hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
  hip::count(Call::hipDeviceTotalMem);
  core::Device* d = nullptr;
  if (const hipError_t e = hip::device_of(device, &d); e != hipSuccess) return e;
  if (bytes == nullptr) return hipErrorInvalidValue;
  *bytes = core::get_config().memory_bytes;
  return hipSuccess;
}

hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  hip::count(Call::hipMemGetInfo);
  core::Context* c = nullptr;
  if (const hipError_t e = hip::current(&c); e != hipSuccess) return e;
  if (free_bytes == nullptr || total_bytes == nullptr) return hipErrorInvalidValue;
  core::memory_info(c->device, free_bytes, total_bytes);
  return hipSuccess;
}

hipError_t hipDeviceCanAccessPeer(int* can_access, int device, int peer) {
  hip::count(Call::hipDeviceCanAccessPeer);
  core::Device* d = nullptr;
  core::Device* p = nullptr;
  if (const hipError_t e = hip::device_of(device, &d); e != hipSuccess) return e;
  if (const hipError_t e = hip::device_of(peer, &p); e != hipSuccess) return e;
  if (can_access == nullptr) return hipErrorInvalidValue;
  *can_access = d != p ? 1 : 0;
  return hipSuccess;
}

// The current device may then access `peer`'s memory.
hipError_t hipDeviceEnablePeerAccess(int peer, unsigned int flags) {
  hip::count(Call::hipDeviceEnablePeerAccess);
  core::Context* c = nullptr;
  core::Device* p = nullptr;
  if (const hipError_t e = hip::current(&c); e != hipSuccess) return e;
  if (const hipError_t e = hip::device_of(peer, &p); e != hipSuccess) return e;
  return hip::to_hip(core::enable_peer(c, &p->primary, flags));
}

}  // extern "C"
