// SPDX-License-Identifier: Apache-2.0
#include "opencl_memory.h"

#include <mutex>
#include <unordered_map>

#include "opencl_accounting.h"
#include "opencl_entries.h"
#include "opencl_errors.h"
#include "opencl_services.h"

namespace anydev::opencl {
namespace {

class AllocationRegistry {
 public:
  static AllocationRegistry& instance() {
    static auto* registry = new AllocationRegistry();  // never destroyed
    return *registry;
  }

  void add(cl_mem mem, const Allocation& allocation) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_[mem] = allocation;
  }

  bool find(void* handle, Allocation* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(static_cast<cl_mem>(handle));
    if (it == live_.end()) return false;
    *out = it->second;
    return true;
  }

  // Removes the entry when it exists and has `kind`; returns what it found.
  bool remove(void* handle, anydev_bk_memory_kind_t kind, Allocation* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(static_cast<cl_mem>(handle));
    if (it == live_.end()) return false;
    *out = it->second;
    if (it->second.kind == kind) live_.erase(it);
    return true;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<cl_mem, Allocation> live_;
};

std::string place(const Device& device) {
  return cat("OpenCL device ", device.index, " (", device.name, ")");
}

// OUT_OF_MEMORY before asking OpenCL for more than the device can give.
anydev_status_t check_size(const Device& device, const char* operation, size_t bytes) {
  if (device.max_allocation != 0 && bytes > device.max_allocation) {
    return set_error(
        ANYDEV_ERROR_OUT_OF_MEMORY,
        cat(operation, " of ", bytes, " bytes exceeds the largest allocation ", place(device),
            " allows (CL_DEVICE_MAX_MEM_ALLOC_SIZE = ", device.max_allocation, " bytes)"));
  }
  return ANYDEV_SUCCESS;
}

// Reserves the memory (opencl_accounting.h), then creates the buffer; on
// failure nothing stays reserved.
anydev_status_t create_buffer(Device& device, const char* operation, anydev_bk_memory_kind_t kind,
                              cl_mem_flags flags, size_t bytes, cl_mem* out) {
  if (anydev_status_t s = check_size(device, operation, bytes); s != ANYDEV_SUCCESS) return s;
  cl_context context = nullptr;
  if (anydev_status_t s = device_context(device, &context); s != ANYDEV_SUCCESS) return s;
  const bool counted = counts_against_device(device, kind);
  if (counted) {
    if (anydev_status_t s = reserve_memory(device, operation, bytes); s != ANYDEV_SUCCESS) {
      return s;
    }
  }
  cl_int err = CL_SUCCESS;
  cl_mem mem = cl().clCreateBuffer(context, flags, bytes, nullptr, &err);
  if (err != CL_SUCCESS || mem == nullptr) {
    if (counted) unreserve_memory(device, bytes);
    return set_error(allocation_status(err),
                     cat(cl_failure("clCreateBuffer", err), " in ", operation, " of ", bytes,
                         " bytes on ", place(device)));
  }
  *out = mem;
  return ANYDEV_SUCCESS;
}

}  // namespace

const char* kind_name(anydev_bk_memory_kind_t kind) {
  switch (kind) {
    case ANYDEV_BK_MEMORY_HOST:
      return "pinned host buffer";
    case ANYDEV_BK_MEMORY_DEVICE:
      return "device buffer";
    default:
      return "user host memory";
  }
}

bool find_allocation(void* handle, Allocation* out) {
  return AllocationRegistry::instance().find(handle, out);
}

anydev_status_t host_alloc(int device_index, size_t bytes, void** handle, void** address) {
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "host_alloc", &device); s != ANYDEV_SUCCESS) {
    return s;
  }
  cl_mem mem = nullptr;
  if (anydev_status_t s = create_buffer(*device, "host_alloc", ANYDEV_BK_MEMORY_HOST,
                                        CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, &mem);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  cl_context context = nullptr;
  cl_command_queue internal_queue = nullptr;
  device_context(*device, &context, &internal_queue);  // exists: create_buffer made it
  cl_int err = CL_SUCCESS;
  void* mapped = cl().clEnqueueMapBuffer(internal_queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                         0, bytes, 0, nullptr, nullptr, &err);
  if (err != CL_SUCCESS || mapped == nullptr) {
    cl().clReleaseMemObject(mem);
    if (counts_against_device(*device, ANYDEV_BK_MEMORY_HOST)) unreserve_memory(*device, bytes);
    return set_error(allocation_status(err),
                     cat(cl_failure("clEnqueueMapBuffer", err), " in host_alloc of ", bytes,
                         " bytes on ", place(*device)));
  }
  AllocationRegistry::instance().add(
      mem, Allocation{ANYDEV_BK_MEMORY_HOST, device, bytes, static_cast<char*>(mapped)});
  *handle = mem;
  *address = mapped;
  return ANYDEV_SUCCESS;
}

