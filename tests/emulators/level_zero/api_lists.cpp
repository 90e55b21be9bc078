// SPDX-License-Identifier: Apache-2.0
// The immediate command-list entry points of the emulated driver: copies,
// fills, barriers and waits (emu_lz.h says how batches run).
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {
namespace {

#define ANYDEV_LZ_LIST(api, h, list)                                                    \
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;                             \
  if ((h) == nullptr) {                                                                 \
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, api ": null command list");      \
  }                                                                                     \
  CommandListRef list = find_command_list(h);                                           \
  if (list == nullptr) {                                                                \
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, api ": unknown or destroyed list"); \
  }

// As ANYDEV_LZ_LIST, for an append: a closed list takes no command.
#define ANYDEV_LZ_APPEND_LIST(api, h, list)                         \
  ANYDEV_LZ_LIST(api, h, list)                                      \
  if (list->closed) {                                               \
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,                 \
                  api ": the list is closed (zeCommandListClose)"); \
  }

// Events that a command signals or waits for: live, of the list's context.
ze_result_t events_of(const CommandList& list, std::uint32_t n, ze_event_handle_t* handles,
                      const char* api, std::vector<EventRef>* out) {
  if (n > 0 && handles == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, std::string(api) + ": null events");
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    EventRef e = find_event(handles[i]);
    if (e == nullptr) {
      return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                    std::string(api) + ": unknown or destroyed event");
    }
    if (e->pool->context != list.context) {
      return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                    std::string(api) + ": an event of another context");
    }
    out->push_back(std::move(e));
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t no_events(ze_event_handle_t signal, std::uint32_t waits, const char* api) {
  if (signal != nullptr || waits != 0) {
    return misuse(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                  std::string(api) +
                      ": signal or wait events on a copy or fill are not "
                      "emulated (use barriers)");
  }
  return ZE_RESULT_SUCCESS;
}

// Closes the list's batch into a step with `waits`, `reset` and `signal`:
// queued on an immediate list's stream, recorded by a regular list.
ze_result_t close_batch(CommandList& list, std::vector<EventRef> waits, EventRef signal,
                        const char* api, EventRef reset = nullptr) {
  auto step = std::make_shared<Step>();
  step->waits = std::move(waits);
  step->signal = std::move(signal);
  step->reset = std::move(reset);
  step->api = api;
  if (list.regular) {
    const std::lock_guard<std::mutex> lock(list.mutex);
    step->batch = std::move(list.batch);
    list.batch.clear();
    list.recorded.push_back(std::move(step));
    return ZE_RESULT_SUCCESS;
  }
  ze_result_t r = ZE_RESULT_SUCCESS;
  {
    const std::lock_guard<std::mutex> lock(list.mutex);
    step->batch = std::move(list.batch);
    list.batch.clear();
    ++list.unfinished;
    // The list outlives its queued tasks: zeCommandListDestroy refuses
    // while `unfinished` is not 0, then drains the stream.
    r = submit_step(*list.stream, std::move(step), [&list] { --list.unfinished; });
    if (r != ZE_RESULT_SUCCESS) --list.unfinished;
  }
  if (r == ZE_RESULT_SUCCESS && list.synchronous) list.stream->drain();
  return r;
}

// An in-order list queues each command as it is appended (a batch of one):
// the stream runs batches in order. Other lists keep it for the next barrier.
ze_result_t submit_if_in_order(CommandList& list, const char* api) {
  if (!list.in_order) return ZE_RESULT_SUCCESS;
  return close_batch(list, {}, nullptr, api);
}

}  // namespace

