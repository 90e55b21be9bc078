// SPDX-License-Identifier: Apache-2.0
// The OpenCL devices this backend offers, and the per-device OpenCL objects
// created on first use.
//
// enumerate_devices() (called once by initialize, under the core's registry
// lock) lists every platform x every device (CL_DEVICE_TYPE_ALL: GPUs, CPUs,
// accelerators, custom) in one flat list; anydev's device index is the
// position in that list. Devices that are not available or do not support
// OpenCL 1.2 are skipped with a log line. The list is immutable afterwards.
//
// Each device gets one cl_context and one internal in-order queue (used to
// map and unmap pinned host buffers), both created on first use under the
// device's mutex and kept for the life of the process. Device objects are
// never destroyed, so handles released during exit still find them.
// Thread-safe.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_DEVICES_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_DEVICES_H_

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

#include "opencl_symbols.h"

namespace anydev::opencl {

// The name of the variable that lowers every device's limit.
inline constexpr const char* kMemoryLimitVariable = "ANYDEV_OPENCL_MEMORY_LIMIT";

// Reads ANYDEV_OPENCL_MEMORY_LIMIT: `*limit` = 0 when unset, else its value.
// BACKEND_UNAVAILABLE (error set, naming the value) when it is not a decimal
// number of bytes above zero: the backend is not opened with a wrong limit.
anydev_status_t read_memory_limit(std::size_t* limit);

// One OpenCL device. Fields above the mutex are immutable after enumeration.
struct Device {
  int index = 0;
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name;         // "platform name: device name"
  std::string description;  // type, versions, driver, limits
  cl_device_type type = 0;
  std::size_t global_memory = 0;
  std::size_t max_allocation = 0;
  int version_major = 1;  // from CL_DEVICE_VERSION
  int version_minor = 2;
  bool reports_free_memory = false;  // cl_amd_device_attribute_query
  bool host_unified_memory = false;  // CL_DEVICE_HOST_UNIFIED_MEMORY
  // What allocations may take in all (opencl_accounting.h): global_memory,
  // or less when ANYDEV_OPENCL_MEMORY_LIMIT says so; limit_source says which.
  std::size_t memory_limit = 0;
  const char* limit_source = "CL_DEVICE_GLOBAL_MEM_SIZE";

  // Bytes of the live allocations counted against memory_limit.
  std::atomic<std::size_t> accounted{0};

  std::mutex mutex;  // guards the lazily created objects below
  cl_context context = nullptr;
  cl_command_queue internal_queue = nullptr;
};

// Lists the devices. BACKEND_UNAVAILABLE (with the reason set) when there is
// no platform or no usable device, or ANYDEV_OPENCL_MEMORY_LIMIT is malformed.
anydev_status_t enumerate_devices();

int device_count();

// The device with that index; OUT_OF_RANGE (error set, naming `operation`)
// when there is none.
anydev_status_t find_device(int index, const char* operation, Device** out);

// The device's context and internal queue, created on first use.
anydev_status_t device_context(Device& device, cl_context* context,
                               cl_command_queue* internal_queue = nullptr);

// A new in-order queue on the device (clCreateCommandQueueWithProperties on
// OpenCL 2.0+ devices when the loader has it, else clCreateCommandQueue).
anydev_status_t create_queue(Device& device, cl_command_queue* out);
// Same at an anydev stream priority (opencl_timing.cpp): -1 asks for
// CL_QUEUE_PRIORITY_HIGH_KHR (cl_khr_priority_hints), 0 for none. Every
// queue it makes has CL_QUEUE_PROFILING_ENABLE, so timing events recorded on
// it can read CL_PROFILING_COMMAND_END.
anydev_status_t create_queue(Device& device, int priority, cl_command_queue* out);
// Whether the device lists cl_khr_priority_hints (and queues with
// properties, OpenCL 2.0+, can ask for it).
bool has_priority_hints(const Device& device);

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_DEVICES_H_
