// SPDX-License-Identifier: Apache-2.0
#include "cuda_pool.h"

#include <cuda.h>

#include "cuda_errors.h"

namespace anydev::cuda {

bool pool_entry_points_present(const CudaDriver& driver) {
  return driver.MemPoolCreate != nullptr && driver.MemPoolDestroy != nullptr &&
         driver.MemPoolSetAttribute != nullptr && driver.MemAllocFromPoolAsync != nullptr &&
         driver.MemFreeAsync != nullptr && driver.MemPoolSetAccess != nullptr;
}

void create_device_pool(DeviceState* d) {
  if (d->memory_pools) {
    const CudaDriver& drv = driver();
    CUmemPoolProps props = {};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = d->device;
    CUmemoryPool pool = nullptr;
    CUresult r = drv.MemPoolCreate(&pool, &props);
    const char* call = "cuMemPoolCreate";
    if (r == CUDA_SUCCESS) {
      cuuint64_t threshold = kPoolReleaseThreshold;
      r = drv.MemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
      call = "cuMemPoolSetAttribute(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)";
      if (r != CUDA_SUCCESS) drv.MemPoolDestroy(pool);
    }
    if (r == CUDA_SUCCESS) {
      d->pool = pool;
    } else {
      d->memory_pools = false;
      log(ANYDEV_LOG_WARN, cat(call, " failed: ", describe_result(r), " for cuda device ", d->index,
                               " (", d->name, "): its memory comes from cuMemAlloc instead"));
    }
  }
  d->description +=
      d->memory_pools
          ? cat(", device memory: stream-ordered (cuMemAllocFromPoolAsync from "
                "anydev's pool, release threshold ",
                kPoolReleaseThreshold >> 20, " MiB)")
          : std::string(", device memory: cuMemAlloc, freed by the core's stream-ordered release");
}

}  // namespace anydev::cuda
