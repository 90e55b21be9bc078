// SPDX-License-Identifier: Apache-2.0
#include "hip_face.h"

#include <array>
#include <atomic>
#include <cstdint>

#include "core_config.h"

namespace anydev_emu {

extern const core::Identity core::kIdentity{"ANYDEV_HIP_EMULATOR_", "anydev-hip-emulator"};

namespace hip {
namespace {

constexpr std::size_t kCalls = static_cast<std::size_t>(Call::count);
std::array<std::atomic<std::uint64_t>, kCalls> g_calls{};

std::span<const core::CallCounter> call_table() {
  static const auto table = [] {
    constexpr const char* kNames[] = {
#define ANYDEV_HIP_EMULATOR_NAME(name) #name,
        ANYDEV_HIP_EMULATOR_CALLS(ANYDEV_HIP_EMULATOR_NAME)
#undef ANYDEV_HIP_EMULATOR_NAME
    };
    std::array<core::CallCounter, kCalls> counters{};
    for (std::size_t i = 0; i < kCalls; ++i) counters[i] = {kNames[i], &g_calls[i]};
    return counters;
  }();
  return table;
}

// The calling thread's device; trivially destructible (see the CUDA face).
thread_local int t_device = 0;

}  // namespace

void count(Call call) {
  g_calls[static_cast<std::size_t>(call)].fetch_add(1, std::memory_order_relaxed);
}

hipError_t to_hip(core::Status status) { return core::shared_code<hipError_t>(status); }

hipError_t ready() { return to_hip(core::initialize(0)); }

int current_device() { return t_device; }

void set_current_device(int device) { t_device = device; }

hipError_t current(core::Context** out) {
  core::Device* device = nullptr;
  if (const hipError_t e = device_of(t_device, &device); e != hipSuccess) return e;
  if (const hipError_t e = to_hip(core::sticky_error(&device->primary)); e != hipSuccess) return e;
  *out = &device->primary;
  return hipSuccess;
}

hipError_t device_of(int ordinal, core::Device** out) {
  if (const hipError_t e = ready(); e != hipSuccess) return e;
  return to_hip(core::get_device(ordinal, out));
}

hipError_t stream_of(hipStream_t handle, const char* api, core::StreamRef* out) {
  if (handle == nullptr || handle == hipStreamPerThread) {
    core::Context* context = nullptr;
    if (const hipError_t e = current(&context); e != hipSuccess) return e;
    *out = core::default_stream(context);
    return hipSuccess;
  }
  if (const hipError_t e = ready(); e != hipSuccess) return e;
  return to_hip(core::lookup_stream(handle, api, out));
}

hipError_t event_of(hipEvent_t handle, const char* api, core::EventRef* out) {
  if (const hipError_t e = ready(); e != hipSuccess) return e;
  return to_hip(core::lookup_event(handle, api, out));
}

}  // namespace hip
}  // namespace anydev_emu

ANYDEV_EMU_DEFINE_CALL_COUNT_EXPORTS(anydev_hip_emulator, anydev_emu::hip::call_table)