ze_result_t submit_step(core::Stream& stream, std::shared_ptr<const Step> step,
                        std::function<void()> on_end) {
  if (step->signal != nullptr) {
    const std::lock_guard<std::mutex> lock(step->signal->mutex);
    const bool set = is_signaled(*step->signal) || step->signal->pending_signals > 0;
    if (set && step->signal->pending_resets == 0) {
      return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                    std::string(step->api) + ": the event to signal is " +
                        (is_signaled(*step->signal) ? "signaled" : "already to be signaled") +
                        " and no reset of it is queued: reset it first");
    }
    ++step->signal->pending_signals;
  }
  for (const EventRef& e : step->waits) {
    const std::lock_guard<std::mutex> lock(e->mutex);
    ++e->pending_waits;
  }
  if (step->reset != nullptr) {
    const std::lock_guard<std::mutex> lock(step->reset->mutex);
    ++step->reset->pending_resets;
  }
  const char* api = step->api;
  stream.enqueue(api, [step = std::move(step), on_end = std::move(on_end)] {
    // Unordered within a batch: the last appended runs first (emu_lz.h).
    core::Status status = core::Status::success;
    for (auto it = step->batch.rbegin(); it != step->batch.rend(); ++it) {
      const core::Status s = (*it)();
      if (status == core::Status::success) status = s;
    }
    for (const EventRef& e : step->waits) {
      std::unique_lock<std::mutex> lock(e->mutex);
      wait_signaled(*e, lock);
      --e->pending_waits;
    }
    if (step->reset != nullptr) {
      const std::lock_guard<std::mutex> lock(step->reset->mutex);
      --step->reset->pending_resets;
      if (step->reset->pending_signals > 0 || step->reset->pending_waits > 0) {
        status = core::misuse(core::Status::invalid_value,
                              std::string(step->api) +
                                  ": the reset ran while queued commands still signal or wait "
                                  "for the event");
      }
      set_signaled(*step->reset, false);
    }
    on_end();  // before the signal: a host that saw it may destroy the list
    if (step->signal != nullptr) {
      const auto now = std::chrono::steady_clock::now().time_since_epoch();
      const std::lock_guard<std::mutex> lock(step->signal->mutex);
      step->signal->signal_ticks = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
      set_signaled(*step->signal, true);
      --step->signal->pending_signals;
      step->signal->changed.notify_all();
    }
    return status;
  });
  return ZE_RESULT_SUCCESS;
}

ze_result_t creation_args(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                          const void* desc, const void* out, const char* api, Context** context,
                          core::Device** device) {
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  *context = find_context(hContext);
  *device = find_device(hDevice);
  if (*context == nullptr || *device == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  std::string(api) + ": unknown context or device");
  }
  if (desc == nullptr || out == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, std::string(api) + ": null desc or out");
  }
  return ZE_RESULT_SUCCESS;
}

namespace {

// One group, one queue, known flags, mode and priority.
ze_result_t check_queue_desc(const ze_command_queue_desc_t* desc, const char* api) {
  // ZE_COMMAND_QUEUE_FLAG_IN_ORDER is an enumerator from API 1.7 on; a
  // driver of an older version does not know it.
  const ze_command_queue_flags_t known =
      ZE_COMMAND_QUEUE_FLAG_EXPLICIT_ONLY | (api_minor() >= 7 ? kQueueFlagInOrder : 0u);
  if ((desc->flags & ~known) != 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ENUMERATION,
                  std::string(api) + ": flags " + std::to_string(desc->flags) +
                      " unknown to a driver of API 1." + std::to_string(api_minor()) +
                      " (ZE_COMMAND_QUEUE_FLAG_IN_ORDER needs 1.7)");
  }
  if (desc->stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC || desc->ordinal != 0 ||
      desc->index != 0 || desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS ||
      desc->priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  std::string(api) + ": wrong stype, ordinal " + std::to_string(desc->ordinal) +
                      " (one group), index " + std::to_string(desc->index) +
                      " (one queue), flags, mode or priority");
  }
  return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t queue_creation_args(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                const ze_command_queue_desc_t* desc, const void* out,
                                const char* api, Context** context, core::Device** device) {
  const ze_result_t r = creation_args(hContext, hDevice, desc, out, api, context, device);
  return r != ZE_RESULT_SUCCESS ? r : check_queue_desc(desc, api);
}

