// SPDX-License-Identifier: Apache-2.0
// anydev-opencl-fill-kernel-bench: does a fill kernel built from OpenCL C
// source beat clEnqueueFillBuffer for 8- and 16-byte patterns on this
// OpenCL device? Raw OpenCL only, both in the same run on the same buffer:
//
//   fill_buffer_N   clEnqueueFillBuffer with an N-byte pattern (4, 8, 16)
//   flat kernel     one launch of a kernel storing one ulong (8) or ulong2
//                   (16) element per work-item, the global size the elements
//   strided kernel  the same kernel as a grid-stride loop over the device's
//                   compute units x 64 work-items (the CUDA kernel's shape)
//
// at 1, 16, 64 and 256 MiB. Every operation is enqueued alone and waited
// for (clFinish). The two sides of a width alternate operation by operation
// (ROUNDS rounds of the three, default 15) and the table gives each one's
// median GB/s and the medians of the per-round ratios kernel / fill buffer,
// the figures that decide (docs/performance.md). Before timing, each path's result is read
// back and checked bit for bit.
//
//   anydev-opencl-fill-kernel-bench [ROUNDS]
// ANYDEV_BENCH_OPENCL_DEVICE picks the device index over all platforms
// (default 0). Exits 77 when there is no OpenCL device.
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kSizesMiB[] = {1, 16, 64, 256};

const char* kSource = R"cl(
__kernel void fill8(__global ulong* dst, ulong value, ulong n) {
  for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = value;
}
__kernel void fill16(__global ulong2* dst, ulong lo, ulong hi, ulong n) {
  const ulong2 value = (ulong2)(lo, hi);
  for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = value;
}
)cl";

[[noreturn]] void fail(const char* what, cl_int err) {
  std::fprintf(stderr, "anydev-opencl-fill-kernel-bench: %s failed: %d\n", what, err);
  std::exit(1);
}

void check(const char* what, cl_int err) {
  if (err != CL_SUCCESS) fail(what, err);
}

struct Cl {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_kernel fill8 = nullptr;
  cl_kernel fill16 = nullptr;
  cl_uint units = 1;
  std::string name;
};

bool open(Cl* cl) {
  cl_uint platforms = 0;
  if (clGetPlatformIDs(0, nullptr, &platforms) != CL_SUCCESS || platforms == 0) return false;
  std::vector<cl_platform_id> ids(platforms);
  check("clGetPlatformIDs", clGetPlatformIDs(platforms, ids.data(), nullptr));
  std::vector<cl_device_id> devices;
  for (cl_platform_id p : ids) {
    cl_uint n = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS) continue;
    std::vector<cl_device_id> some(n);
    check("clGetDeviceIDs", clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, some.data(), nullptr));
    devices.insert(devices.end(), some.begin(), some.end());
  }
  const char* pick = std::getenv("ANYDEV_BENCH_OPENCL_DEVICE");
  const std::size_t index = pick != nullptr ? std::strtoul(pick, nullptr, 10) : 0;
  if (index >= devices.size()) return false;
  cl->device = devices[index];
  char name[256] = {};
  clGetDeviceInfo(cl->device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
  cl->name = name;
  clGetDeviceInfo(cl->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cl->units, &cl->units, nullptr);
  cl_int err = CL_SUCCESS;
  cl->context = clCreateContext(nullptr, 1, &cl->device, nullptr, nullptr, &err);
  check("clCreateContext", err);
  cl->queue = clCreateCommandQueue(cl->context, cl->device, 0, &err);
  check("clCreateCommandQueue", err);
  cl_program program = clCreateProgramWithSource(cl->context, 1, &kSource, nullptr, &err);
  check("clCreateProgramWithSource", err);
  check("clBuildProgram", clBuildProgram(program, 1, &cl->device, "", nullptr, nullptr));
  cl->fill8 = clCreateKernel(program, "fill8", &err);
  check("clCreateKernel(fill8)", err);
  cl->fill16 = clCreateKernel(program, "fill16", &err);
  check("clCreateKernel(fill16)", err);
  clReleaseProgram(program);
  return true;
}

const unsigned char kPattern[16] = {0x01, 0x12, 0x23, 0x34, 0x45, 0x56, 0x67, 0x78,
                                    0x89, 0x9a, 0xab, 0xbc, 0xcd, 0xde, 0xef, 0xf0};

void fill_buffer(const Cl& cl, cl_mem buffer, std::size_t bytes, std::size_t width) {
  check("clEnqueueFillBuffer",
        clEnqueueFillBuffer(cl.queue, buffer, kPattern, width, 0, bytes, 0, nullptr, nullptr));
}

