// SPDX-License-Identifier: Apache-2.0
// Starting the CUDA driver, querying its devices, and anydev's memory pool on
// a device (created and granted through the GPU core, gpu_pool.h).
#include <cuda.h>

#include <string>

#include "cuda_api.h"

namespace anydev::cuda {

bool CudaApi::load(void* library, const std::string& path, const std::string& opened_file,
                   CudaDriver* driver, std::string* reason) {
  return load_cuda_driver(library, path, opened_file, driver, reason);
}

std::string CudaApi::library_text(const CudaDriver& drv) {
  return cat("driver ", driver_version_text(drv.version), ", symbols resolved with ", drv.resolver);
}

anydev_status_t CudaApi::start(const CudaDriver& drv, int* count) {
  const std::string where =
      cat(drv.opened_path, ", driver ", driver_version_text(drv.version), ")");
  CUresult r = drv.Init(0);
  if (r != CUDA_SUCCESS) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "cuInit",
                          cat("initializing the CUDA driver (", where));
  }
  if ((r = drv.DeviceGetCount(count)) != CUDA_SUCCESS) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "cuDeviceGetCount",
                          cat("counting CUDA devices (", where));
  }
  if (*count <= 0) {
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                        cat("no CUDA device: cuDeviceGetCount returned ", *count, " (", where));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t CudaApi::query_device(int index, gpu::DeviceState<CudaApi>* d, bool* pools) {
  const CudaDriver& drv = driver();
  CudaDevice& x = d->extra;
  const std::string what = cat("querying cuda device ", index);
  auto fail = [&what](CUresult r, const char* call) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, call, what);
  };
  CUresult r = drv.DeviceGet(&d->device, index);
  if (r != CUDA_SUCCESS) return fail(r, "cuDeviceGet");
  char name[256] = {};
  if ((r = drv.DeviceGetName(name, sizeof(name) - 1, d->device)) != CUDA_SUCCESS) {
    return fail(r, "cuDeviceGetName");
  }
  d->name = name;
  if ((r = drv.DeviceTotalMem(&d->total_memory, d->device)) != CUDA_SUCCESS) {
    return fail(r, "cuDeviceTotalMem");
  }
  int unified = 0;
  if ((r = drv.DeviceGetAttribute(&x.compute_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                  d->device)) != CUDA_SUCCESS ||
      (r = drv.DeviceGetAttribute(&x.compute_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                  d->device)) != CUDA_SUCCESS ||
      (r = drv.DeviceGetAttribute(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, d->device)) !=
          CUDA_SUCCESS) {
    return fail(r, "cuDeviceGetAttribute");
  }
  if (unified == 0) {
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                        cat("cuda device ", index, " (", d->name,
                            ") lacks unified addressing, which the cuda backend needs"));
  }
  int supported = 0;
  // Drivers older than 11.2 do not know the attribute: no pools.
  if (drv.DeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, d->device) !=
      CUDA_SUCCESS) {
    supported = 0;
  }
  *pools = supported != 0;
  char bus[64] = {};
  if ((r = drv.DeviceGetPCIBusId(bus, sizeof(bus) - 1, d->device)) != CUDA_SUCCESS) {
    return fail(r, "cuDeviceGetPCIBusId");
  }
  x.pci_bus_id = bus;
  query_sharing(index, d->device, &x);
  d->description =
      cat("compute capability ", x.compute_major, ".", x.compute_minor, ", PCI bus id ",
          x.pci_bus_id, ", driver ", driver_version_text(drv.version), " (", drv.opened_path, ")");
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
