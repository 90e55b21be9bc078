// SPDX-License-Identifier: Apache-2.0
#include "opencl_devices.h"

#include <CL/cl_ext.h>

#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "opencl_errors.h"
#include "opencl_services.h"

namespace anydev::opencl {
namespace {

// Never destroyed: see the header.
std::vector<std::unique_ptr<Device>>& devices() {
  static auto* list = new std::vector<std::unique_ptr<Device>>();
  return *list;
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  if (cl().clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) {
    return "?";
  }
  std::string text(size, '\0');
  if (cl().clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS) return "?";
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

std::string device_string(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  if (cl().clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) {
    return "?";
  }
  std::string text(size, '\0');
  if (cl().clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS) return "?";
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

template <class T>
T device_value(cl_device_id device, cl_device_info what, T fallback) {
  T value{};
  if (cl().clGetDeviceInfo(device, what, sizeof(value), &value, nullptr) != CL_SUCCESS) {
    return fallback;
  }
  return value;
}

std::string type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  if (type & CL_DEVICE_TYPE_CUSTOM) return "custom";
  return "unknown-type";
}

// "OpenCL 3.0 PoCL ..." -> 3, 0. False when the string does not say.
bool parse_version(const std::string& text, int* major, int* minor) {
  return std::sscanf(text.c_str(), "OpenCL %d.%d", major, minor) == 2;
}

void CL_CALLBACK context_notify(const char* message, const void*, size_t, void* user_data) {
  const auto* device = static_cast<const Device*>(user_data);
  log(ANYDEV_LOG_ERROR, cat("OpenCL context of device ", device->index, " (", device->name,
                            ") reports: ", message != nullptr ? message : "(no text)"));
}

// Adds the usable devices of one platform; `skipped` collects why others
// were left out.
void add_platform_devices(cl_platform_id platform, std::size_t limit, std::string* skipped) {
  const std::string platform_name = platform_string(platform, CL_PLATFORM_NAME);
  cl_uint count = 0;
  cl_int err = cl().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && count == 0)) {
    *skipped += cat("; platform \"", platform_name, "\" has no device");
    return;
  }
  if (err != CL_SUCCESS) {
    *skipped += cat("; platform \"", platform_name, "\": ", cl_failure("clGetDeviceIDs", err));
    return;
  }
  std::vector<cl_device_id> ids(count);
  err = cl().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
  if (err != CL_SUCCESS) {
    *skipped += cat("; platform \"", platform_name, "\": ", cl_failure("clGetDeviceIDs", err));
    return;
  }
  const std::string platform_version = platform_string(platform, CL_PLATFORM_VERSION);
  for (cl_device_id id : ids) {
    auto device = std::make_unique<Device>();
    device->platform = platform;
    device->id = id;
    const std::string device_name = device_string(id, CL_DEVICE_NAME);
    device->name = cat(platform_name, ": ", device_name);
    const std::string version = device_string(id, CL_DEVICE_VERSION);
    if (!parse_version(version, &device->version_major, &device->version_minor) ||
        device->version_major * 10 + device->version_minor < 12) {
      *skipped += cat("; device \"", device->name, "\" reports \"", version,
                      "\" (anydev needs OpenCL 1.2)");
      continue;
    }
    if (device_value<cl_bool>(id, CL_DEVICE_AVAILABLE, CL_FALSE) != CL_TRUE) {
      *skipped += cat("; device \"", device->name, "\" is not available (CL_DEVICE_AVAILABLE)");
      continue;
    }
    device->type = device_value<cl_device_type>(id, CL_DEVICE_TYPE, 0);
    device->global_memory = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE, 0);
    device->max_allocation = device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
    device->host_unified_memory =
        device_value<cl_bool>(id, CL_DEVICE_HOST_UNIFIED_MEMORY, CL_FALSE) == CL_TRUE;
    device->memory_limit = device->global_memory;
    if (limit != 0 && limit < device->global_memory) {
      device->memory_limit = limit;
      device->limit_source = kMemoryLimitVariable;
    }
    const std::string extensions = device_string(id, CL_DEVICE_EXTENSIONS);
    device->reports_free_memory =
        extensions.find("cl_amd_device_attribute_query") != std::string::npos;
    device->description =
        cat("OpenCL ", type_name(device->type), " device; ", version, "; driver ",
            device_string(id, CL_DRIVER_VERSION), "; platform ", platform_name, " (",
            platform_version, "); global memory ", device->global_memory >> 20,
            " MiB, largest allocation ", device->max_allocation >> 20, " MiB");
    if (device->memory_limit != device->global_memory) {
      device->description += cat(" (anydev allocates at most ", device->memory_limit >> 20,
                                 " MiB: ", kMemoryLimitVariable, ")");
    }
    device->index = static_cast<int>(devices().size());
    devices().push_back(std::move(device));
  }
}

}  // namespace

