// SPDX-License-Identifier: Apache-2.0
// The emulated Level Zero driver: a thin Level Zero face on the generic
// emulator core (tests/emulators/common): the core's devices, memory (device
// memory at PROT_NONE addresses never reused, pinned host memory), streams
// (asynchronous, in order, with the per-operation delay), settings, call
// counts and misuse reports, under the names ANYDEV_LEVEL_ZERO_EMULATOR_* and
// "anydev-level-zero-emulator:". What is Level Zero's own lives here: one
// driver handle, contexts, event pools and binary host-visible events with
// their reset rules, immediate command lists whose commands between two
// barriers run unordered (unless the list is in order, API 1.7), and regular
// command lists, recorded, closed and executed on command queues.
//
// Every handle the face hands out is checked against the live set of its kind
// before use (a destroyed or foreign handle is misuse, answered with the
// spec's error). Registries are created at the first zeInit and never
// destroyed (stream workers may still run at exit). Objects are shared
// (std::shared_ptr) between the registry, queued commands and workers; each
// one's mutable state is guarded by its own mutex, so every entry point is
// thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_LEVEL_ZERO_EMU_LZ_H_
#define ANYDEV_TESTS_EMULATORS_LEVEL_ZERO_EMU_LZ_H_

#include <level_zero/ze_api.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core_config.h"
#include "core_device.h"
#include "core_kernels.h"
#include "core_memory.h"
#include "core_status.h"
#include "core_stream.h"

