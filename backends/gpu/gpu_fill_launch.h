// SPDX-License-Identifier: Apache-2.0
// How a GPU backend whose API loads modules and launches kernels in the
// CUDA driver's shape (cuModuleLoadData, cuModuleGetFunction, cuLaunchKernel;
// hipModuleLoadData, hipModuleGetFunction, hipModuleLaunchKernel) runs
// anydev's wide fill kernel (gpu_fill_kernel.h): the module is loaded once
// per device at its first wide fill, by the backend's own loader; when it
// cannot be (the API refuses it, the architecture has no binary, or
// <Api::kFillKernelVariable>=0 turns it off), the log says why once per
// device and the fill plan writes the fill. Thread-safe: the slot is written
// behind its once_flag, then only read.
#ifndef ANYDEV_BACKENDS_GPU_GPU_FILL_LAUNCH_H_
#define ANYDEV_BACKENDS_GPU_GPU_FILL_LAUNCH_H_

#include <cstring>
#include <mutex>
#include <string>

#include "gpu_fill_kernel.h"
#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::gpu {

// The kernel in one device, kept for the life of the process (a module goes
// with its context or device). function == null: not loaded.
template <class Module, class Function>
struct FillKernelSlot {
  std::once_flag once;
  Module module{};
  Function function{};
  unsigned units = 0;  // multiprocessors (compute units): compute_units
};

// Why the kernel is off before asking the API: "<variable>=0", or empty.
template <class Api>
std::string fill_kernel_switched_off() {
  const char* value = services<Api>.get_env(Api::kFillKernelVariable);
  if (value != nullptr && std::strcmp(value, "0") == 0) {
    return cat(Api::kFillKernelVariable, "=0");
  }
  return {};
}

// The device's multiprocessors (compute units), or 0 when the API does not
// say (the grid then has the fewest blocks).
template <class Api>
unsigned compute_units(int device) {
  typename Api::attribute_t native{};
  int units = 0;
  if (!Api::attribute_of(ANYDEV_ATTRIBUTE_COMPUTE_UNITS, &native) ||
      driver<Api>().DeviceGetAttribute(&units, native, device_state<Api>(device).device) !=
          Api::kSuccess ||
      units < 0) {
    return 0;
  }
  return static_cast<unsigned>(units);
}

// The kernel in `slot` for `device`, loading it at the first call with
// load(device, &slot, &why, &refused), which sets slot.module and
// slot.function (on failure: *why says why and slot.function stays null;
// *refused: the API was asked and said no, a warning rather than a note).
// False when the kernel cannot be used (said once in the log).
template <class Api, class Slot, class Load>
bool fill_kernel_loaded(int device, Slot& slot, Load&& load) {
  std::call_once(slot.once, [device, &slot, &load] {
    try {  // nothing may leave call_once by an exception (GCC bug 66146)
      std::string why = fill_kernel_switched_off<Api>();
      bool refused = false;
      if (why.empty()) load(device, &slot, &why, &refused);
      if (slot.function != nullptr) slot.units = compute_units<Api>(device);
      if (slot.function == nullptr) {
        log<Api>(refused ? ANYDEV_LOG_WARN : ANYDEV_LOG_INFO,
                 cat(Api::kName, " device ", device, ": anydev's fill kernel is not used (", why,
                     "); fills of 8- and 16-byte patterns use memsets and copies"));
      }
    } catch (...) {
      slot.function = {};  // out of memory: the plan fills
    }
  });
  return slot.function != nullptr;
}

// A wide fill as one launch on `stream` of the kernel in `slot`, loaded by
// fill_kernel_loaded. The API's launch entry is driver<Api>().LaunchKernel.
template <class Api, class Slot, class Load>
KernelFill launch_fill_kernel(const Stream<Api>& stream, const WideFillArgs& args, Slot& slot,
                              Load&& load, typename Api::status_t* r, const char** call) {
  if (!fill_kernel_loaded<Api>(stream.device, slot, load)) return KernelFill::kUnavailable;

  WideFillLaunch launch(args, slot.units);
  *call = Api::driver_t::names::LaunchKernel;
  *r = call_on_stream<Api>(stream.device, Api::names_its_device(stream.native), "fill", [&] {
    return driver<Api>().LaunchKernel(slot.function, launch.blocks, 1, 1, kWideFillThreads, 1, 1, 0,
                                      stream.native, launch.params, nullptr);
  });
  return *r == Api::kSuccess ? KernelFill::kLaunched : KernelFill::kFailed;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_FILL_LAUNCH_H_
