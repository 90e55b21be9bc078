// SPDX-License-Identifier: Apache-2.0
// The emulated Level Zero driver's objects: one driver with
// ANYDEV_LEVEL_ZERO_EMULATOR_DEVICES devices, contexts, memory, event pools,
// events and immediate command lists, all on host memory.
//
// Every handle the driver hands out is a pointer to one of these objects and
// is checked against the live set of its kind before use (a destroyed or
// foreign handle is misuse: reported with the prefix below and answered with
// the spec's error). The driver, its devices and the registries are created
// at the first zeInit and never destroyed (command-list workers may still run
// at exit). Objects are shared (std::shared_ptr) between the registry, queued
// commands and workers; each one's mutable state is guarded by its own mutex
// or is atomic, so every entry point is thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_LEVEL_ZERO_EMU_LZ_H_
#define ANYDEV_TESTS_EMULATORS_LEVEL_ZERO_EMU_LZ_H_

#include <level_zero/ze_api.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace anydev_lz_emu {

// ANYDEV_LEVEL_ZERO_EMULATOR_*, read once (emu_lz_config.cpp).
struct Config {
  int devices = 1;                                     // _DEVICES (0: a driver with no device)
  unsigned delay_us = 0;                               // _DELAY_US: before each command runs
  std::size_t max_fill_pattern = 16;                   // _MAX_FILL_PATTERN: the queue group's
  std::size_t memory_bytes = std::size_t{4096} << 20;  // _MEMORY_MB per device
  bool quiet = false;                                  // _QUIET=1: misuse is not printed
};
const Config& config();

// Prints "anydev-level-zero-emulator: <message>" to stderr (unless quiet) and
// counts it; returns `result` so an entry point can `return misuse(...)`.
ze_result_t misuse(ze_result_t result, const std::string& message);
unsigned long long misuse_count();
// Counts one call of an entry point (anydev_level_zero_emulator_call_count).
void count_call(const char* name);

struct Device {
  int index = 0;
  std::string name;
};

struct Context {
  std::atomic<bool> live{true};
};

// An allocation. Device memory is handed out at addresses of a PROT_NONE
// reservation that is never unmapped (the host cannot touch device memory,
// and a freed address is never reused, so a stale pointer is always
// recognized); its bytes are elsewhere. Host memory (zeMemAllocHost) is
// ordinary host memory at its own address.
struct Block {
  std::uintptr_t address = 0;
  std::size_t size = 0;
  Context* context = nullptr;
  int device = -1;  // -1: host memory
  std::byte* bytes = nullptr;
  std::atomic<bool> freed{false};
  std::atomic<int> in_use{0};  // queued commands that read or write it
  ~Block();
};
using BlockRef = std::shared_ptr<Block>;

// One side of a copy or fill: a block plus offset, or pageable host memory.
struct Span {
  BlockRef block;
  std::size_t offset = 0;
  std::byte* pageable = nullptr;
  std::byte* bytes() const;  // null when the block was freed meanwhile
};

struct EventPool;
struct Event {
  std::shared_ptr<EventPool> pool;
  std::uint32_t index = 0;
  std::mutex mutex;
  std::condition_variable changed;
  bool signaled = false;
  int pending_signals = 0;  // appended signals that have not run
  int pending_waits = 0;    // appended waits that have not passed
};
using EventRef = std::shared_ptr<Event>;

struct EventPool {
  Context* context = nullptr;
  std::uint32_t count = 0;
  ze_event_pool_flags_t flags = 0;
  std::mutex mutex;
  std::vector<bool> used;  // index taken by a live event
};

// An immediate command list. Copies and fills appended between two
// synchronization points (a barrier or a wait) form a batch; the batch runs
// when the next barrier or wait is appended, on the list's worker thread,
// after the configured delay, and its commands run in the REVERSE order of
// their appending: the specification orders nothing within a batch, so a
// caller that forgot a barrier sees the wrong bytes.
struct CommandList {
  Context* context = nullptr;
  int device = 0;
  bool synchronous = false;
  std::mutex mutex;
  std::condition_variable work;
  std::condition_variable idle;
  std::vector<std::function<void()>> batch;  // appended, not yet submitted
  std::deque<std::function<void()>> queue;   // submitted, not yet run
  bool running = false;
  bool retired = false;
  std::thread worker;
};
using CommandListRef = std::shared_ptr<CommandList>;

// Registries of live handles (emu_lz_registry.cpp). `find_*` answer null for
// a handle that is not live.
Device* find_device(ze_device_handle_t handle);
Context* find_context(ze_context_handle_t handle);
std::shared_ptr<EventPool> find_event_pool(ze_event_pool_handle_t handle);
EventRef find_event(ze_event_handle_t handle);
CommandListRef find_command_list(ze_command_list_handle_t handle);
bool driver_matches(ze_driver_handle_t handle);
ze_driver_handle_t driver_handle();
int device_count();
Device* device_at(int index);
bool initialized();
ze_result_t initialize(ze_init_flags_t flags);

ze_context_handle_t add_context(std::unique_ptr<Context> context);
bool remove_context(ze_context_handle_t handle);
ze_event_pool_handle_t add_event_pool(const std::shared_ptr<EventPool>& pool);
bool remove_event_pool(ze_event_pool_handle_t handle, std::shared_ptr<EventPool>* out);
ze_event_handle_t add_event(const EventRef& event);
bool remove_event(ze_event_handle_t handle, EventRef* out);
ze_command_list_handle_t add_command_list(const CommandListRef& list);
bool remove_command_list(ze_command_list_handle_t handle, CommandListRef* out);

// Memory (emu_lz_memory.cpp).
ze_result_t allocate(Context* context, int device, std::size_t bytes, std::size_t alignment,
                     void** out, const char* api);
ze_result_t free_block(Context* context, void* address, const char* api);
// The live block containing `address`, or null.
BlockRef find_containing(std::uintptr_t address);
// [address, address + bytes) for a command on `list`: a live block of the
// list's context, in bounds, or (when `pageable_ok`) memory no allocation
// holds; a freed block or another context's memory is misuse.
ze_result_t resolve(const CommandList& list, const void* address, std::size_t bytes,
                    bool pageable_ok, const char* api, Span* out);

// Command lists (emu_lz_lists.cpp): starts the worker; submits the batch plus
// `then` (a wait or a signal) as one task; retires the worker.
void start_worker(const CommandListRef& list);
void submit_locked(CommandList& list, std::function<void()> then);
void wait_idle(CommandList& list);
void retire_worker(CommandList& list);

}  // namespace anydev_lz_emu

#endif  // ANYDEV_TESTS_EMULATORS_LEVEL_ZERO_EMU_LZ_H_