ze_result_t ZE_APICALL emu_zeCommandListCreateImmediate(ze_context_handle_t hContext,
                                                        ze_device_handle_t hDevice,
                                                        const ze_command_queue_desc_t* desc,
                                                        ze_command_list_handle_t* phCommandList) {
  count_call("zeCommandListCreateImmediate");
  Context* context = nullptr;
  core::Device* device = nullptr;
  if (const ze_result_t r = queue_creation_args(hContext, hDevice, desc, phCommandList,
                                                "zeCommandListCreateImmediate", &context, &device);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  auto list = std::make_shared<CommandList>();
  list->context = context;
  list->device = device->index;
  list->synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  list->in_order = (desc->flags & kQueueFlagInOrder) != 0;
  list->stream = core::Stream::create(&device->primary);
  *phCommandList = add_command_list(list);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeCommandListDestroy(ze_command_list_handle_t hCommandList) {
  count_call("zeCommandListDestroy");
  ANYDEV_LZ_LIST("zeCommandListDestroy", hCommandList, list);
  {
    const std::lock_guard<std::mutex> lock(list->mutex);
    if (!list->regular && !list->batch.empty()) {
      return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                    "zeCommandListDestroy: " + std::to_string(list->batch.size()) +
                        " command(s) never submitted by a barrier or wait");
    }
  }
  if (list->unfinished.load() > 0) {
    return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                  "zeCommandListDestroy: " + std::to_string(list->unfinished.load()) +
                      " queued batch(es) of the list have not run yet");
  }
  remove_command_list(hCommandList);
  if (list->stream != nullptr) {
    list->stream->drain();  // the end of the last task, after its signal
    list->stream->retire();
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeCommandListCreate(ze_context_handle_t hContext,
                                               ze_device_handle_t hDevice,
                                               const ze_command_list_desc_t* desc,
                                               ze_command_list_handle_t* phCommandList) {
  count_call("zeCommandListCreate");
  Context* context = nullptr;
  core::Device* device = nullptr;
  if (const ze_result_t r = creation_args(hContext, hDevice, desc, phCommandList,
                                          "zeCommandListCreate", &context, &device);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  const ze_command_list_flags_t known = ZE_COMMAND_LIST_FLAG_RELAXED_ORDERING |
                                        ZE_COMMAND_LIST_FLAG_MAXIMIZE_THROUGHPUT |
                                        ZE_COMMAND_LIST_FLAG_EXPLICIT_ONLY;
  if ((desc->flags & ~known) != 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeCommandListCreate: flags " +
                                                           std::to_string(desc->flags) +
                                                           " unknown to the emulated driver");
  }
  if (desc->stype != ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC || desc->commandQueueGroupOrdinal != 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeCommandListCreate: wrong stype or queue group ordinal " +
                      std::to_string(desc->commandQueueGroupOrdinal) + " (one group)");
  }
  auto list = std::make_shared<CommandList>();
  list->context = context;
  list->device = device->index;
  list->regular = true;
  *phCommandList = add_command_list(list);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeCommandListClose(ze_command_list_handle_t hCommandList) {
  count_call("zeCommandListClose");
  ANYDEV_LZ_APPEND_LIST("zeCommandListClose", hCommandList, list);
  if (!list->regular) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeCommandListClose: an immediate list (only regular lists are closed)");
  }
  // Commands after the last synchronization point form the last step (none:
  // the list ends with its last step, whose signal then comes after its end).
  bool tail = false;
  {
    const std::lock_guard<std::mutex> lock(list->mutex);
    tail = !list->batch.empty();
  }
  if (tail) {
    if (const ze_result_t r = close_batch(*list, {}, nullptr, "zeCommandListClose");
        r != ZE_RESULT_SUCCESS) {
      return r;
    }
  }
  list->closed = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeCommandListAppendEventReset(ze_command_list_handle_t hCommandList,
                                                         ze_event_handle_t hEvent) {
  count_call("zeCommandListAppendEventReset");
  const char* api = "zeCommandListAppendEventReset";
  ANYDEV_LZ_APPEND_LIST("zeCommandListAppendEventReset", hCommandList, list);
  std::vector<EventRef> event;
  if (hEvent == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(api) + ": null event");
  }
  if (ze_result_t r = events_of(*list, 1, &hEvent, api, &event); r != ZE_RESULT_SUCCESS) return r;
  return close_batch(*list, {}, nullptr, api, std::move(event[0]));
}

ze_result_t ZE_APICALL emu_zeCommandListAppendMemoryCopy(
    ze_command_list_handle_t hCommandList, void* dstptr, const void* srcptr, size_t size,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  count_call("zeCommandListAppendMemoryCopy");
  const char* api = "zeCommandListAppendMemoryCopy";
  ANYDEV_LZ_APPEND_LIST("zeCommandListAppendMemoryCopy", hCommandList, list);
  (void)phWaitEvents;
  if (ze_result_t r = no_events(hSignalEvent, numWaitEvents, api); r != ZE_RESULT_SUCCESS) return r;
  const auto d = reinterpret_cast<std::uintptr_t>(dstptr);
  const auto s = reinterpret_cast<std::uintptr_t>(srcptr);
  if (size > 0 && d < s + size && s < d + size) {
    return misuse(ZE_RESULT_ERROR_OVERLAPPING_REGIONS, std::string(api) + ": the ranges overlap");
  }
  if (size == 0) return ZE_RESULT_SUCCESS;
  core::Span dst;
  core::Span src;
  if (const core::Status r = core::resolve(d, size, core::Access::kAny, api, &dst);
      r != core::Status::success) {
    return to_ze(r);
  }
  if (const core::Status r = core::resolve(s, size, core::Access::kAny, api, &src);
      r != core::Status::success) {
    return to_ze(r);
  }
  {
    const std::lock_guard<std::mutex> lock(list->mutex);
    list->batch.push_back([api, dst, src, size] {
      std::byte* to = dst.bytes();
      const std::byte* from = src.bytes();
      if (to == nullptr || from == nullptr) {
        return core::misuse(core::Status::illegal_address,
                            std::string(api) + ": " + (to == nullptr ? dst : src).describe() +
                                " was freed before the copy ran");
      }
      std::memcpy(to, from, size);
      return core::Status::success;
    });
  }
  return submit_if_in_order(*list, api);
}

ze_result_t ZE_APICALL emu_zeCommandListAppendMemoryFill(ze_command_list_handle_t hCommandList,
                                                         void* ptr, const void* pattern,
                                                         size_t pattern_size, size_t size,
                                                         ze_event_handle_t hSignalEvent,
                                                         uint32_t numWaitEvents,
                                                         ze_event_handle_t* phWaitEvents) {
  count_call("zeCommandListAppendMemoryFill");
  const char* api = "zeCommandListAppendMemoryFill";
  ANYDEV_LZ_APPEND_LIST("zeCommandListAppendMemoryFill", hCommandList, list);
  (void)phWaitEvents;
  if (ze_result_t r = no_events(hSignalEvent, numWaitEvents, api); r != ZE_RESULT_SUCCESS) return r;
  if (pattern == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, std::string(api) + ": null pattern");
  }
  if (pattern_size == 0 || (pattern_size & (pattern_size - 1)) != 0 ||
      pattern_size > max_fill_pattern() || size % pattern_size != 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_SIZE,
                  std::string(api) + ": pattern_size " + std::to_string(pattern_size) +
                      " (a power of two up to the queue group's maxMemoryFillPatternSize " +
                      std::to_string(max_fill_pattern()) + ") over " + std::to_string(size) +
                      " bytes (a multiple of it)");
  }
  if (size == 0) return ZE_RESULT_SUCCESS;
  core::Span dst;
  if (const core::Status r = core::resolve(reinterpret_cast<std::uintptr_t>(ptr), size,
                                           core::Access::kDeviceOrPinned, api, &dst);
      r != core::Status::success) {
    return to_ze(r);
  }
  {
    const std::lock_guard<std::mutex> lock(list->mutex);
    // The pattern is read when the command runs, not when it is appended: the
    // caller keeps it alive until then (stricter than a driver that copies it).
    list->batch.push_back([api, dst, pattern, pattern_size, size] {
      std::byte* to = dst.bytes();
      if (to == nullptr) {
        return core::misuse(
            core::Status::illegal_address,
            std::string(api) + ": " + dst.describe() + " was freed before the fill ran");
      }
      for (std::size_t done = 0; done < size; done += pattern_size) {
        std::memcpy(to + done, pattern, pattern_size);
      }
      return core::Status::success;
    });
  }
  return submit_if_in_order(*list, api);
}

