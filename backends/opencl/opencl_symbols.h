// SPDX-License-Identifier: Apache-2.0
// The OpenCL entry points this backend calls, resolved at run time from the
// ICD loader (libOpenCL.so.1, or the file named by ANYDEV_OPENCL_LIBRARY)
// with dlopen. The plugin never links libOpenCL: every call goes through
// `cl()`, the one table filled by load_opencl().
//
// The table is filled once, by initialize (under the core's registry lock),
// and is read-only afterwards: reading it is thread-safe. The library handle
// is never closed (OpenCL drivers start threads that must not lose their code).
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_SYMBOLS_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_SYMBOLS_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <string>

#include "anydev/backend.h"
#include "anydev/kit/symbols.h"

// The entry points this backend calls, in one list for the backend kit
// (include/anydev/kit/symbols.h): REQUIRED ones are OpenCL 1.2 that every
// device this backend offers needs; OPTIONAL ones are used when present
// (OpenCL 2.0+). Each is resolved with dlsym under its own name; extension
// entry points (cl_khr_command_buffer, opencl_graph.cpp) are looked up per
// platform with clGetExtensionFunctionAddressForPlatform instead.
#define ANYDEV_OPENCL_SYMBOL(X, name, need) X(name, need, decltype(&::name), #name)
#define ANYDEV_OPENCL_SYMBOLS(X)                                        \
  ANYDEV_OPENCL_SYMBOL(X, clGetPlatformIDs, REQUIRED)                   \
  ANYDEV_OPENCL_SYMBOL(X, clGetPlatformInfo, REQUIRED)                  \
  ANYDEV_OPENCL_SYMBOL(X, clGetDeviceIDs, REQUIRED)                     \
  ANYDEV_OPENCL_SYMBOL(X, clGetDeviceInfo, REQUIRED)                    \
  ANYDEV_OPENCL_SYMBOL(X, clCreateContext, REQUIRED)                    \
  ANYDEV_OPENCL_SYMBOL(X, clReleaseContext, REQUIRED)                   \
  ANYDEV_OPENCL_SYMBOL(X, clCreateCommandQueue, REQUIRED)               \
  ANYDEV_OPENCL_SYMBOL(X, clRetainCommandQueue, REQUIRED)               \
  ANYDEV_OPENCL_SYMBOL(X, clReleaseCommandQueue, REQUIRED)              \
  ANYDEV_OPENCL_SYMBOL(X, clGetCommandQueueInfo, REQUIRED)              \
  ANYDEV_OPENCL_SYMBOL(X, clFlush, REQUIRED)                            \
  ANYDEV_OPENCL_SYMBOL(X, clFinish, REQUIRED)                           \
  ANYDEV_OPENCL_SYMBOL(X, clCreateBuffer, REQUIRED)                     \
  ANYDEV_OPENCL_SYMBOL(X, clReleaseMemObject, REQUIRED)                 \
  ANYDEV_OPENCL_SYMBOL(X, clGetMemObjectInfo, REQUIRED)                 \
  ANYDEV_OPENCL_SYMBOL(X, clEnqueueMapBuffer, REQUIRED)                 \
  ANYDEV_OPENCL_SYMBOL(X, clEnqueueUnmapMemObject, REQUIRED)            \
  ANYDEV_OPENCL_SYMBOL(X, clEnqueueReadBuffer, REQUIRED)                \
  ANYDEV_OPENCL_SYMBOL(X, clEnqueueWriteBuffer, REQUIRED)               \
  ANYDEV_OPENCL_SYMBOL(X, clEnqueueCopyBuffer, REQUIRED)                \
  ANYDEV_OPENCL_SYMBOL(X, clEnqueueFillBuffer, REQUIRED)                \
  ANYDEV_OPENCL_SYMBOL(X, clEnqueueMarkerWithWaitList, REQUIRED)        \
  ANYDEV_OPENCL_SYMBOL(X, clEnqueueBarrierWithWaitList, REQUIRED)       \
  ANYDEV_OPENCL_SYMBOL(X, clCreateUserEvent, REQUIRED)                  \
  ANYDEV_OPENCL_SYMBOL(X, clSetUserEventStatus, REQUIRED)               \
  ANYDEV_OPENCL_SYMBOL(X, clSetEventCallback, REQUIRED)                 \
  ANYDEV_OPENCL_SYMBOL(X, clWaitForEvents, REQUIRED)                    \
  ANYDEV_OPENCL_SYMBOL(X, clGetEventInfo, REQUIRED)                     \
  ANYDEV_OPENCL_SYMBOL(X, clRetainEvent, REQUIRED)                      \
  ANYDEV_OPENCL_SYMBOL(X, clReleaseEvent, REQUIRED)                     \
  ANYDEV_OPENCL_SYMBOL(X, clCreateCommandQueueWithProperties, OPTIONAL) \
  ANYDEV_OPENCL_SYMBOL(X, clGetEventProfilingInfo, OPTIONAL)            \
  ANYDEV_OPENCL_SYMBOL(X, clGetExtensionFunctionAddressForPlatform, OPTIONAL)

namespace anydev::opencl {

// One pointer per entry point, typed from the Khronos headers.
struct OpenClApi {
  ANYDEV_KIT_SYMBOL_FIELDS(ANYDEV_OPENCL_SYMBOLS)
};

// The environment variable that names another ICD loader (or a driver).
inline constexpr const char* kLibraryVariable = "ANYDEV_OPENCL_LIBRARY";
inline constexpr const char* kDefaultLibrary = "libOpenCL.so.1";

// Opens the library (ANYDEV_OPENCL_LIBRARY, else libOpenCL.so.1) and resolves
// every symbol. `*library` receives the file opened or tried. On failure sets
// the core's error (BACKEND_UNAVAILABLE naming the file, the symbol and the
// dlerror text) and returns that status.
anydev_status_t load_opencl(std::string* library);

// The table; valid only after load_opencl succeeded.
const OpenClApi& cl();

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_SYMBOLS_H_