anydev_status_t device_alloc(int device_index, size_t bytes, anydev_bk_stream_t, void** handle,
                             void** address) {
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "device_alloc", &device); s != ANYDEV_SUCCESS) {
    return s;
  }
  cl_mem mem = nullptr;
  if (anydev_status_t s = create_buffer(*device, "device_alloc", ANYDEV_BK_MEMORY_DEVICE,
                                        CL_MEM_READ_WRITE, bytes, &mem);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  AllocationRegistry::instance().add(mem,
                                     Allocation{ANYDEV_BK_MEMORY_DEVICE, device, bytes, nullptr});
  *handle = mem;
  *address = mem;
  return ANYDEV_SUCCESS;
}

anydev_status_t memory_free(int device_index, anydev_bk_memory_kind_t kind, void* handle) {
  Allocation allocation;
  if (!AllocationRegistry::instance().remove(handle, kind, &allocation)) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("memory_free: ", handle, " is not a live OpenCL allocation (",
                         kind_name(kind), " of device ", device_index, ")"));
  }
  if (allocation.kind != kind) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("memory_free: ", handle, " is a ", kind_name(allocation.kind), ", not a ",
                         kind_name(kind), "; nothing freed"));
  }
  if (allocation.registered) {
    AllocationRegistry::instance().add(static_cast<cl_mem>(handle), allocation);
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("memory_free: ", handle,
                         " is registered host memory (release it with host_unregister); nothing "
                         "freed"));
  }
  auto mem = static_cast<cl_mem>(handle);
  if (kind == ANYDEV_BK_MEMORY_HOST) {
    cl_context context = nullptr;
    cl_command_queue internal_queue = nullptr;
    device_context(*allocation.device, &context, &internal_queue);
    cl_int err =
        cl().clEnqueueUnmapMemObject(internal_queue, mem, allocation.host, 0, nullptr, nullptr);
    if (err == CL_SUCCESS) err = cl().clFlush(internal_queue);
    if (err != CL_SUCCESS) {
      log(ANYDEV_LOG_WARN, cat(cl_failure("clEnqueueUnmapMemObject", err), " in memory_free of ",
                               allocation.bytes, " bytes of pinned host memory on ",
                               place(*allocation.device), "; releasing it anyway"));
    }
  }
  const cl_int err = cl().clReleaseMemObject(mem);
  // The handle is gone from the registry either way: so is its reservation.
  if (counts_against_device(*allocation.device, kind)) {
    unreserve_memory(*allocation.device, allocation.bytes);
  }
  if (err != CL_SUCCESS) {
    return report_cl("clReleaseMemObject", err,
                     cat("memory_free of a ", kind_name(kind), " of ", allocation.bytes,
                         " bytes on ", place(*allocation.device)));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t host_register(int device_index, void* pointer, size_t bytes, void** handle) {
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "host_register", &device);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (pointer == nullptr || handle == nullptr || bytes == 0) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     "host_register: null pointer or handle, or zero bytes");
  }
  if (device->max_allocation != 0 && bytes > device->max_allocation) {
    return set_error(
        ANYDEV_ERROR_OUT_OF_RANGE,
        cat("host_register of ", bytes, " bytes exceeds the largest buffer ", place(*device),
            " allows (CL_DEVICE_MAX_MEM_ALLOC_SIZE = ", device->max_allocation, " bytes)"));
  }
  cl_context context = nullptr;
  if (anydev_status_t s = device_context(*device, &context); s != ANYDEV_SUCCESS) return s;
  cl_int err = CL_SUCCESS;
  cl_mem mem =
      cl().clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, pointer, &err);
  if (err != CL_SUCCESS || mem == nullptr) {
    return set_error(
        allocation_status(err),
        cat(cl_failure("clCreateBuffer(CL_MEM_USE_HOST_PTR)", err), " in host_register of ", bytes,
            " bytes at ", pointer, " on ", place(*device)));
  }
  Allocation allocation{ANYDEV_BK_MEMORY_HOST, device, bytes, static_cast<char*>(pointer)};
  allocation.registered = true;
  AllocationRegistry::instance().add(mem, allocation);
  *handle = mem;
  return ANYDEV_SUCCESS;
}

anydev_status_t host_unregister(int device_index, void* handle) {
  Allocation allocation;
  if (!AllocationRegistry::instance().remove(handle, ANYDEV_BK_MEMORY_HOST, &allocation) ||
      !allocation.registered) {
    if (allocation.kind == ANYDEV_BK_MEMORY_HOST && !allocation.registered &&
        allocation.device != nullptr) {
      AllocationRegistry::instance().add(static_cast<cl_mem>(handle), allocation);
    }
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("host_unregister: ", handle,
                         " is not registered host memory of OpenCL device ", device_index));
  }
  const cl_int err = cl().clReleaseMemObject(static_cast<cl_mem>(handle));
  if (err != CL_SUCCESS) {
    return report_cl("clReleaseMemObject", err,
                     cat("host_unregister of ", allocation.bytes, " bytes at ",
                         static_cast<void*>(allocation.host), " on ", place(*allocation.device)));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
