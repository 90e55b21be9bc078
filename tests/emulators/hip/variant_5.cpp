// SPDX-License-Identifier: Apache-2.0
// The HIP 5.2 variant (libamdhip64.so.5): what Debian's libamdhip64-5 5.2.3
// exports, so no hipMemsetD2D32Async; its device properties entry is
// hipGetDeviceProperties.
#include <hip/hip_version.h>

#include "hip_face.h"

namespace anydev_emu::hip {
int runtime_version() { return HIP_VERSION; }  // the 5.2 headers' version
}  // namespace anydev_emu::hip

extern "C" hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int device) {
  namespace hip = anydev_emu::hip;
  hip::count(hip::Call::hipGetDeviceProperties);
  return hip::device_properties(prop, device);
}
