// SPDX-License-Identifier: Apache-2.0
#include "emu_state.h"

#include <pthread.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "emu_config.h"
#include "emu_memory.h"
#include "emu_pool.h"

namespace anydev_emu {
namespace {

struct Devices {
  std::mutex mutex;
  std::atomic<bool> initialized{false};
  std::vector<std::unique_ptr<Device>> list;
};

Devices& D() {
  static Devices* devices = new Devices;  // never destroyed
  return *devices;
}

// Set in a child of fork(): the driver's state belongs to the parent.
std::atomic<bool> g_forked{false};

// The calling thread's context stack. Trivially destructible on purpose: the
// emulator is loaded with dlopen, and a thread_local with a destructor there
// races (for ThreadSanitizer) with glibc reusing the exited thread's TLS.
constexpr int kMaxContextDepth = 256;
thread_local Context* t_stack[kMaxContextDepth];
thread_local int t_depth = 0;

}  // namespace

CUresult check_initialized() {
  return D().initialized.load(std::memory_order_acquire) &&
                 !g_forked.load(std::memory_order_relaxed)
             ? CUDA_SUCCESS
             : CUDA_ERROR_NOT_INITIALIZED;
}

bool is_sticky(CUresult result) {
  switch (result) {
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
      return true;
    default:
      return false;
  }
}

void break_context(Context* context, CUresult fault) {
  CUresult healthy = CUDA_SUCCESS;
  context->sticky.compare_exchange_strong(healthy, fault);
}

CUresult sticky_error(const Context* context) { return context->sticky.load(); }

CUresult initialize(unsigned int flags) {
  if (g_forked.load()) return CUDA_ERROR_NOT_INITIALIZED;  // cuInit in a forked child
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Devices& d = D();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (d.initialized.load()) return CUDA_SUCCESS;
  const int count = get_config().devices;
  if (count == 0) return CUDA_ERROR_NO_DEVICE;
  if (const CUresult r = reserve_device_regions(count); r != CUDA_SUCCESS) return r;
  for (int i = 0; i < count; ++i) {
    auto device = std::make_unique<Device>();
    device->index = i;
    device->primary.device = i;
    device->default_pool = create_pool(i, /*is_default=*/true);
    d.list.push_back(std::move(device));
  }
  pthread_atfork(nullptr, nullptr, [] { g_forked.store(true, std::memory_order_relaxed); });
  d.initialized.store(true, std::memory_order_release);
  return CUDA_SUCCESS;
}

int device_count() { return static_cast<int>(D().list.size()); }

Device* device_at(int index) { return D().list.at(static_cast<std::size_t>(index)).get(); }

CUresult get_device(CUdevice ordinal, Device** out) {
  if (const CUresult r = check_initialized(); r != CUDA_SUCCESS) return r;
  if (ordinal < 0 || ordinal >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
  *out = device_at(ordinal);
  return CUDA_SUCCESS;
}

Context* as_context(CUcontext handle) {
  if (check_initialized() != CUDA_SUCCESS || handle == nullptr) return nullptr;
  for (const auto& device : D().list) {
    if (to_handle(&device->primary) == handle) return &device->primary;
  }
  return nullptr;
}

CUcontext to_handle(Context* context) { return reinterpret_cast<CUcontext>(context); }

CUresult check_retained(Context* context, const char* api) {
  std::lock_guard<std::mutex> lock(context->mutex);
  if (context->retained > 0) return CUDA_SUCCESS;
  report_misuse(std::string(api) + ": the primary context of device " +
                std::to_string(context->device) + " is not retained");
  return CUDA_ERROR_INVALID_CONTEXT;
}

Context* current_context() { return t_depth == 0 ? nullptr : t_stack[t_depth - 1]; }

CUresult require_current(const char* api, Context** out) {
  Context* current = current_context();
  if (current == nullptr) {
    report_misuse(std::string(api) + ": no context is current on this thread");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (const CUresult r = check_retained(current, api); r != CUDA_SUCCESS) return r;
  if (const CUresult r = sticky_error(current); r != CUDA_SUCCESS) return r;
  *out = current;
  return CUDA_SUCCESS;
}

CUresult push_current(Context* context) {
  if (t_depth == kMaxContextDepth) {
    report_misuse("cuCtxPushCurrent: more than " + std::to_string(kMaxContextDepth) +
                  " contexts pushed on one thread (a missing cuCtxPopCurrent?)");
    return CUDA_ERROR_INVALID_VALUE;
  }
  t_stack[t_depth++] = context;
  return CUDA_SUCCESS;
}

Context* pop_current() { return t_depth == 0 ? nullptr : t_stack[--t_depth]; }

void set_current(Context* context) {
  if (t_depth > 0) --t_depth;
  if (context != nullptr) t_stack[t_depth++] = context;
}

}  // namespace anydev_emu
