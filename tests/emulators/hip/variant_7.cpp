// SPDX-License-Identifier: Apache-2.0
// The ROCm 7 variant (rocm7/libamdhip64.so.7): the 5.2 calls plus
// hipMemsetD2D32Async, which HIP gained in ROCm 7.1 (5.2's headers lack it,
// so it is declared here with ROCm's signature: `width` 32-bit values in each
// of `height` rows `pitch` bytes apart); and the device properties in HIP 5's
// layout under ROCm 6's name for it, hipGetDevicePropertiesR0000.
#include <hip/hip_runtime_api.h>

#include <cstdint>

#include "hip_face.h"

namespace anydev_emu::hip {
int runtime_version() { return 7 * 10000000 + 1 * 100000; }  // 7.1.0, as HIP_VERSION counts
}  // namespace anydev_emu::hip

extern "C" hipError_t hipMemsetD2D32Async(hipDeviceptr_t dst, size_t pitch, unsigned int value,
                                          size_t width, size_t height, hipStream_t stream) {
  namespace hip = anydev_emu::hip;
  hip::count(hip::Call::hipMemsetD2D32Async);
  return hip::fill("hipMemsetD2D32Async", stream, dst, value, 4, width, height, pitch);
}

extern "C" hipError_t hipGetDevicePropertiesR0000(void* prop, int device) {
  namespace hip = anydev_emu::hip;
  hip::count(hip::Call::hipGetDevicePropertiesR0000);
  return hip::device_properties(prop, device);
}
