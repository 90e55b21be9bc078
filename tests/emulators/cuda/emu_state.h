// The emulator's devices, primary contexts and per-thread current context.
//
// Devices and their contexts are created by cuInit and live until the process
// exits (never destroyed: stream workers may still run then). A Context's
// fields are guarded by its own mutex; the current-context stack is
// thread-local, as in the real driver.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_STATE_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_STATE_H_

#include <cuda.h>

#include <mutex>
#include <set>

namespace anydev_emu {

struct Context {
  int device = 0;
  std::mutex mutex;
  int retained = 0;     // cuDevicePrimaryCtxRetain count
  std::set<int> peers;  // devices whose memory this context may access
};

struct Device {
  int index = 0;
  Context primary;
  int pool_token = 0;         // what CUmemoryPool points at
  std::set<int> pool_access;  // devices granted access to the default pool
};

// CUDA_ERROR_NOT_INITIALIZED before a successful cuInit.
CUresult CheckInitialized();
CUresult Initialize(unsigned int flags);

int DeviceCount();
// CUDA_ERROR_INVALID_DEVICE for an ordinal that is not a device.
CUresult GetDevice(CUdevice ordinal, Device** out);
Device* DeviceAt(int index);

// The emulator context behind `handle`, or null when it is not one.
Context* AsContext(CUcontext handle);
CUcontext ToHandle(Context* context);
// CUDA_ERROR_INVALID_CONTEXT unless the context is retained.
CUresult CheckRetained(Context* context, const char* api);

// The calling thread's current context (null when none).
Context* CurrentContext();
// CUDA_ERROR_INVALID_CONTEXT (reported with `api`) when no retained context
// is current on the calling thread.
CUresult RequireCurrent(const char* api, Context** out);
CUresult PushCurrent(Context* context);  // INVALID_VALUE past 256 deep
Context* PopCurrent();                   // null when the stack is empty
void SetCurrent(Context* context);

}  // namespace anydev_emu

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_STATE_H_