anydev_status_t enumerate_devices() {
  devices().clear();
  cl_uint count = 0;
  cl_int err = cl().clGetPlatformIDs(0, nullptr, &count);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && count == 0)) {
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                     "no OpenCL platform: the ICD loader found no driver (install one, e.g. "
                     "pocl-opencl-icd, or check /etc/OpenCL/vendors and OCL_ICD_VENDORS)");
  }
  if (err != CL_SUCCESS) {
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                     cat(cl_failure("clGetPlatformIDs", err), " while listing OpenCL platforms"));
  }
  std::vector<cl_platform_id> platforms(count);
  err = cl().clGetPlatformIDs(count, platforms.data(), nullptr);
  if (err != CL_SUCCESS) {
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                     cat(cl_failure("clGetPlatformIDs", err), " while listing OpenCL platforms"));
  }
  std::size_t limit = 0;
  if (anydev_status_t s = read_memory_limit(&limit); s != ANYDEV_SUCCESS) return s;
  std::string skipped;
  for (cl_platform_id platform : platforms) add_platform_devices(platform, limit, &skipped);
  if (devices().empty()) {
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                     cat("no usable OpenCL device on ", count, " platform(s)", skipped));
  }
  if (!skipped.empty()) log(ANYDEV_LOG_INFO, cat("devices left out", skipped));
  return ANYDEV_SUCCESS;
}

int device_count() { return static_cast<int>(devices().size()); }

anydev_status_t find_device(int index, const char* operation, Device** out) {
  if (index < 0 || index >= device_count()) {
    return set_error(ANYDEV_ERROR_OUT_OF_RANGE,
                     cat(operation, ": OpenCL device index ", index, " is out of range (",
                         device_count(), " device(s))"));
  }
  *out = devices()[static_cast<size_t>(index)].get();
  return ANYDEV_SUCCESS;
}

anydev_status_t device_context(Device& device, cl_context* context,
                               cl_command_queue* internal_queue) {
  std::lock_guard<std::mutex> lock(device.mutex);
  if (device.context == nullptr) {
    const cl_context_properties properties[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device.platform), 0};
    cl_int err = CL_SUCCESS;
    cl_context created =
        cl().clCreateContext(properties, 1, &device.id, context_notify, &device, &err);
    if (err != CL_SUCCESS || created == nullptr) {
      return report_cl(
          "clCreateContext", err,
          cat("creating the context of OpenCL device ", device.index, " (", device.name, ")"));
    }
    cl_command_queue queue = cl().clCreateCommandQueue(created, device.id, 0, &err);
    if (err != CL_SUCCESS || queue == nullptr) {
      cl().clReleaseContext(created);
      return report_cl("clCreateCommandQueue", err,
                       cat("creating the internal queue of OpenCL device ", device.index, " (",
                           device.name, ")"));
    }
    device.context = created;
    device.internal_queue = queue;
  }
  *context = device.context;
  if (internal_queue != nullptr) *internal_queue = device.internal_queue;
  return ANYDEV_SUCCESS;
}

anydev_status_t create_queue(Device& device, cl_command_queue* out) {
  return create_queue(device, 0, out);
}

bool has_priority_hints(const Device& device) {
  if (device.version_major < 2 || cl().clCreateCommandQueueWithProperties == nullptr) return false;
  std::size_t size = 0;
  if (cl().clGetDeviceInfo(device.id, CL_DEVICE_EXTENSIONS, 0, nullptr, &size) != CL_SUCCESS) {
    return false;
  }
  std::string text(size, '\0');
  if (cl().clGetDeviceInfo(device.id, CL_DEVICE_EXTENSIONS, size, text.data(), nullptr) !=
      CL_SUCCESS) {
    return false;
  }
  text = " " + text + " ";
  return text.find(" cl_khr_priority_hints ") != std::string::npos;
}

anydev_status_t create_queue(Device& device, int priority, cl_command_queue* out) {
  cl_context context = nullptr;
  if (anydev_status_t status = device_context(device, &context); status != ANYDEV_SUCCESS) {
    return status;
  }
  cl_int err = CL_SUCCESS;
  cl_command_queue queue = nullptr;
  const char* call = "clCreateCommandQueue";
  if (device.version_major >= 2 && cl().clCreateCommandQueueWithProperties != nullptr) {
    call = "clCreateCommandQueueWithProperties";
    const cl_queue_properties high[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE,
                                        CL_QUEUE_PRIORITY_KHR, CL_QUEUE_PRIORITY_HIGH_KHR, 0};
    const cl_queue_properties normal[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    queue = cl().clCreateCommandQueueWithProperties(context, device.id,
                                                    priority < 0 ? high : normal, &err);
  } else {
    queue = cl().clCreateCommandQueue(context, device.id, CL_QUEUE_PROFILING_ENABLE, &err);
  }
  if (err != CL_SUCCESS || queue == nullptr) {
    return report_cl(call, err,
                     cat("creating a stream on OpenCL device ", device.index, " (", device.name,
                         ")", priority < 0 ? " at CL_QUEUE_PRIORITY_HIGH_KHR" : ""));
  }
  *out = queue;
  return ANYDEV_SUCCESS;
}

anydev_status_t read_memory_limit(std::size_t* limit) {
  *limit = 0;
  const char* text = get_env(kMemoryLimitVariable);
  if (text == nullptr) return ANYDEV_SUCCESS;
  const std::string value(text);
  std::size_t bytes = 0;
  bool valid = !value.empty() && value.size() <= 20;
  for (char c : value) {
    if (!valid) break;
    if (c < '0' || c > '9') {
      valid = false;
      break;
    }
    const auto digit = static_cast<std::size_t>(c - '0');
    if (bytes > (std::numeric_limits<std::size_t>::max() - digit) / 10) {
      valid = false;
      break;
    }
    bytes = bytes * 10 + digit;
  }
  if (!valid || bytes == 0) {
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                     cat(kMemoryLimitVariable, "=\"", value,
                         "\" is not a number of bytes above zero (decimal digits only, e.g. "
                         "67108864 for 64 MiB)"));
  }
  *limit = bytes;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
