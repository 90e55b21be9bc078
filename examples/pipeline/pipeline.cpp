// SPDX-License-Identifier: Apache-2.0
// A double-buffered host -> device pipeline, the shape of an ML runtime's
// input feeder, with anydev owning every byte of memory.
//
// Two slots, each: a pinned host staging buffer, a device buffer, a pinned
// host result buffer and two events. Chunk i goes through slot i % 2:
//
//   host:          produce chunk i into staging[s]   (after uploaded[s]: its
//                                                    previous upload is done)
//   upload stream: device[s] <- staging[s]           (after consumed[s]: the
//                  record uploaded[s]                 previous chunk was used)
//   compute stream: wait uploaded[s]
//                  result[s] <- device[s]            (stands for a kernel
//                  record consumed[s]                 consuming the chunk)
//   host:          reduce result[s] of chunk i - 1 while chunk i uploads
//
// so producing, uploading and consuming of neighbouring chunks overlap, and
// no buffer is reused before the work reading it has finished. The program
// checks the reduction against its closed form and exits non-zero on a
// mismatch. Usage: anydev-pipeline [chunks] [elements per chunk]
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>

#include "anydev/anydev.hpp"

namespace {

struct Slot {
  anydev::HostBuffer<std::int64_t> staging;
  anydev::DeviceBuffer<std::int64_t> device;
  anydev::HostBuffer<std::int64_t> result;
  anydev::DeviceEvent uploaded;
  anydev::DeviceEvent consumed;
};

// Element k of chunk i is i * n + k: chunk i sums to n * (i * n) + n (n - 1) / 2.
void produce(const anydev::HostBuffer<std::int64_t>& staging, std::int64_t chunk) {
  const auto n = static_cast<std::int64_t>(staging.size());
  for (std::int64_t k = 0; k < n; ++k) staging[static_cast<std::size_t>(k)] = chunk * n + k;
}

std::int64_t reduce(const anydev::HostBuffer<std::int64_t>& result) {
  std::int64_t sum = 0;
  for (const std::int64_t v : result.as_span()) sum += v;
  return sum;
}

int run(std::int64_t chunks, std::size_t elements) {
  const anydev::DeviceContext ctx;
  const anydev::DeviceStream upload_stream = ctx.create_stream();
  const anydev::DeviceStream compute_stream = ctx.create_stream();
  const anydev::DeviceContext upload = ctx.with_stream(upload_stream);
  const anydev::DeviceContext compute = ctx.with_stream(compute_stream);

  std::array<Slot, 2> slots;
  for (Slot& slot : slots) {
    slot.staging = upload.enqueue_create_host_buffer<std::int64_t>(elements);
    slot.device = upload.enqueue_create_buffer<std::int64_t>(elements);  // copies run on upload
    slot.result = compute.enqueue_create_host_buffer<std::int64_t>(elements);  // ... on compute
    slot.uploaded = ctx.create_event();
    slot.consumed = ctx.create_event();
  }

  std::int64_t total = 0;
  std::optional<std::int64_t> pending;  // the chunk whose result awaits reduction
  const auto reduce_pending = [&] {
    if (!pending) return;
    Slot& slot = slots[static_cast<std::size_t>(*pending % 2)];
    slot.consumed.synchronize();
    total += reduce(slot.result);
    pending.reset();
  };
  for (std::int64_t i = 0; i < chunks; ++i) {
    Slot& slot = slots[static_cast<std::size_t>(i % 2)];
    slot.uploaded.synchronize();  // staging[s] is free once its last upload finished
    produce(slot.staging, i);
    upload_stream.enqueue_wait_for(slot.consumed);  // device[s] is free once consumed
    slot.device.enqueue_copy_from(slot.staging);
    upload_stream.record_event(slot.uploaded);
    compute_stream.enqueue_wait_for(slot.uploaded);
    reduce_pending();  // chunk i - 1, while chunk i uploads
    slot.result.enqueue_copy_from(slot.device);
    compute_stream.record_event(slot.consumed);
    pending = i;
  }
  reduce_pending();
  ctx.synchronize();

  const auto n = static_cast<std::int64_t>(elements);
  const std::int64_t values = chunks * n;
  const std::int64_t expected = values * (values - 1) / 2;
  std::printf("anydev pipeline on %s (%s): %lld chunks x %zu int64, sum %lld, expected %lld: %s\n",
              ctx.api().c_str(), ctx.name().c_str(), static_cast<long long>(chunks), elements,
              static_cast<long long>(total), static_cast<long long>(expected),
              total == expected ? "ok" : "MISMATCH");
  return total == expected ? EXIT_SUCCESS : EXIT_FAILURE;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t chunks = argc > 1 ? std::atoll(argv[1]) : 32;
  const long long elements = argc > 2 ? std::atoll(argv[2]) : 1 << 16;
  if (chunks <= 0 || elements <= 0) {
    std::fprintf(stderr, "usage: %s [chunks > 0] [elements per chunk > 0]\n", argv[0]);
    return EXIT_FAILURE;
  }
  try {
    return run(chunks, static_cast<std::size_t>(elements));
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "anydev error (%s): %s\n", anydev::to_string(e.status()), e.what());
    return EXIT_FAILURE;
  }
}
