// SPDX-License-Identifier: Apache-2.0
// What sharing between processes (backends/gpu/gpu_share.h) needs to know of
// a HIP device: its identity, whether its memory exports as a POSIX fd, and
// the allocation properties in the loaded runtime's layout. HIP 5.2's
// headers have no device attribute for VMM support, so the runtime is asked
// for the granularity of an exportable allocation: an error there (ROCm 5
// answers hipErrorNotSupported on devices without VMM) is the reason.
// Read once per device by query_device; afterwards only read (thread-safe).
#include <algorithm>
#include <cstring>
#include <string>

#include "hip_api.h"

namespace anydev::hip {

using kit::cat;

void HipApi::make_alloc_prop(int device, HipAllocationProp* prop) {
  std::memset(prop, 0, sizeof *prop);
  if (gpu::driver<HipApi>().runtime_version >= 60000000) {
    prop->v6.type = hipMemAllocationTypePinned;
    prop->v6.requestedHandleTypes = hipMemHandleTypePosixFileDescriptor;
    prop->v6.location.type = hipMemLocationTypeDevice;
    prop->v6.location.id = device;
  } else {
    prop->v5.type = hipMemAllocationTypePinned;
    prop->v5.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
    prop->v5.location.type = hipMemLocationTypeDevice;
    prop->v5.location.id = device;
  }
}

void query_sharing(int index, const std::string& pci_bus_id, HipDevice* x) {
  const HipRuntime& runtime = gpu::driver<HipApi>();
  hipUUID uuid{};
  if (runtime.DeviceGetUuid != nullptr && runtime.DeviceGetUuid(&uuid, index) == hipSuccess) {
    static_assert(sizeof uuid.bytes == sizeof x->uuid);
    std::memcpy(x->uuid, uuid.bytes, sizeof x->uuid);
  } else {
    // Without hipDeviceGetUuid the PCI bus id names the device.
    std::memcpy(x->uuid, pci_bus_id.data(), std::min(pci_bus_id.size(), sizeof x->uuid));
  }
  const char* missing = nullptr;
  using names = HipRuntime::names;
#define ANYDEV_HIP_NEED_(member) \
  if (missing == nullptr && runtime.member == nullptr) missing = names::member;
  ANYDEV_HIP_NEED_(MemGetAllocationGranularity)
  ANYDEV_HIP_NEED_(MemCreate)
  ANYDEV_HIP_NEED_(MemRelease)
  ANYDEV_HIP_NEED_(MemAddressReserve)
  ANYDEV_HIP_NEED_(MemAddressFree)
  ANYDEV_HIP_NEED_(MemMap)
  ANYDEV_HIP_NEED_(MemUnmap)
  ANYDEV_HIP_NEED_(MemSetAccess)
  ANYDEV_HIP_NEED_(MemExportToShareableHandle)
  ANYDEV_HIP_NEED_(MemImportFromShareableHandle)
#undef ANYDEV_HIP_NEED_
  if (missing != nullptr) {
    x->share_unsupported = cat("the HIP runtime (", runtime.opened_path, ") lacks ", missing);
    return;
  }
  HipAllocationProp prop{};
  HipApi::make_alloc_prop(index, &prop);
  std::size_t granularity = 0;
  const hipError_t r =
      runtime.MemGetAllocationGranularity(&granularity, &prop, hipMemAllocationGranularityMinimum);
  if (r != hipSuccess || granularity == 0) {
    x->share_unsupported =
        cat("hipMemGetAllocationGranularity for POSIX-fd exportable memory of hip device ", index,
            " answered ", HipApi::describe(r), " (runtime ",
            hip_version_text(runtime.runtime_version), ")");
  }
}

bool HipApi::share_support(int device, std::string* why_not) {
  const HipDevice& x = gpu::device_state<HipApi>(device).extra;
  if (x.share_unsupported.empty()) return true;
  *why_not = x.share_unsupported;
  return false;
}

void HipApi::device_uuid(int device, std::uint8_t (&out)[16]) {
  std::memcpy(out, gpu::device_state<HipApi>(device).extra.uuid, sizeof out);
}

}  // namespace anydev::hip
