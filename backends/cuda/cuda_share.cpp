// SPDX-License-Identifier: Apache-2.0
// What sharing between processes (backends/gpu/gpu_share.h) needs to know of
// a CUDA device: its identity and whether its memory exports as a POSIX fd.
// Read once per device by query_device; afterwards only read (thread-safe).
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "cuda_api.h"

namespace anydev::cuda {

void query_sharing(int index, CUdevice device, CudaDevice* x) {
  const CudaDriver& drv = driver();
  CUuuid uuid{};
  if (drv.DeviceGetUuid != nullptr && drv.DeviceGetUuid(&uuid, device) == CUDA_SUCCESS) {
    static_assert(sizeof uuid.bytes == sizeof x->uuid);
    std::memcpy(x->uuid, uuid.bytes, sizeof x->uuid);
  } else {
    // Without cuDeviceGetUuid the PCI bus id ("0000:01:00.0") names the device.
    std::memcpy(x->uuid, x->pci_bus_id.data(), std::min(x->pci_bus_id.size(), sizeof x->uuid));
  }
  const char* missing = nullptr;
  using names = CudaDriver::names;
#define ANYDEV_CUDA_NEED_(member) \
  if (missing == nullptr && drv.member == nullptr) missing = names::member;
  ANYDEV_CUDA_NEED_(MemGetAllocationGranularity)
  ANYDEV_CUDA_NEED_(MemCreate)
  ANYDEV_CUDA_NEED_(MemRelease)
  ANYDEV_CUDA_NEED_(MemAddressReserve)
  ANYDEV_CUDA_NEED_(MemAddressFree)
  ANYDEV_CUDA_NEED_(MemMap)
  ANYDEV_CUDA_NEED_(MemUnmap)
  ANYDEV_CUDA_NEED_(MemSetAccess)
  ANYDEV_CUDA_NEED_(MemExportToShareableHandle)
  ANYDEV_CUDA_NEED_(MemImportFromShareableHandle)
#undef ANYDEV_CUDA_NEED_
  if (missing != nullptr) {
    x->share_unsupported = cat("the CUDA driver (", drv.opened_path, ") lacks ", missing);
    return;
  }
  const struct {
    CUdevice_attribute attribute;
    const char* name;
  } needed[] = {
      {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
       "CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED"},
      {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
       "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED"},
  };
  for (const auto& n : needed) {
    int value = 0;
    const CUresult r = drv.DeviceGetAttribute(&value, n.attribute, device);
    if (r != CUDA_SUCCESS || value == 0) {
      x->share_unsupported = r != CUDA_SUCCESS
                                 ? cat("cuDeviceGetAttribute(", n.name, ") failed on cuda device ",
                                       index, ": ", CudaApi::describe(r))
                                 : cat("cuda device ", index, " reports ", n.name, " = 0");
      return;
    }
  }
}

bool CudaApi::share_support(int device, std::string* why_not) {
  const CudaDevice& x = gpu::device_state<CudaApi>(device).extra;
  if (x.share_unsupported.empty()) return true;
  *why_not = x.share_unsupported;
  return false;
}

void CudaApi::device_uuid(int device, std::uint8_t (&out)[16]) {
  std::memcpy(out, gpu::device_state<CudaApi>(device).extra.uuid, sizeof out);
}

}  // namespace anydev::cuda