// Performs the kernel with the group size and argument values set on it when
// appended (the spec: later changes to the kernel do not affect this launch).
ze_result_t ZE_APICALL emu_zeCommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
                                                           ze_kernel_handle_t hKernel,
                                                           const ze_group_count_t* pLaunchFuncArgs,
                                                           ze_event_handle_t hSignalEvent,
                                                           uint32_t numWaitEvents,
                                                           ze_event_handle_t* phWaitEvents) {
  count_call("zeCommandListAppendLaunchKernel");
  const char* api = "zeCommandListAppendLaunchKernel";
  ANYDEV_LZ_LIST("zeCommandListAppendLaunchKernel", hCommandList, list);
  (void)phWaitEvents;
  if (ze_result_t r = no_events(hSignalEvent, numWaitEvents, api); r != ZE_RESULT_SUCCESS) return r;
  const KernelRef kernel = find_kernel(hKernel);
  if (kernel == nullptr || pLaunchFuncArgs == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  std::string(api) + ": unknown kernel or null group count");
  }
  if (kernel->context != list->context || kernel->device != list->device) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  std::string(api) + ": a kernel of another context or device than the list's");
  }
  const std::uint64_t groups = std::uint64_t{pLaunchFuncArgs->groupCountX} *
                               pLaunchFuncArgs->groupCountY * pLaunchFuncArgs->groupCountZ;
  std::function<core::Status()> task;
  {
    const std::lock_guard<std::mutex> lock(kernel->mutex);
    std::vector<void*> params;
    for (std::vector<unsigned char>& arg : kernel->args) {
      if (arg.empty()) {
        return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                      std::string(api) + ": an argument of " + kernel->entry.name + " is not set");
      }
      params.push_back(arg.data());
    }
    if (kernel->group_size == 0 || groups == 0) {
      return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                    std::string(api) + ": no group size set, or an empty group count");
    }
    if (const core::Status r = core::kernel_task(api, kernel->entry, params.data(),
                                                 groups * kernel->group_size, &task);
        r != core::Status::success) {
      return to_ze(r);
    }
  }
  {
    const std::lock_guard<std::mutex> lock(list->mutex);
    list->batch.push_back(std::move(task));
  }
  return submit_if_in_order(*list, api);
}

