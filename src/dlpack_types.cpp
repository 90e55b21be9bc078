#include "dlpack_types.h"

#include <cstdint>

#include "status.h"

namespace anydev::core {
namespace {

// DLPack 0.7 added kDLOneAPI (14); DLPack 0.8 added kDLBool (6).
#if DLPACK_VERSION >= 70
constexpr bool kHasOneApi = true;
constexpr int kOneApi = kDLOneAPI;
#else
constexpr bool kHasOneApi = false;
constexpr int kOneApi = 14;
#endif

struct DtypeEntry {
  anydev_dtype_t dtype;
  std::uint8_t code;
  std::uint8_t bits;
};

constexpr DtypeEntry kDtypes[] = {
    {ANYDEV_DTYPE_INT8, kDLInt, 8},           {ANYDEV_DTYPE_INT16, kDLInt, 16},
    {ANYDEV_DTYPE_INT32, kDLInt, 32},         {ANYDEV_DTYPE_INT64, kDLInt, 64},
    {ANYDEV_DTYPE_UINT8, kDLUInt, 8},         {ANYDEV_DTYPE_UINT16, kDLUInt, 16},
    {ANYDEV_DTYPE_UINT32, kDLUInt, 32},       {ANYDEV_DTYPE_UINT64, kDLUInt, 64},
    {ANYDEV_DTYPE_FLOAT16, kDLFloat, 16},     {ANYDEV_DTYPE_BFLOAT16, kDLBfloat, 16},
    {ANYDEV_DTYPE_FLOAT32, kDLFloat, 32},     {ANYDEV_DTYPE_FLOAT64, kDLFloat, 64},
    {ANYDEV_DTYPE_COMPLEX64, kDLComplex, 64}, {ANYDEV_DTYPE_COMPLEX128, kDLComplex, 128},
#if DLPACK_VERSION >= 80
    {ANYDEV_DTYPE_BOOL, kDLBool, 8},
#endif
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
  }
  return nullptr;
}

}  // namespace

std::optional<DLDataType> to_dlpack_dtype(anydev_dtype_t dtype) noexcept {
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

std::optional<DlpackPlacement> dlpack_placement(std::string_view backend,
                                                anydev_memory_kind_t kind) noexcept {
  const bool host = kind == ANYDEV_MEMORY_HOST;
  if (backend == "cpu") return DlpackPlacement{kDLCPU, false};
  if (backend == "cuda") return DlpackPlacement{host ? kDLCUDAHost : kDLCUDA, false};
  if (backend == "hip") return DlpackPlacement{host ? kDLROCMHost : kDLROCM, false};
  if (backend == "opencl") return DlpackPlacement{host ? kDLCPU : kDLOpenCL, !host};
  if (backend == "level_zero") {
    if (host) return DlpackPlacement{kDLCPU, false};
    if (kHasOneApi) return DlpackPlacement{kOneApi, false};
  }
  return std::nullopt;
}

std::optional<DlpackSource> dlpack_source(int device_type) noexcept {
  switch (device_type) {
    case kDLCPU:
      return DlpackSource{nullptr, false, nullptr};
    case kDLCUDAHost:
      return DlpackSource{nullptr, false, "cuda"};
    case kDLROCMHost:
      return DlpackSource{nullptr, false, "hip"};
    case kDLCUDA:
      return DlpackSource{"cuda", true, nullptr};
    case kDLROCM:
      return DlpackSource{"hip", true, nullptr};
  }
  return std::nullopt;
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
