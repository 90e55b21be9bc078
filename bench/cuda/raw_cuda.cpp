// SPDX-License-Identifier: Apache-2.0
#include "raw_cuda.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>

namespace anydev_bench {
namespace {

#define ANYDEV_RAW_STR2(x) #x
#define ANYDEV_RAW_STR(x) ANYDEV_RAW_STR2(x)

}  // namespace

std::string RawCuda::Failure(const char* call, CUresult r) const {
  const char* name = nullptr;
  if (GetErrorName == nullptr || GetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) {
    return std::string(call) + " failed: CUresult " + std::to_string(static_cast<int>(r));
  }
  return std::string(call) + " failed: " + name;
}

RawCuda* RawCuda::Open(std::string* error) {
  const char* env = std::getenv("ANYDEV_CUDA_LIBRARY");
  auto raw = std::make_unique<RawCuda>();
  raw->path = env != nullptr && *env != '\0' ? env : "libcuda.so.1";
  void* library = dlopen(raw->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    *error = "dlopen(\"" + raw->path + "\") failed: " + dlerror();
    return nullptr;
  }
  // The exported name cuda.h maps each call to (cuMemAlloc -> cuMemAlloc_v2).
#define ANYDEV_RAW_CUDA_RESOLVE(name, version)                                               \
  raw->name =                                                                                \
      reinterpret_cast<PFN_cu##name##_v##version>(dlsym(library, ANYDEV_RAW_STR(cu##name))); \
  if (raw->name == nullptr) {                                                                \
    *error = raw->path + " lacks " ANYDEV_RAW_STR(cu##name);                                 \
    return nullptr;                                                                          \
  }
  ANYDEV_RAW_CUDA_SYMBOLS(ANYDEV_RAW_CUDA_RESOLVE)
#undef ANYDEV_RAW_CUDA_RESOLVE

  CUresult r = raw->Init(0);
  if (r != CUDA_SUCCESS) return *error = raw->Failure("cuInit", r), nullptr;
  raw->DriverGetVersion(&raw->driver_version);
  CUdevice device = 0;
  if ((r = raw->DeviceGet(&device, 0)) != CUDA_SUCCESS) {
    return *error = raw->Failure("cuDeviceGet", r), nullptr;
  }
  if ((r = raw->DevicePrimaryCtxRetain(&raw->context, device)) != CUDA_SUCCESS) {
    return *error = raw->Failure("cuDevicePrimaryCtxRetain", r), nullptr;
  }
  if ((r = raw->CtxPushCurrent(raw->context)) != CUDA_SUCCESS) {
    return *error = raw->Failure("cuCtxPushCurrent", r), nullptr;
  }
  if ((r = raw->StreamCreate(&raw->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
    return *error = raw->Failure("cuStreamCreate", r), nullptr;
  }
  return raw.release();
}

}  // namespace anydev_bench