ze_result_t ZE_APICALL emu_zeCommandListAppendBarrier(ze_command_list_handle_t hCommandList,
                                                      ze_event_handle_t hSignalEvent,
                                                      uint32_t numWaitEvents,
                                                      ze_event_handle_t* phWaitEvents) {
  count_call("zeCommandListAppendBarrier");
  const char* api = "zeCommandListAppendBarrier";
  ANYDEV_LZ_APPEND_LIST("zeCommandListAppendBarrier", hCommandList, list);
  std::vector<EventRef> waits;
  if (ze_result_t r = events_of(*list, numWaitEvents, phWaitEvents, api, &waits);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  std::vector<EventRef> signal;
  if (hSignalEvent != nullptr) {
    if (ze_result_t r = events_of(*list, 1, &hSignalEvent, api, &signal); r != ZE_RESULT_SUCCESS) {
      return r;
    }
  }
  return close_batch(*list, std::move(waits), signal.empty() ? nullptr : signal[0], api);
}

ze_result_t ZE_APICALL emu_zeCommandListAppendWaitOnEvents(ze_command_list_handle_t hCommandList,
                                                           uint32_t numEvents,
                                                           ze_event_handle_t* phEvents) {
  count_call("zeCommandListAppendWaitOnEvents");
  const char* api = "zeCommandListAppendWaitOnEvents";
  ANYDEV_LZ_APPEND_LIST("zeCommandListAppendWaitOnEvents", hCommandList, list);
  std::vector<EventRef> waits;
  if (ze_result_t r = events_of(*list, numEvents, phEvents, api, &waits); r != ZE_RESULT_SUCCESS) {
    return r;
  }
  return close_batch(*list, std::move(waits), nullptr, api);
}

}  // namespace anydev_lz_emu
