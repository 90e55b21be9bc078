// SPDX-License-Identifier: Apache-2.0
// The command-queue entry points of the emulated driver: regular command
// lists, closed, executed on a queue (emu_lz.h says how their steps run).
//
// Stricter than the specification, which leaves these undefined: executing
// a list the device still runs from an earlier execution, fences (not
// emulated), and destroying a queue with work that has not run are misuse.
#include <string>

#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {
namespace {

#define ANYDEV_LZ_QUEUE(api, h, queue)                                                   \
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;                              \
  if ((h) == nullptr) {                                                                  \
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, api ": null command queue");      \
  }                                                                                      \
  CommandQueueRef queue = find_command_queue(h);                                         \
  if (queue == nullptr) {                                                                \
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, api ": unknown or destroyed queue"); \
  }

// Whether `list` may be executed on `queue` now; the spec's code otherwise.
ze_result_t check_executable(const CommandQueue& queue, const CommandList* list) {
  const char* api = "zeCommandQueueExecuteCommandLists";
  if (list == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  std::string(api) + ": unknown or destroyed list");
  }
  if (!list->regular) {
    return misuse(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE,
                  std::string(api) + ": an immediate list (only regular lists are executed)");
  }
  if (list->context != queue.context || list->device != queue.device) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  std::string(api) + ": a list of another context or device than the queue's");
  }
  if (!list->closed) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  std::string(api) + ": the list is not closed (zeCommandListClose)");
  }
  if (list->unfinished.load() > 0) {
    return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                  std::string(api) + ": the list still runs from an earlier execution (" +
                      std::to_string(list->unfinished.load()) + " step(s) to go)");
  }
  return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t ZE_APICALL emu_zeCommandQueueCreate(ze_context_handle_t hContext,
                                                ze_device_handle_t hDevice,
                                                const ze_command_queue_desc_t* desc,
                                                ze_command_queue_handle_t* phCommandQueue) {
  count_call("zeCommandQueueCreate");
  Context* context = nullptr;
  core::Device* device = nullptr;
  if (const ze_result_t r = queue_creation_args(hContext, hDevice, desc, phCommandQueue,
                                                "zeCommandQueueCreate", &context, &device);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  auto queue = std::make_shared<CommandQueue>();
  queue->context = context;
  queue->device = device->index;
  queue->synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  queue->stream = core::Stream::create(&device->primary);
  *phCommandQueue = add_command_queue(queue);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeCommandQueueDestroy(ze_command_queue_handle_t hCommandQueue) {
  count_call("zeCommandQueueDestroy");
  ANYDEV_LZ_QUEUE("zeCommandQueueDestroy", hCommandQueue, queue);
  if (queue->unfinished.load() > 0) {
    return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                  "zeCommandQueueDestroy: " + std::to_string(queue->unfinished.load()) +
                      " executed step(s) of the queue have not run yet");
  }
  remove_command_queue(hCommandQueue);
  queue->stream->drain();
  queue->stream->retire();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeCommandQueueExecuteCommandLists(
    ze_command_queue_handle_t hCommandQueue, uint32_t numCommandLists,
    ze_command_list_handle_t* phCommandLists, ze_fence_handle_t hFence) {
  count_call("zeCommandQueueExecuteCommandLists");
  const char* api = "zeCommandQueueExecuteCommandLists";
  ANYDEV_LZ_QUEUE("zeCommandQueueExecuteCommandLists", hCommandQueue, queue);
  if (phCommandLists == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, std::string(api) + ": null lists");
  }
  if (numCommandLists == 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_SIZE, std::string(api) + ": no list");
  }
  if (hFence != nullptr) {
    return misuse(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                  std::string(api) + ": fences are not emulated (signal an event instead)");
  }
  std::vector<CommandListRef> lists;
  for (std::uint32_t i = 0; i < numCommandLists; ++i) {
    CommandListRef list = find_command_list(phCommandLists[i]);
    if (const ze_result_t r = check_executable(*queue, list.get()); r != ZE_RESULT_SUCCESS) {
      return r;
    }
    lists.push_back(std::move(list));
  }
  for (const CommandListRef& list : lists) {
    for (const std::shared_ptr<const Step>& step : list->recorded) {
      ++list->unfinished;
      ++queue->unfinished;
      const ze_result_t r = submit_step(*queue->stream, step, [list, queue] {
        --list->unfinished;
        --queue->unfinished;
      });
      if (r != ZE_RESULT_SUCCESS) {
        --list->unfinished;
        --queue->unfinished;
        return r;
      }
    }
  }
  if (queue->synchronous) queue->stream->drain();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeCommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue,
                                                     uint64_t timeout) {
  count_call("zeCommandQueueSynchronize");
  ANYDEV_LZ_QUEUE("zeCommandQueueSynchronize", hCommandQueue, queue);
  if (timeout == UINT64_MAX) {
    queue->stream->drain();
    return ZE_RESULT_SUCCESS;
  }
  return queue->unfinished.load() == 0 ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

}  // namespace anydev_lz_emu
