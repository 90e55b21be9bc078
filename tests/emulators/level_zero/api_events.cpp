// SPDX-License-Identifier: Apache-2.0
// The event-pool and event entry points of the emulated driver.
//
// Stricter than the specification, which leaves these undefined: resetting
// or destroying an event that a queued command will still signal or wait
// for, signalling an event again without a reset, and a host wait without
// timeout on an event nothing will signal are misuse.
#include <chrono>
#include <string>

#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {

ze_result_t ZE_APICALL emu_zeEventPoolCreate(ze_context_handle_t hContext,
                                             const ze_event_pool_desc_t* desc, uint32_t numDevices,
                                             ze_device_handle_t* phDevices,
                                             ze_event_pool_handle_t* phEventPool) {
  count_call("zeEventPoolCreate");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  Context* context = find_context(hContext);
  if (context == nullptr) {
    return misuse(hContext == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE
                                      : ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeEventPoolCreate: unknown context");
  }
  if (desc == nullptr || phEventPool == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeEventPoolCreate: null desc or out");
  }
  if (desc->stype != ZE_STRUCTURE_TYPE_EVENT_POOL_DESC || desc->count == 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventPoolCreate: wrong stype or count 0");
  }
  for (std::uint32_t i = 0; i < numDevices; ++i) {
    if (phDevices == nullptr || find_device(phDevices[i]) == nullptr) {
      return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventPoolCreate: unknown device");
    }
  }
  auto pool = std::make_shared<EventPool>();
  pool->context = context;
  pool->count = desc->count;
  pool->used.assign(desc->count, false);
  pool->timestamps = (desc->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0;
  if ((desc->flags & ZE_EVENT_POOL_FLAG_IPC) != 0) {
    // Not misuse: a caller asks, and learns the driver has no IPC.
    if (!ipc_enabled()) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (const ze_result_t r = make_ipc_pool(*pool); r != ZE_RESULT_SUCCESS) return r;
  }
  *phEventPool = add_event_pool(pool);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeEventPoolDestroy(ze_event_pool_handle_t hEventPool) {
  count_call("zeEventPoolDestroy");
  std::shared_ptr<EventPool> pool = find_event_pool(hEventPool);
  if (pool == nullptr)
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventPoolDestroy: unknown pool");
  if (pool->opened) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeEventPoolDestroy of a pool opened with zeEventPoolOpenIpcHandle (close it "
                  "with zeEventPoolCloseIpcHandle)");
  }
  {
    const std::lock_guard<std::mutex> lock(pool->mutex);
    for (const bool used : pool->used) {
      if (used) {
        return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                      "zeEventPoolDestroy: events of the pool are still alive");
      }
    }
  }
  remove_event_pool(hEventPool);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeEventCreate(ze_event_pool_handle_t hEventPool,
                                         const ze_event_desc_t* desc, ze_event_handle_t* phEvent) {
  count_call("zeEventCreate");
  std::shared_ptr<EventPool> pool = find_event_pool(hEventPool);
  if (pool == nullptr)
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventCreate: unknown pool");
  if (desc == nullptr || phEvent == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeEventCreate: null desc or out");
  }
  if (desc->stype != ZE_STRUCTURE_TYPE_EVENT_DESC || desc->index >= pool->count) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeEventCreate: wrong stype or index " + std::to_string(desc->index) +
                      " not below the pool's " + std::to_string(pool->count));
  }
  {
    const std::lock_guard<std::mutex> lock(pool->mutex);
    if (pool->used[desc->index]) {
      return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                    "zeEventCreate: index " + std::to_string(desc->index) + " is already taken");
    }
    pool->used[desc->index] = true;
  }
  auto event = std::make_shared<Event>();
  event->pool = pool;
  event->index = desc->index;
  *phEvent = add_event(event);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeEventDestroy(ze_event_handle_t hEvent) {
  count_call("zeEventDestroy");
  EventRef event = find_event(hEvent);
  if (event == nullptr)
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventDestroy: unknown event");
  {
    const std::lock_guard<std::mutex> lock(event->mutex);
    if (event->pending_signals > 0 || event->pending_waits > 0) {
      return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                    "zeEventDestroy: queued commands still signal or wait for the event");
    }
  }
  remove_event(hEvent);
  const std::lock_guard<std::mutex> lock(event->pool->mutex);
  event->pool->used[event->index] = false;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeEventHostSignal(ze_event_handle_t hEvent) {
  count_call("zeEventHostSignal");
  EventRef event = find_event(hEvent);
  if (event == nullptr)
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventHostSignal: unknown event");
  const std::lock_guard<std::mutex> lock(event->mutex);
  set_signaled(*event, true);
  event->changed.notify_all();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeEventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout) {
  count_call("zeEventHostSynchronize");
  EventRef event = find_event(hEvent);
  if (event == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventHostSynchronize: unknown event");
  }
  std::unique_lock<std::mutex> lock(event->mutex);
  if (is_signaled(*event)) return ZE_RESULT_SUCCESS;
  if (event->pool->ipc) {
    // Another process may signal it: no "nothing will signal" check; polled.
    const auto deadline = timeout == UINT64_MAX ? std::chrono::steady_clock::time_point::max()
                                                : std::chrono::steady_clock::now() +
                                                      std::chrono::nanoseconds(timeout);
    while (!is_signaled(*event)) {
      if (std::chrono::steady_clock::now() >= deadline) return ZE_RESULT_NOT_READY;
      event->changed.wait_for(lock, std::chrono::microseconds(100));
    }
    return ZE_RESULT_SUCCESS;
  }
  if (timeout == UINT64_MAX) {
    if (event->pending_signals == 0) {
      return misuse(ZE_RESULT_NOT_READY,
                    "zeEventHostSynchronize without timeout on an event that nothing queued "
                    "will signal (it would wait forever)");
    }
    event->changed.wait(lock, [&] { return is_signaled(*event); });
    return ZE_RESULT_SUCCESS;
  }
  const bool done = event->changed.wait_for(lock, std::chrono::nanoseconds(timeout),
                                            [&] { return is_signaled(*event); });
  return done ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL emu_zeEventQueryStatus(ze_event_handle_t hEvent) {
  count_call("zeEventQueryStatus");
  EventRef event = find_event(hEvent);
  if (event == nullptr)
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventQueryStatus: unknown event");
  const std::lock_guard<std::mutex> lock(event->mutex);
  return is_signaled(*event) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL emu_zeEventHostReset(ze_event_handle_t hEvent) {
  count_call("zeEventHostReset");
  EventRef event = find_event(hEvent);
  if (event == nullptr)
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventHostReset: unknown event");
  const std::lock_guard<std::mutex> lock(event->mutex);
  if (event->pending_signals > 0 || event->pending_waits > 0) {
    return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                  "zeEventHostReset of an event that " + std::to_string(event->pending_signals) +
                      " queued command(s) will signal and " + std::to_string(event->pending_waits) +
                      " will wait for");
  }
  set_signaled(*event, false);
  return ZE_RESULT_SUCCESS;
}

// The time of the event's signal, as a barrier's timestamp: start and end
// are the same tick. NOT_READY before the signal.
ze_result_t ZE_APICALL emu_zeEventQueryKernelTimestamp(ze_event_handle_t hEvent,
                                                       ze_kernel_timestamp_result_t* dstptr) {
  count_call("zeEventQueryKernelTimestamp");
  EventRef event = find_event(hEvent);
  if (event == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventQueryKernelTimestamp: unknown event");
  }
  if (dstptr == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeEventQueryKernelTimestamp: null dstptr");
  }
  if (!event->pool->timestamps) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeEventQueryKernelTimestamp: the event's pool was created without "
                  "ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP");
  }
  const std::lock_guard<std::mutex> lock(event->mutex);
  if (!event->signaled) return ZE_RESULT_NOT_READY;
  const std::uint64_t t = event->signal_ticks;
  dstptr->global.kernelStart = t;
  dstptr->global.kernelEnd = t;
  dstptr->context.kernelStart = t;
  dstptr->context.kernelEnd = t;
  return ZE_RESULT_SUCCESS;
}

}  // namespace anydev_lz_emu
