// SPDX-License-Identifier: Apache-2.0
// opencl backpressure: a stream holds at most 1024 enqueued commands
// that are not known to be complete (kMaxCommandsInFlight, docs/backends.md
// "Backpressure"); a thread enqueuing more waits. The test stalls a stream
// behind a user event it controls, so the count is exact and needs no timing:
// the filler must stop at the bound and go on once the gate opens.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "plugin_fixture.h"

namespace {

using anydev_test::device_ref;
using anydev_test::last_error;

constexpr int kBound = 1024;  // kMaxCommandsInFlight in backends/opencl/opencl_stream.h
constexpr int kCommands = 3 * kBound;

TEST(OpenclBackpressure, EnqueuingStopsAtTheBoundWhileTheStreamIsStalled) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  const anydev_backend_table_t& table = *plugin.table;
  const anydev_test::ClCalls& cl = plugin.cl;
  ASSERT_NE(cl.create_command_queue, nullptr) << "libOpenCL.so.1 lacks clCreateCommandQueue";
  ASSERT_NE(table.stream_wrap_native, nullptr);

  // A queue of anydev's context, stalled behind a user event (the gate).
  void* context = nullptr;
  void* device = nullptr;
  ASSERT_EQ(table.native_handle(table.instance, 0, ANYDEV_NATIVE_CONTEXT, nullptr, &context),
            ANYDEV_SUCCESS);
  ASSERT_EQ(table.native_handle(table.instance, 0, ANYDEV_NATIVE_DEVICE, nullptr, &device),
            ANYDEV_SUCCESS);
  cl_int err = CL_SUCCESS;
  cl_command_queue queue = cl.create_command_queue(static_cast<cl_context>(context),
                                                   static_cast<cl_device_id>(device), 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_event gate = cl.create_user_event(static_cast<cl_context>(context), &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(cl.enqueue_barrier(queue, 1, &gate, nullptr), CL_SUCCESS);
  ASSERT_EQ(cl.flush(queue), CL_SUCCESS);

  anydev_bk_stream_t stream = nullptr;
  ASSERT_EQ(table.stream_wrap_native(table.instance, 0, queue, &stream), ANYDEV_SUCCESS)
      << last_error();
  void* buffer = nullptr;
  void* address = nullptr;
  ASSERT_EQ(table.device_alloc(table.instance, 0, 4096, nullptr, &buffer, &address),
            ANYDEV_SUCCESS);

  std::atomic<int> enqueued{0};
  std::atomic<int> failures{0};
  std::thread filler([&] {
    const unsigned pattern = 7;
    for (int i = 0; i < kCommands; ++i) {
      if (table.fill(table.instance, stream, device_ref(buffer), &pattern, sizeof(pattern), 4096) !=
          ANYDEV_SUCCESS) {
        failures.fetch_add(1);
      }
      enqueued.fetch_add(1);
    }
  });
  while (enqueued.load() < kBound) std::this_thread::yield();
  // The filler has reached the bound. Give it time to go past it if it
  // could (without the bound it enqueues all 3072 in a few milliseconds);
  // the sleep only gives a broken build the chance to show it.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int while_stalled = enqueued.load();

  cl.set_user_event_status(gate, CL_COMPLETE);  // open the gate before any assertion
  filler.join();
  EXPECT_EQ(while_stalled, kBound) << "the stream took more commands than its bound";
  EXPECT_EQ(enqueued.load(), kCommands);
  EXPECT_EQ(failures.load(), 0) << last_error();
  EXPECT_EQ(table.stream_synchronize(table.instance, stream), ANYDEV_SUCCESS) << last_error();
  EXPECT_EQ(table.stream_destroy(table.instance, stream), ANYDEV_SUCCESS) << last_error();
  EXPECT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_DEVICE, buffer), ANYDEV_SUCCESS);
  cl.release_event(gate);
  cl.release_command_queue(queue);
}

// Threads that fill their own streams faster than the device works keep at
// most the bound each in flight: everything completes and nothing fails.
TEST(OpenclBackpressure, ManyThreadsFillingTheirOwnStreamsComplete) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  const anydev_backend_table_t& table = *plugin.table;
  constexpr int kThreads = 4;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      anydev_bk_stream_t stream = nullptr;
      void* buffer = nullptr;
      void* address = nullptr;
      if (table.stream_create(table.instance, 0, &stream) != ANYDEV_SUCCESS ||
          table.device_alloc(table.instance, 0, 1 << 16, nullptr, &buffer, &address) !=
              ANYDEV_SUCCESS) {
        failures.fetch_add(1);
        return;
      }
      const unsigned pattern = 3;
      for (int i = 0; i < 2 * kBound; ++i) {
        if (table.fill(table.instance, stream, device_ref(buffer), &pattern, sizeof(pattern),
                       1 << 16) != ANYDEV_SUCCESS) {
          failures.fetch_add(1);
        }
      }
      if (table.stream_synchronize(table.instance, stream) != ANYDEV_SUCCESS) failures.fetch_add(1);
      table.stream_destroy(table.instance, stream);
      table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_DEVICE, buffer);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
