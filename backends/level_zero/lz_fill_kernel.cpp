// SPDX-License-Identifier: Apache-2.0
#include "lz_fill_kernel.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "lz_errors.h"
#include "lz_fill_spirv.h"
#include "lz_objects.h"
#include "lz_services.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

constexpr const char* kSwitch = "ANYDEV_LEVEL_ZERO_FILL_KERNEL";

// Makes the module and kernel on `d`; on failure says why in *why and
// leaves k->kernel null. *refused: the driver was asked and said no (worth
// a warning).
void load_kernel(const DeviceState& d, LzFillKernel* k, std::string* why, bool* refused) {
  const LoaderApi& ze = api();
  if (const char* value = get_env(kSwitch); value != nullptr && std::strcmp(value, "0") == 0) {
    *why = cat(kSwitch, "=0");
    return;
  }
  if (ze.zeModuleCreate == nullptr || ze.zeKernelCreate == nullptr ||
      ze.zeKernelSetGroupSize == nullptr || ze.zeKernelSetArgumentValue == nullptr ||
      ze.zeCommandListAppendLaunchKernel == nullptr) {
    *why =
        "the loader lacks zeModuleCreate, zeKernelCreate, zeKernelSetGroupSize, "
        "zeKernelSetArgumentValue or zeCommandListAppendLaunchKernel";
    return;
  }
  *refused = true;
  const std::span<const unsigned char> spirv = fill_spirv();
  ze_module_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
  desc.inputSize = spirv.size();
  desc.pInputModule = spirv.data();
  desc.pBuildFlags = "";
  ze_module_handle_t module = nullptr;
  ze_result_t r = ze.zeModuleCreate(d.driver->context, d.device, &desc, &module, nullptr);
  if (r != ZE_RESULT_SUCCESS) {
    *why = cat("zeModuleCreate failed: ", describe_result(r));
    return;
  }
  ze_kernel_desc_t kernel_desc = {};
  kernel_desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
  kernel_desc.pKernelName = gpu::kWideFillKernel;
  ze_kernel_handle_t kernel = nullptr;
  r = ze.zeKernelCreate(module, &kernel_desc, &kernel);
  if (r != ZE_RESULT_SUCCESS) {
    *why = cat("zeKernelCreate(\"", gpu::kWideFillKernel, "\") failed: ", describe_result(r));
    return;  // the module stays, as the context does
  }
  r = ze.zeKernelSetGroupSize(kernel, gpu::kWideFillThreads, 1, 1);
  if (r != ZE_RESULT_SUCCESS) {
    *why =
        cat("zeKernelSetGroupSize(", gpu::kWideFillThreads, ", 1, 1) failed: ", describe_result(r));
    return;
  }
  ze_device_properties_t props = {};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  const std::uint32_t units = ze.zeDeviceGetProperties(d.device, &props) == ZE_RESULT_SUCCESS
                                  ? props.numSlices * props.numSubslicesPerSlice
                                  : 0;
  k->module = module;
  k->units = units == 0 ? 1u : units;
  k->kernel = kernel;
}

}  // namespace

bool fill_kernel_ready(DeviceState& d) {
  LzFillKernel& k = d.fill_kernel;
  std::call_once(k.once, [&d, &k] {
    try {  // nothing may leave call_once by an exception (GCC bug 66146)
      std::string why;
      bool refused = false;
      load_kernel(d, &k, &why, &refused);
      if (k.kernel == nullptr) {
        log(refused ? ANYDEV_LOG_WARN : ANYDEV_LOG_INFO,
            cat("level_zero device ", d.index, ": anydev's fill kernel is not used (", why,
                "); fills of patterns wider than the device fills use fills and copies"));
      }
    } catch (...) {
      k.kernel = nullptr;  // out of memory: the plan fills
    }
  });
  return k.kernel != nullptr;
}

ze_result_t append_fill_kernel(DeviceState& d, ze_command_list_handle_t list, void* at,
                               const void* pattern, std::size_t period, std::size_t bytes,
                               const char** call) {
  LzFillKernel& k = d.fill_kernel;
  const gpu::WideFillLaunch launch(
      gpu::wide_fill_args(reinterpret_cast<std::uintptr_t>(at), pattern, period, bytes), k.units);
  const ze_group_count_t groups = {launch.blocks, 1, 1};
  const LoaderApi& ze = api();
  const std::lock_guard<std::mutex> lock(k.mutex);
  *call = "zeKernelSetArgumentValue";
  for (std::uint32_t i = 0; i < 4; ++i) {
    if (const ze_result_t r =
            ze.zeKernelSetArgumentValue(k.kernel, i, sizeof(std::uint64_t), launch.params[i]);
        r != ZE_RESULT_SUCCESS) {
      return r;
    }
  }
  *call = "zeCommandListAppendLaunchKernel";
  return ze.zeCommandListAppendLaunchKernel(list, k.kernel, &groups, nullptr, 0, nullptr);
}

gpu::KernelFill fill_by_kernel_locked(LzStream& stream, void* at, const void* pattern,
                                      std::size_t period, std::size_t bytes, ze_result_t* r,
                                      const char** call) {
  DeviceState& d = device_at(stream.device);
  if (!fill_kernel_ready(d)) return gpu::KernelFill::kUnavailable;
  *r = append_fill_kernel(d, stream.list, at, pattern, period, bytes, call);
  if (*r != ZE_RESULT_SUCCESS) return gpu::KernelFill::kFailed;
  *call = "zeCommandListAppendBarrier";
  *r = order_locked(stream);
  return *r == ZE_RESULT_SUCCESS ? gpu::KernelFill::kLaunched : gpu::KernelFill::kFailed;
}

}  // namespace anydev::level_zero
