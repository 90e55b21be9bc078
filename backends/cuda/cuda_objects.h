// SPDX-License-Identifier: Apache-2.0
// The objects behind the backend's opaque stream and event tokens.
//
// The core owns each one from creation until it hands it back to
// stream_destroy / event_destroy, which delete it. The fields never change
// after creation, so any thread may read them; the CUDA driver serializes
// work on the native handles.
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_OBJECTS_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_OBJECTS_H_

#include <cuda.h>

#include "anydev/backend.h"

namespace anydev::cuda {

// A CUstream on one device: created here (owned, destroyed with the object)
// or wrapped from the application (not owned: never destroyed here).
struct CudaStream {
  int device;
  CUstream native;
  bool owned;
};

// A CUevent created on one device without timing.
struct CudaEvent {
  int device;
  CUevent native;
};

inline CudaStream* as_stream(anydev_bk_stream_t s) { return reinterpret_cast<CudaStream*>(s); }
inline CudaEvent* as_event(anydev_bk_event_t e) { return reinterpret_cast<CudaEvent*>(e); }
inline anydev_bk_stream_t to_token(CudaStream* s) {
  return reinterpret_cast<anydev_bk_stream_t>(s);
}
inline anydev_bk_event_t to_token(CudaEvent* e) { return reinterpret_cast<anydev_bk_event_t>(e); }

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_OBJECTS_H_
