// SPDX-License-Identifier: Apache-2.0
// Device attributes and the API version of the opencl backend
// (device_attribute, device_uuid, api_version; backend_entries.h), from
// clGetDeviceInfo:
//   COMPUTE_UNITS          CL_DEVICE_MAX_COMPUTE_UNITS
//   CLOCK_RATE_KHZ         CL_DEVICE_MAX_CLOCK_FREQUENCY (MHz) x 1000
//   L2_CACHE_BYTES         CL_DEVICE_GLOBAL_MEM_CACHE_SIZE (OpenCL's one
//                          global memory cache; on GPUs the L2)
//   MAX_ALLOCATION_BYTES   CL_DEVICE_MAX_MEM_ALLOC_SIZE
//   TOTAL_MEMORY_BYTES     CL_DEVICE_GLOBAL_MEM_SIZE
//   INTEGRATED             CL_DEVICE_HOST_UNIFIED_MEMORY
//   MAX_THREADS_PER_GROUP  CL_DEVICE_MAX_WORK_GROUP_SIZE
//   PCI_*                  CL_DEVICE_PCI_BUS_INFO_KHR (cl_khr_pci_bus_info)
//   UUID                   CL_DEVICE_UUID_KHR (cl_khr_device_uuid)
// and UNSUPPORTED, naming why, for the rest (OpenCL has no query for the
// memory's clock or bus width, a unified address space, a SIMD width that
// holds for every kernel, or a compute capability). The version is
// CL_DEVICE_VERSION and CL_DRIVER_VERSION. Stateless and thread-safe.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "opencl_devices.h"
#include "opencl_entries.h"
#include "opencl_errors.h"
#include "opencl_services.h"

