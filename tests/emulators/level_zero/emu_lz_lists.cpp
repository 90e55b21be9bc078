// SPDX-License-Identifier: Apache-2.0
// Command-list workers: each list runs its submitted tasks in order on its
// own thread, each after ANYDEV_LEVEL_ZERO_EMULATOR_DELAY_US.
#include <chrono>
#include <utility>

#include "emu_lz.h"

namespace anydev_lz_emu {
namespace {

void run(CommandList* list) {
  std::unique_lock<std::mutex> lock(list->mutex);
  for (;;) {
    list->work.wait(lock, [list] { return list->retired || !list->queue.empty(); });
    if (list->queue.empty()) return;  // retired and drained
    std::function<void()> task = std::move(list->queue.front());
    list->queue.pop_front();
    list->running = true;
    lock.unlock();
    if (config().delay_us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(config().delay_us));
    }
    task();
    task = nullptr;
    lock.lock();
    list->running = false;
    if (list->queue.empty()) list->idle.notify_all();
  }
}

}  // namespace

void start_worker(const CommandListRef& list) { list->worker = std::thread(run, list.get()); }

void submit_locked(CommandList& list, std::function<void()> then) {
  std::vector<std::function<void()>> batch = std::move(list.batch);
  list.batch.clear();
  list.queue.push_back([batch = std::move(batch), then = std::move(then)] {
    // Unordered within a batch: run last-appended first (emu_lz.h).
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) (*it)();
    if (then) then();
  });
  list.work.notify_one();
}

void wait_idle(CommandList& list) {
  std::unique_lock<std::mutex> lock(list.mutex);
  list.idle.wait(lock, [&list] { return list.queue.empty() && !list.running; });
}

void retire_worker(CommandList& list) {
  {
    const std::lock_guard<std::mutex> lock(list.mutex);
    list.retired = true;
    list.work.notify_one();
  }
  if (list.worker.joinable()) list.worker.join();
}

}  // namespace anydev_lz_emu
