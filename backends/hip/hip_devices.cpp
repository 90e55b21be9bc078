// SPDX-License-Identifier: Apache-2.0
// Starting the HIP runtime, querying its devices (hipDeviceGetAttribute,
// hipDeviceGetName, hipDeviceTotalMem: never hipDeviceProp_t, whose layout
// ROCm 6 changed), anydev's memory pool on a device, peer access and the
// native context.
#include <cstdio>
#include <string>
#include <utility>

#include "hip_api.h"

namespace anydev::hip {

using kit::cat;

bool HipApi::load(void* library, const std::string& path, const std::string& opened,
                  HipRuntime* runtime, std::string* reason) {
  return load_hip_runtime(library, path, opened, runtime, reason);
}

std::string HipApi::library_text(const HipRuntime& runtime) {
  return cat("runtime ", hip_version_text(runtime.runtime_version), ", pinned memory from ",
             runtime.host_alloc);
}

// hipInit(0) fails on a machine without an AMD GPU (hipErrorInvalidDevice in
// 5.2), where hipGetDeviceCount says why: hipErrorNoDevice. So the count is
// asked for whatever hipInit said, and its answer is the reason given.
anydev_status_t HipApi::start(const HipRuntime& runtime, int* count) {
  const std::string where =
      cat(runtime.opened_path, ", runtime ", hip_version_text(runtime.runtime_version));
  const hipError_t init = runtime.Init(0);
  const std::string after_init =
      init == hipSuccess ? std::string() : cat("; hipInit(0) returned ", describe(init));
  const hipError_t r = runtime.GetDeviceCount(count);
  if (r != hipSuccess) {
    return gpu::report_failure<HipApi>(
        ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "hipGetDeviceCount",
        cat("counting HIP devices (", where, after_init, ")",
            r == hipErrorNoDevice ? ": no AMD GPU is reachable from this process" : ""));
  }
  if (*count <= 0) {
    return gpu::report_error<HipApi>(
        ANYDEV_ERROR_BACKEND_UNAVAILABLE,
        cat("no HIP device: hipGetDeviceCount returned ", *count, " (", where, after_init, ")"));
  }
  if (init != hipSuccess) {
    return gpu::report_failure<HipApi>(ANYDEV_ERROR_BACKEND_UNAVAILABLE, init, "hipInit",
                                       cat("initializing the HIP runtime (", where, ")"));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t HipApi::query_device(int index, gpu::DeviceState<HipApi>* d, bool* pools) {
  const HipRuntime& runtime = gpu::driver<HipApi>();
  d->device = index;
  const std::string what = cat("querying hip device ", index);
  hipError_t r = hipSuccess;
  const char* call = "hipDeviceGetName";
  char name[256] = {};
  int major = 0;
  int minor = 0;
  int bus = 0;
  int pci_device = 0;
  int domain = 0;
  int supported = 0;
  if ((r = runtime.DeviceGetName(name, sizeof(name) - 1, index)) == hipSuccess &&
      (call = "hipDeviceTotalMem", r = runtime.DeviceTotalMem(&d->total_memory, index)) ==
          hipSuccess) {
    call = "hipDeviceGetAttribute";
    for (auto [out, attribute] : {std::pair{&major, hipDeviceAttributeComputeCapabilityMajor},
                                  {&minor, hipDeviceAttributeComputeCapabilityMinor},
                                  {&bus, hipDeviceAttributePciBusId},
                                  {&pci_device, hipDeviceAttributePciDeviceId},
                                  {&domain, hipDeviceAttributePciDomainID}}) {
      if ((r = runtime.DeviceGetAttribute(out, attribute, index)) != hipSuccess) break;
    }
  }
  if (r != hipSuccess) {
    return gpu::report_failure<HipApi>(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, call, what);
  }
  d->name = name;
  // A runtime that does not know the attribute has no pools.
  if (runtime.DeviceGetAttribute(&supported, hipDeviceAttributeMemoryPoolsSupported, index) !=
      hipSuccess) {
    supported = 0;
  }
  *pools = supported != 0;
  char pci[32] = {};
  std::snprintf(pci, sizeof(pci), "%04x:%02x:%02x.0", static_cast<unsigned>(domain),
                static_cast<unsigned>(bus), static_cast<unsigned>(pci_device));
  query_sharing(index, pci, &d->extra);
  d->description = cat("compute capability ", major, ".", minor, ", PCI bus id ", pci, ", runtime ",
                       hip_version_text(runtime.runtime_version), " (", runtime.opened_path, ")");
  return ANYDEV_SUCCESS;
}

// Peer access is the current device's: hipDeviceEnablePeerAccess under a
// ScopedDevice of `device`.
anydev_status_t HipApi::enable_peer(int device, int peer, const std::string& what) {
  ScopedDevice scope;
  if (const anydev_status_t s = scope.enter(device, "enable_peer_access"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const hipError_t r = gpu::driver<HipApi>().DeviceEnablePeerAccess(peer, 0);
  if (r != hipSuccess && r != hipErrorPeerAccessAlreadyEnabled) {
    return gpu::report_failure<HipApi>(r, "hipDeviceEnablePeerAccess", what);
  }
  return ANYDEV_SUCCESS;
}

// HIP's runtime API has no context object of its own (hipCtx_t is deprecated
// and not used here): the device is the context.
anydev_status_t HipApi::native_context(int device, void**) {
  return gpu::report_error<HipApi>(
      ANYDEV_ERROR_UNSUPPORTED,
      cat("native_handle: hip has no native context (the HIP runtime API's context is the device; "
          "ask for ANYDEV_NATIVE_DEVICE, ordinal ",
          device, ")"));
}

}  // namespace anydev::hip