namespace anydev::opencl {
namespace {

// cl_khr_pci_bus_info and cl_khr_device_uuid, spelled here: not every
// cl_ext.h has them.
constexpr cl_device_info kPciBusInfo = 0x410F;
constexpr cl_device_info kDeviceUuid = 0x106A;
struct PciBusInfo {
  cl_uint domain;
  cl_uint bus;
  cl_uint device;
  cl_uint function;
};

std::string text_info(const Device& d, cl_device_info what) {
  std::size_t size = 0;
  if (cl().clGetDeviceInfo(d.id, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "?";
  std::vector<char> text(size);
  if (cl().clGetDeviceInfo(d.id, what, size, text.data(), nullptr) != CL_SUCCESS) return "?";
  return std::string(text.data());
}

bool has_extension(const Device& d, const char* name) {
  const std::string extensions = " " + text_info(d, CL_DEVICE_EXTENSIONS) + " ";
  return extensions.find(std::string(" ") + name + " ") != std::string::npos;
}

template <class T>
anydev_status_t query(const Device& d, cl_device_info what, const char* name, T* out) {
  const cl_int err = cl().clGetDeviceInfo(d.id, what, sizeof(T), out, nullptr);
  if (err != CL_SUCCESS) {
    return report_cl("clGetDeviceInfo", err, cat(name, " of OpenCL device ", d.index));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t none(const Device& d, int attribute, const char* why) {
  return set_error(ANYDEV_ERROR_UNSUPPORTED, cat("OpenCL device ", d.index, " (", d.name,
                                                 "): attribute ", attribute, ": ", why));
}

}  // namespace

anydev_status_t device_attribute(int device_index, int attribute, std::int64_t* value) {
  Device* d = nullptr;
  if (anydev_status_t s = find_device(device_index, "device_attribute", &d); s != ANYDEV_SUCCESS) {
    return s;
  }
  switch (attribute) {
    case ANYDEV_ATTRIBUTE_COMPUTE_UNITS: {
      cl_uint v = 0;
      if (auto s = query(*d, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS", &v);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      *value = v;
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_ATTRIBUTE_CLOCK_RATE_KHZ: {
      cl_uint v = 0;
      if (auto s = query(*d, CL_DEVICE_MAX_CLOCK_FREQUENCY, "CL_DEVICE_MAX_CLOCK_FREQUENCY", &v);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      if (v == 0) return none(*d, attribute, "CL_DEVICE_MAX_CLOCK_FREQUENCY is 0 (unknown)");
      *value = std::int64_t{v} * 1000;
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_ATTRIBUTE_L2_CACHE_BYTES: {
      cl_ulong v = 0;
      if (auto s =
              query(*d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE", &v);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      if (v == 0) return none(*d, attribute, "the device reports no global memory cache");
      *value = static_cast<std::int64_t>(v);
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_ATTRIBUTE_MAX_ALLOCATION_BYTES:
      *value = static_cast<std::int64_t>(d->max_allocation);
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_TOTAL_MEMORY_BYTES:
      *value = static_cast<std::int64_t>(d->global_memory);
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_INTEGRATED:
      *value = d->host_unified_memory ? 1 : 0;
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_MAX_THREADS_PER_GROUP: {
      std::size_t v = 0;
      if (auto s = query(*d, CL_DEVICE_MAX_WORK_GROUP_SIZE, "CL_DEVICE_MAX_WORK_GROUP_SIZE", &v);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      *value = static_cast<std::int64_t>(v);
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_ATTRIBUTE_PCI_DOMAIN:
    case ANYDEV_ATTRIBUTE_PCI_BUS:
    case ANYDEV_ATTRIBUTE_PCI_DEVICE:
    case ANYDEV_ATTRIBUTE_PCI_FUNCTION: {
      if (!has_extension(*d, "cl_khr_pci_bus_info")) {
        return none(*d, attribute, "the device lacks cl_khr_pci_bus_info");
      }
      PciBusInfo info{};
      if (auto s = query(*d, kPciBusInfo, "CL_DEVICE_PCI_BUS_INFO_KHR", &info);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      *value = attribute == ANYDEV_ATTRIBUTE_PCI_DOMAIN   ? info.domain
               : attribute == ANYDEV_ATTRIBUTE_PCI_BUS    ? info.bus
               : attribute == ANYDEV_ATTRIBUTE_PCI_DEVICE ? info.device
                                                          : info.function;
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_ATTRIBUTE_MEMORY_CLOCK_RATE_KHZ:
    case ANYDEV_ATTRIBUTE_MEMORY_BUS_WIDTH_BITS:
      return none(*d, attribute, "OpenCL has no query for the memory's clock or bus width");
    case ANYDEV_ATTRIBUTE_UNIFIED_ADDRESSING:
      return none(*d, attribute,
                  "OpenCL 1.2 buffers have no addresses (cl_mem objects); shared virtual memory "
                  "is not used by anydev");
    case ANYDEV_ATTRIBUTE_SIMD_WIDTH:
      return none(*d, attribute, "OpenCL's SIMD width depends on the kernel");
    default:
      return none(*d, attribute, "OpenCL has no such value");
  }
}

anydev_status_t device_uuid(int device_index, std::uint8_t* uuid) {
  Device* d = nullptr;
  if (anydev_status_t s = find_device(device_index, "device_uuid", &d); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (!has_extension(*d, "cl_khr_device_uuid")) {
    return set_error(ANYDEV_ERROR_UNSUPPORTED,
                     cat("OpenCL device ", d->index, " (", d->name, ") lacks cl_khr_device_uuid"));
  }
  cl_uchar bytes[16] = {};
  if (auto s = query(*d, kDeviceUuid, "CL_DEVICE_UUID_KHR", &bytes); s != ANYDEV_SUCCESS) return s;
  std::memcpy(uuid, bytes, 16);
  return ANYDEV_SUCCESS;
}

anydev_status_t api_version(int device_index, char* out, std::size_t capacity) {
  Device* d = nullptr;
  if (anydev_status_t s = find_device(device_index, "api_version", &d); s != ANYDEV_SUCCESS) {
    return s;
  }
  const std::string text =
      cat(text_info(*d, CL_DEVICE_VERSION), ", driver ", text_info(*d, CL_DRIVER_VERSION));
  std::snprintf(out, capacity, "%s", text.c_str());
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
