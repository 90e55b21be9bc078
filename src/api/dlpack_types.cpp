// SPDX-License-Identifier: Apache-2.0
#include "api/dlpack_types.h"

#include <cstdint>

#include "anydev/anydev_dlpack.h"
#include "support/status.h"

namespace anydev::core {
namespace {

// DLPack 0.7 added kDLOneAPI (14); DLPack 0.8 added kDLBool (6), which
// anydev_dlpack.h names ANYDEV_DLPACK_CODE_BOOL for 0.6 headers.
#if DLPACK_VERSION >= 70
constexpr int kOneApi = kDLOneAPI;
#else
constexpr int kOneApi = 14;
#endif

struct DtypeEntry {
  anydev_dtype_t dtype;
  std::uint8_t code;
  std::uint8_t bits;
};

constexpr DtypeEntry kDtypes[] = {
    {ANYDEV_DTYPE_INT8, kDLInt, 8},
    {ANYDEV_DTYPE_INT16, kDLInt, 16},
    {ANYDEV_DTYPE_INT32, kDLInt, 32},
    {ANYDEV_DTYPE_INT64, kDLInt, 64},
    {ANYDEV_DTYPE_UINT8, kDLUInt, 8},
    {ANYDEV_DTYPE_UINT16, kDLUInt, 16},
    {ANYDEV_DTYPE_UINT32, kDLUInt, 32},
    {ANYDEV_DTYPE_UINT64, kDLUInt, 64},
    {ANYDEV_DTYPE_FLOAT16, kDLFloat, 16},
    {ANYDEV_DTYPE_BFLOAT16, kDLBfloat, 16},
    {ANYDEV_DTYPE_FLOAT32, kDLFloat, 32},
    {ANYDEV_DTYPE_FLOAT64, kDLFloat, 64},
    {ANYDEV_DTYPE_COMPLEX64, kDLComplex, 64},
    {ANYDEV_DTYPE_COMPLEX128, kDLComplex, 128},
    {ANYDEV_DTYPE_BOOL, ANYDEV_DLPACK_CODE_BOOL, 8},
};

const char* code_name(int code) {
  switch (code) {
    case kDLInt:
      return "int";
    case kDLUInt:
      return "uint";
    case kDLFloat:
      return "float";
    case kDLOpaqueHandle:
      return "opaque handle";
    case kDLBfloat:
      return "bfloat";
    case kDLComplex:
      return "complex";
    case ANYDEV_DLPACK_CODE_BOOL:
      return "bool";
  }
  return nullptr;
}

}  // namespace

std::optional<DLDataType> to_dlpack_dtype(anydev_dtype_t dtype, bool versioned) noexcept {
  if (dtype == ANYDEV_DTYPE_BOOL && !versioned) return std::nullopt;
  for (const DtypeEntry& e : kDtypes) {
    if (e.dtype == dtype) return DLDataType{e.code, e.bits, 1};
  }
  return std::nullopt;
}

std::optional<anydev_dtype_t> from_dlpack_dtype(DLDataType type) noexcept {
  if (type.lanes != 1) return std::nullopt;
  for (const DtypeEntry& e : kDtypes) {
    if (e.code == type.code && e.bits == type.bits) return e.dtype;
  }
  return std::nullopt;
}

std::string describe_dlpack_dtype(DLDataType type) {
  const char* name = code_name(type.code);
  return cat(name != nullptr ? std::string(name) : cat("code ", int{type.code}), " of ",
             int{type.bits}, " bits x ", type.lanes, " lanes");
}

std::optional<DlpackPlacement> dlpack_placement(const DeviceRecord& device,
                                                anydev_memory_kind_t kind) noexcept {
  if (kind == ANYDEV_MEMORY_HOST) {
    if (device.dlpack_host_device_type == 0) return std::nullopt;
    return DlpackPlacement{device.dlpack_host_device_type, device.dlpack_device_id, false};
  }
  if (device.dlpack_device_type == 0) return std::nullopt;
  return DlpackPlacement{device.dlpack_device_type, device.dlpack_device_id,
                         device.dlpack_data_is_native_memory};
}

namespace {

// The index of the device of `backend` whose device memory has DLPack type
// `device_type` and id `device_id`; -1 when none. With `any_id`, the first
// device of that type.
int device_holding(const Backend& backend, int device_type, int device_id, bool any_id) {
  for (std::size_t i = 0; i < backend.devices.size(); ++i) {
    const DeviceRecord& d = backend.devices[i];
    if (d.dlpack_device_type == device_type && (any_id || d.dlpack_device_id == device_id)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool host_memory_of(const Backend& backend, int device_type) {
  for (const DeviceRecord& d : backend.devices) {
    if (d.dlpack_host_device_type == device_type) return true;
  }
  return false;
}

// The backend whose device (or, failing that, host) memory has DLPack type
// `device_type`: the first of `first` that declares it, else the first in
// listing order.
const Backend* declaring_backend(int device_type, std::span<const Backend* const> first) {
  const auto declares = [device_type](const Backend& b) {
    return device_holding(b, device_type, 0, true) >= 0 || host_memory_of(b, device_type);
  };
  for (const Backend* backend : first) {
    if (backend != nullptr && backend->available && declares(*backend)) return backend;
  }
  return Registry::instance().probe_until(declares);
}

}  // namespace

anydev_status_t dlpack_source(const char* op, int device_type, int device_id,
                              std::span<const Backend* const> first, DlpackSource* out) {
  DlpackSource source;
  if (device_type != kDLCPU) {
    const Backend* owner = declaring_backend(device_type, first);
    if (owner == nullptr) {
      return fail(ANYDEV_ERROR_UNSUPPORTED, op, "cannot import a tensor on ",
                  describe_dlpack_device(device_type),
                  ": no available backend declares that DLPack device type for its memory\n",
                  Registry::instance().describe_known());
    }
    if (device_holding(*owner, device_type, 0, true) >= 0) {
      const int device = device_holding(*owner, device_type, device_id, false);
      if (device < 0) {
        return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "a tensor on ",
                    describe_dlpack_device(device_type), " device ", device_id,
                    " needs a device of the ", owner->name, " backend with DLPack device id ",
                    device_id, "; it has none (", owner->devices.size(), " device(s))");
      }
      if (owner->devices[device].dlpack_data_is_native_memory) {
        return fail(ANYDEV_ERROR_UNSUPPORTED, op, "cannot import a tensor on ",
                    describe_dlpack_device(device_type), ": the ", owner->name,
                    " backend's device memory is exchanged as its native memory objects, and it "
                    "can use only those it allocated");
      }
      source.backend = owner;
      source.device = device;
      source.device_memory = true;
      *out = source;
      return ANYDEV_SUCCESS;
    }
    source.pinned_by = owner;  // host memory of that backend (e.g. pinned memory)
  }
  // Host memory: any context; without one, the backend whose device memory
  // is the host's (kDLCPU, host-accessible).
  source.host_default = Registry::instance().probe_until([](const Backend& b) {
    const int device = device_holding(b, kDLCPU, 0, true);
    return device >= 0 && b.devices[device].device_memory_is_host_accessible;
  });
  *out = source;
  return ANYDEV_SUCCESS;
}

std::string describe_dlpack_device(int device_type) {
  const char* name = nullptr;
  switch (device_type) {
    case kDLCPU:
      name = "kDLCPU";
      break;
    case kDLCUDA:
      name = "kDLCUDA";
      break;
    case kDLCUDAHost:
      name = "kDLCUDAHost";
      break;
    case kDLOpenCL:
      name = "kDLOpenCL";
      break;
    case kDLVulkan:
      name = "kDLVulkan";
      break;
    case kDLMetal:
      name = "kDLMetal";
      break;
    case kDLVPI:
      name = "kDLVPI";
      break;
    case kDLROCM:
      name = "kDLROCM";
      break;
    case kDLROCMHost:
      name = "kDLROCMHost";
      break;
    case kDLExtDev:
      name = "kDLExtDev";
      break;
    case kDLCUDAManaged:
      name = "kDLCUDAManaged";
      break;
    default:
      if (device_type == kOneApi) name = "kDLOneAPI";
      break;
  }
  return name != nullptr ? cat(name, " (", device_type, ")")
                         : cat("unknown device type ", device_type);
}

}  // namespace anydev::core
