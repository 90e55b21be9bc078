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

#include <string>

#include "anydev/backend.h"

// Entry points of OpenCL 1.2 that every device this backend offers needs.
#define ANYDEV_OPENCL_REQUIRED_SYMBOLS(X) \
  X(clGetPlatformIDs)                     \
  X(clGetPlatformInfo)                    \
  X(clGetDeviceIDs)                       \
  X(clGetDeviceInfo)                      \
  X(clCreateContext)                      \
  X(clReleaseContext)                     \
  X(clCreateCommandQueue)                 \
  X(clRetainCommandQueue)                 \
  X(clReleaseCommandQueue)                \
  X(clGetCommandQueueInfo)                \
  X(clFlush)                              \
  X(clFinish)                             \
  X(clCreateBuffer)                       \
  X(clReleaseMemObject)                   \
  X(clGetMemObjectInfo)                   \
  X(clEnqueueMapBuffer)                   \
  X(clEnqueueUnmapMemObject)              \
  X(clEnqueueReadBuffer)                  \
  X(clEnqueueWriteBuffer)                 \
  X(clEnqueueCopyBuffer)                  \
  X(clEnqueueFillBuffer)                  \
  X(clEnqueueMarkerWithWaitList)          \
  X(clEnqueueBarrierWithWaitList)         \
  X(clCreateUserEvent)                    \
  X(clSetUserEventStatus)                 \
  X(clSetEventCallback)                   \
  X(clWaitForEvents)                      \
  X(clGetEventInfo)                       \
  X(clRetainEvent)                        \
  X(clReleaseEvent)

// Entry points used when present (OpenCL 2.0+).
#define ANYDEV_OPENCL_OPTIONAL_SYMBOLS(X) X(clCreateCommandQueueWithProperties)

namespace anydev::opencl {

// One pointer per entry point, typed from the Khronos headers.
struct OpenClApi {
#define ANYDEV_OPENCL_DECLARE(name) decltype(&::name) name = nullptr;
  ANYDEV_OPENCL_REQUIRED_SYMBOLS(ANYDEV_OPENCL_DECLARE)
  ANYDEV_OPENCL_OPTIONAL_SYMBOLS(ANYDEV_OPENCL_DECLARE)
#undef ANYDEV_OPENCL_DECLARE
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