void fill_kernel(const Cl& cl, cl_mem buffer, std::size_t bytes, std::size_t width, bool strided) {
  const cl_ulong n = bytes / width;
  cl_ulong lo = 0;
  cl_ulong hi = 0;
  std::memcpy(&lo, kPattern, 8);
  std::memcpy(&hi, kPattern + 8, 8);
  cl_kernel k = width == 8 ? cl.fill8 : cl.fill16;
  cl_uint arg = 0;
  check("clSetKernelArg", clSetKernelArg(k, arg++, sizeof buffer, &buffer));
  check("clSetKernelArg", clSetKernelArg(k, arg++, sizeof lo, &lo));
  if (width == 16) check("clSetKernelArg", clSetKernelArg(k, arg++, sizeof hi, &hi));
  check("clSetKernelArg", clSetKernelArg(k, arg++, sizeof n, &n));
  const std::size_t global = strided ? std::min<std::size_t>(std::size_t{cl.units} * 64, n) : n;
  check("clEnqueueNDRangeKernel",
        clEnqueueNDRangeKernel(cl.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
}

void fill_flat(const Cl& cl, cl_mem buffer, std::size_t bytes, std::size_t width) {
  fill_kernel(cl, buffer, bytes, width, false);
}

void fill_strided(const Cl& cl, cl_mem buffer, std::size_t bytes, std::size_t width) {
  fill_kernel(cl, buffer, bytes, width, true);
}

using FillFn = void (*)(const Cl&, cl_mem, std::size_t, std::size_t);

double timed(const Cl& cl, FillFn fn, cl_mem buffer, std::size_t bytes, std::size_t width) {
  const auto start = std::chrono::steady_clock::now();
  fn(cl, buffer, bytes, width);
  check("clFinish", clFinish(cl.queue));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool exact(const Cl& cl, FillFn fn, cl_mem buffer, std::size_t bytes, std::size_t width) {
  std::vector<unsigned char> zero(bytes, 0);
  check("clEnqueueWriteBuffer", clEnqueueWriteBuffer(cl.queue, buffer, CL_TRUE, 0, bytes,
                                                     zero.data(), 0, nullptr, nullptr));
  fn(cl, buffer, bytes, width);
  std::vector<unsigned char> back(bytes);
  check("clEnqueueReadBuffer",
        clEnqueueReadBuffer(cl.queue, buffer, CL_TRUE, 0, bytes, back.data(), 0, nullptr, nullptr));
  for (std::size_t i = 0; i < bytes; ++i) {
    if (back[i] != kPattern[i % width]) return false;
  }
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 15;
  Cl cl;
  if (!open(&cl)) {
    std::fprintf(stderr, "anydev-opencl-fill-kernel-bench: no OpenCL device\n");
    return 77;
  }
  std::printf("device: %s, %u compute units; %d alternated rounds per row\n", cl.name.c_str(),
              cl.units, rounds);
  std::printf(
      "| width | size | clEnqueueFillBuffer GB/s | flat kernel GB/s | strided kernel "
      "GB/s | flat / fill buffer | strided / fill buffer | exact |\n"
      "|---|---|---|---|---|---|---|---|\n");
  cl_int err = CL_SUCCESS;
  for (const std::size_t mib : kSizesMiB) {
    const std::size_t bytes = mib * kMiB;
    cl_mem buffer = clCreateBuffer(cl.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    check("clCreateBuffer", err);
    for (const std::size_t width : {std::size_t{8}, std::size_t{16}}) {
      const FillFn fns[3] = {fill_buffer, fill_flat, fill_strided};
      bool ok = true;
      for (const FillFn fn : fns) {
        ok = ok && exact(cl, fn, buffer, bytes, width);
        timed(cl, fn, buffer, bytes, width);  // warm-up: first touch, kernel JIT
      }
      std::vector<double> gbs[3];
      std::vector<double> ratio[2];
      for (int r = 0; r < rounds; ++r) {
        double t[3];
        for (int i = 0; i < 3; ++i) {
          t[i] = timed(cl, fns[i], buffer, bytes, width);
          gbs[i].push_back(static_cast<double>(bytes) / t[i] / 1e9);
        }
        ratio[0].push_back(t[0] / t[1]);
        ratio[1].push_back(t[0] / t[2]);
      }
      std::printf("| %zu | %zu MiB | %.2f | %.2f | %.2f | %.3f | %.3f | %s |\n", width, mib,
                  median(gbs[0]), median(gbs[1]), median(gbs[2]), median(ratio[0]),
                  median(ratio[1]), ok ? "yes" : "NO");
    }
    clReleaseMemObject(buffer);
  }
  return 0;
}