namespace anydev_lz_emu {

namespace core = anydev_emu::core;

// ANYDEV_LEVEL_ZERO_EMULATOR_MAX_FILL_PATTERN: the queue group's
// maxMemoryFillPatternSize (default 16; a power of two up to 256).
std::size_t max_fill_pattern();

// ANYDEV_LEVEL_ZERO_EMULATOR_API_MINOR: the minor number of the Level Zero
// API version 1.x the driver reports (default 4, 4 to 15). From 7 on it takes
// ZE_COMMAND_QUEUE_FLAG_IN_ORDER (1.7), which the 1.4 headers lack.
int api_minor();
// ANYDEV_LEVEL_ZERO_EMULATOR_IPC=1: device memory is memfd-backed and
// exportable (api_ipc.cpp), event pools may be created with
// ZE_EVENT_POOL_FLAG_IPC (api_ipc_events.cpp), host memory may be imported
// with zexDriverImportExternalPointer (api_host_import.cpp), and
// zeDriverGetIpcProperties reports ZE_IPC_PROPERTY_FLAG_MEMORY |
// ZE_IPC_PROPERTY_FLAG_EVENT_POOL.
// Default 0: no IPC (the IPC calls and the IPC pool flag answer
// ZE_RESULT_ERROR_UNSUPPORTED_FEATURE).
bool ipc_enabled();
inline constexpr ze_command_queue_flags_t kQueueFlagInOrder = 1u << 1;  // ZE_BIT(1), spec 1.7

// Reports "anydev-level-zero-emulator: <message>" (core::report_misuse),
// counts it, and returns `result` so an entry point can `return misuse(...)`.
ze_result_t misuse(ze_result_t result, const std::string& message);
unsigned long long misuse_count();
// The Level Zero code of a core status (`device_memory`: which out-of-memory).
ze_result_t to_ze(core::Status status, bool device_memory = true);
// Counts one call of an entry point (anydev_level_zero_emulator_call_count).
void count_call(const char* name);

struct Context {
  bool live = true;
};

struct EventPool;
// A binary event: signaled by a barrier or the host, reset by the host.
// The state is `signaled`, or, for an event of an interprocess pool, the
// pool's shared word at `index` (read and written through is_signaled /
// set_signaled, with `mutex` held); the pending counts are this process's.
struct Event {
  std::shared_ptr<EventPool> pool;
  std::uint32_t index = 0;
  std::mutex mutex;
  std::condition_variable changed;
  bool signaled = false;
  int pending_signals = 0;  // appended signals that have not run
  int pending_waits = 0;    // appended waits that have not passed
  int pending_resets = 0;   // appended resets (zeCommandListAppendEventReset) not yet run
  // Of a pool with ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP: the steady clock (in
  // ticks of the device's timerResolution, 1 ns) when its signal ran.
  std::uint64_t signal_ticks = 0;
};
using EventRef = std::shared_ptr<Event>;

// An event pool. With ZE_EVENT_POOL_FLAG_IPC (ANYDEV_LEVEL_ZERO_EMULATOR_IPC=1)
// its events' states are words of a memfd mapped MAP_SHARED (`shared`, `fd`),
// which every process that opened the pool maps: a signal in one process is
// seen by the others (api_ipc_events.cpp). `opened`: made by
// zeEventPoolOpenIpcHandle (closed with zeEventPoolCloseIpcHandle, not
// destroyed). The mapping and fd are the pool's, released with it.
struct EventPool {
  Context* context = nullptr;
  std::uint32_t count = 0;
  bool timestamps = false;  // ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP
  std::mutex mutex;
  std::vector<bool> used;  // index taken by a live event
  bool ipc = false;
  bool opened = false;
  int fd = -1;
  std::atomic<std::uint32_t>* shared = nullptr;  // `count` words, or null
  std::size_t mapped_bytes = 0;
  EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  ~EventPool();
};

// The event's state (with its mutex held).
bool is_signaled(const Event& event);
void set_signaled(Event& event, bool value);
// Blocks (with `lock` on the event's mutex) until the event is signaled. An
// interprocess event is polled: another process signals it.
void wait_signaled(Event& event, std::unique_lock<std::mutex>& lock);

// Copies and fills appended between two synchronization points (a barrier, a
// wait or an event reset) form a batch; the batch closed by such a point is
// one Step, which runs as one task of a core stream: the batch's commands in
// the REVERSE order of their appending (the specification orders nothing
// within a batch, so a caller that forgot a barrier sees the wrong bytes),
// then the waits, the reset and the signal.
struct Step {
  std::vector<std::function<core::Status()>> batch;
  std::vector<EventRef> waits;
  EventRef reset;
  EventRef signal;
  const char* api = "";
};

// A command list. Immediate (zeCommandListCreateImmediate): over a core
// stream, each step queued when it is closed. Regular (zeCommandListCreate):
// steps recorded until zeCommandListClose, then queued anew on a command
// queue's stream by every zeCommandQueueExecuteCommandLists.
struct CommandList {
  Context* context = nullptr;
  int device = 0;
  bool synchronous = false;
  // ZE_COMMAND_QUEUE_FLAG_IN_ORDER: each command is queued as it is
  // appended, so the list runs in the order of appending without barriers.
  bool in_order = false;
  bool regular = false;
  core::StreamRef stream;  // immediate lists only
  std::mutex mutex;
  std::vector<std::function<core::Status()>> batch;   // appended, not yet closed by a step
  std::vector<std::shared_ptr<const Step>> recorded;  // regular lists: the closed steps
  std::atomic<bool> closed{false};                    // regular lists: zeCommandListClose ran
  // Queued tasks that have not yet reached their end (their signal, if any):
  // the host cannot know a list is idle before this is 0.
  std::atomic<int> unfinished{0};
};
using CommandListRef = std::shared_ptr<CommandList>;

// A command queue (zeCommandQueueCreate) over a core stream: executed lists'
// steps run there in submission order. `unfinished` as for a list.
struct CommandQueue {
  Context* context = nullptr;
  int device = 0;
  bool synchronous = false;
  core::StreamRef stream;
  std::atomic<int> unfinished{0};
};
using CommandQueueRef = std::shared_ptr<CommandQueue>;

// Queues `step` on `stream` (checking and counting its events; misuse: a
// signal of an event that is signaled or to be signaled with no reset
// queued before). `on_end` runs when the step's task ends, before its signal.
// A step is shared, not copied, by the executions of a regular list.
ze_result_t submit_step(core::Stream& stream, std::shared_ptr<const Step> step,
                        std::function<void()> on_end);
// The arguments every list and queue creation checks first: the driver
// initialized, a live context and device, non-null `desc` and `out`.
ze_result_t creation_args(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                          const void* desc, const void* out, const char* api, Context** context,
                          core::Device** device);
// creation_args, then a zeCommandListCreateImmediate or zeCommandQueueCreate
// description (one group, one queue, known flags, mode and priority).
ze_result_t queue_creation_args(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                const ze_command_queue_desc_t* desc, const void* out,
                                const char* api, Context** context, core::Device** device);

// Registries of live handles (emu_lz_registry.cpp); `find_*` answer null for
// a handle that is not live. Devices are the core's.
core::Device* find_device(ze_device_handle_t handle);
ze_device_handle_t device_handle(int index);
Context* find_context(ze_context_handle_t handle);
std::shared_ptr<EventPool> find_event_pool(ze_event_pool_handle_t handle);
EventRef find_event(ze_event_handle_t handle);
CommandListRef find_command_list(ze_command_list_handle_t handle);
CommandQueueRef find_command_queue(ze_command_queue_handle_t handle);
bool driver_matches(ze_driver_handle_t handle);
ze_driver_handle_t driver_handle();
bool initialized();
ze_result_t initialize(ze_init_flags_t flags);

ze_context_handle_t add_context(std::unique_ptr<Context> context);
bool remove_context(ze_context_handle_t handle);
ze_event_pool_handle_t add_event_pool(const std::shared_ptr<EventPool>& pool);
bool remove_event_pool(ze_event_pool_handle_t handle);
ze_event_handle_t add_event(const EventRef& event);
bool remove_event(ze_event_handle_t handle);
ze_command_list_handle_t add_command_list(const CommandListRef& list);
bool remove_command_list(ze_command_list_handle_t handle);
ze_command_queue_handle_t add_command_queue(const CommandQueueRef& queue);
bool remove_command_queue(ze_command_queue_handle_t handle);

// A kernel of a module (api_kernels.cpp): the entry it performs, for the
// module's context and device, and the group size and argument values set on
// it, which a launch copies when it is appended. Guarded by `mutex`.
struct Kernel {
  Context* context = nullptr;
  int device = 0;
  core::KernelEntry entry;
  std::mutex mutex;
  std::uint32_t group_size = 0;                  // x * y * z; 0: never set
  std::vector<std::vector<unsigned char>> args;  // one per parameter; empty: not set
};
using KernelRef = std::shared_ptr<Kernel>;
// The live kernel behind a handle, or null.
KernelRef find_kernel(ze_kernel_handle_t handle);

}  // namespace anydev_lz_emu

#endif  // ANYDEV_TESTS_EMULATORS_LEVEL_ZERO_EMU_LZ_H_
