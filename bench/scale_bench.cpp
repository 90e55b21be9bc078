// SPDX-License-Identifier: Apache-2.0
// anydev-scale-bench: whether anydev's costs stay flat as the work grows, on
// the backend ANYDEV_BACKEND names (default cpu; device 0), each figure beside
// its baseline. Prints one JSON object
// (scripts/bench-report turns it into the Scale section of
// docs/performance.md and docs/performance-scale.svg).
//
//   enqueue   4-byte host->device copies back to back from 1, 2, 4 and 8
//             threads, each on its own stream ("own") and all on the
//             context's one stream ("shared"), a synchronize() every 1024
//             per thread: aggregate ops/s, best of nine passes (baseline:
//             one thread's rate), the median over the passes of each
//             pass's ratio to one thread's rate in the same pass (every
//             pass runs all eight cases, in an order that alternates), and
//             the least CPU time per copy (all threads), which other load
//             on the machine does not inflate; beside them, the time a
//             cache line takes to move from one core to another (two
//             threads on two cores passing a counter back and forth, best
//             of five passes): what a stream shared by threads pays
//             whenever its state changes hands
//   buffers   with 10^3 .. 10^6 buffers live: per-operation time of create
//             (64-byte device buffers), create_sub_buffer (one view of each)
//             and release (views, then buffers), the faster of two passes
//             (the first also grows the process's memory); host memory per live
//             handle (mallinfo2 heap growth, and resident-set growth less
//             the buffers' own bytes; on a backend other than cpu it holds
//             what the vendor's library keeps per allocation too) and the
//             device memory the driver allocated for them, per buffer (from
//             the pool's statistics: an emulator or PoCL keeps it on the
//             heap); baselines:
//             malloc + free of 64 bytes
//             at the same live counts, and the records baseline (touch_*:
//             the same records made, written, counted and freed in the same
//             order without anydev, touch_pass)
//   streams   1,000 streams on one context: per-operation time to create
//             (stream + context on it), use (one 4-byte copy + synchronize
//             each) and destroy, beside the same with one stream live
//   pool      the caching pool under a random size mix (sizes 1 B - 64 MiB,
//             log-uniform; a live set of up to 32 buffers, allocate or
//             release with equal odds): bytes reserved (in use + cached) /
//             bytes live, sampled over the run, and the pool's cached bytes
//             after anydev_context_release_cached_memory (must be 0); run
//             with the default release threshold ("pool") and with 0
//             ("pool_threshold_0": the pool then keeps only a quarter of
//             its bytes in use and the block released last)
//
// Usage: anydev-scale-bench [--quick] [--only=SUITE] [--max-live=N]
//   --quick: fewer operations, the largest live count and the pool mix
//   scaled down; well under a minute. --max-live: the live-buffer suite
//   stops at the largest power of ten <= N (a driver or emulator that cannot
//   hold 10^6 buffers).
// Every time is wall-clock; one run, the best of a few passes where said.
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "anydev/anydev.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Exits with the operation's message: a benchmark has no way to go on.
void check(anydev_status_t status, const char* what) {
  if (status == ANYDEV_SUCCESS) return;
  std::fprintf(stderr, "anydev-scale-bench: %s failed: %s (%s)\n", what, anydev_status_name(status),
               anydev_last_error_message());
  std::exit(1);
}

// The heap's bytes in use, plus the records anydev keeps off the heap (its
// record slab): what a live handle costs in host memory either way.
std::size_t heap_bytes() {
  const struct mallinfo2 info = mallinfo2();
  anydev_record_memory_t records{};
  records.struct_size = sizeof(records);
  check(anydev_record_memory(&records), "record_memory");
  return info.uordblks + info.hblkhd + records.bytes_in_use;
}

std::size_t resident_bytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// ---- enqueue rate ----------------------------------------------------------

constexpr int kBatch = 1024;

// The process's CPU time (every thread, user + system), in seconds.
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

struct Rate {
  double ops_per_second = 0;
  double cpu_ns_per_op = 0;  // the process's CPU time per copy, all threads
};

// Aggregate 4-byte copies per second from `threads` threads, and the CPU
// time they took: on a machine whose other load takes cores away the wall
// rate of several threads falls without any contention in anydev, while
// the CPU time per copy rises only with contention (spinning, cache lines
// moving between cores).
Rate enqueue_rate(anydev_context_t ctx, unsigned threads, bool shared, int batches) {
  struct Worker {
    anydev_context_t ctx = nullptr;
    anydev_stream_t stream = nullptr;
    anydev_buffer_t host = nullptr, device = nullptr;
  };
  std::vector<Worker> workers(threads);
  for (Worker& w : workers) {
    if (shared) {
      check(anydev_context_retain(ctx), "context_retain");
      w.ctx = ctx;
    } else {
      check(anydev_context_create_stream(ctx, &w.stream), "create_stream");
      check(anydev_context_with_stream(ctx, w.stream, &w.ctx), "with_stream");
    }
    check(anydev_buffer_create(w.ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 4, &w.host),
          "buffer_create");
    check(anydev_buffer_create(w.ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4, &w.device),
          "buffer_create");
    check(anydev_context_synchronize(w.ctx), "synchronize");
  }
  auto run = [&](Worker& w) {
    for (int b = 0; b < batches; ++b) {
      for (int i = 0; i < kBatch; ++i) check(anydev_enqueue_copy(w.ctx, w.device, w.host), "copy");
      check(anydev_context_synchronize(w.ctx), "synchronize");
    }
  };
  const double cpu_start = process_cpu_seconds();
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back([&, t] { run(workers[t]); });
  run(workers[0]);
  for (std::thread& t : pool) t.join();
  const double seconds = since(start);
  const double cpu = process_cpu_seconds() - cpu_start;
  for (Worker& w : workers) {
    check(anydev_buffer_release(w.host), "buffer_release");
    check(anydev_buffer_release(w.device), "buffer_release");
    check(anydev_context_release(w.ctx), "context_release");
    if (w.stream != nullptr) check(anydev_stream_release(w.stream), "stream_release");
  }
  const double ops = static_cast<double>(threads) * batches * kBatch;
  return {ops / seconds, cpu / ops * 1e9};
}

// The time a cache line takes to move between two cores, in ns: two
// threads, pinned to two different CPUs the process may run on, pass a
// counter back and forth (each waits for the other's increment, then
// increments); a round trip moves the line twice. The best of five passes
// of 100,000 round trips. 0 when the process may run on one CPU only.
double line_transfer_ns(bool quick) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return 0;
  int cpus[2] = {-1, -1};
  for (int c = 0, found = 0; c < CPU_SETSIZE && found < 2; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus[found++] = c;
  }
  const std::uint64_t round_trips = quick ? 20000 : 100000;
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    struct alignas(64) Line {
      std::atomic<std::uint64_t> value{0};
    } line;
    // Each side waits for the other's move, then makes its own; a waiter
    // yields now and then in case the other thread was descheduled.
    auto side = [&](int cpu, std::uint64_t first) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pthread_setaffinity_np(pthread_self(), sizeof one, &one);
      for (std::uint64_t n = first; n < 2 * round_trips; n += 2) {
        for (unsigned spins = 0; line.value.load(std::memory_order_acquire) != n; ++spins) {
          if ((spins & 0xFFFFF) == 0xFFFFF) sched_yield();
        }
        line.value.store(n + 1, std::memory_order_release);
      }
    };
    std::atomic<bool> ready{false};
    std::thread other([&] {
      ready.store(true);
      side(cpus[1], 1);
    });
    while (!ready.load()) std::this_thread::yield();
    const auto start = Clock::now();
    side(cpus[0], 0);
    other.join();
    const double ns = since(start) * 1e9 / static_cast<double>(2 * round_trips);
    if (pass == 0 || ns < best) best = ns;
  }
  return best;
}

void suite_enqueue(anydev_context_t ctx, bool quick, std::string& json) {
  const int batches = quick ? 100 : 400;
  const int passes = quick ? 5 : 9;
  struct Case {
    unsigned threads;
    bool shared;
    std::size_t baseline;  // the index of the same kind's one-thread case
    Rate best;
    double least_cpu = 0;
    std::vector<double> ratios;  // per pass: this case's rate / its baseline's
  };
  std::vector<Case> cases;
  for (const bool shared : {false, true}) {
    const std::size_t baseline = cases.size();  // one thread comes first
    for (const unsigned threads : {1u, 2u, 4u, 8u}) {
      cases.push_back({threads, shared, baseline, {}, 0, {}});
    }
  }
  for (int pass = 0; pass < passes; ++pass) {
    // Every case once per pass, forwards and backwards in turn, so that a
    // case and its one-thread baseline run close together in time and
    // neither always runs first.
    std::vector<double> rate(cases.size());
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const std::size_t i = pass % 2 == 0 ? k : cases.size() - 1 - k;
      Case& c = cases[i];
      const Rate r = enqueue_rate(ctx, c.threads, c.shared, batches / c.threads + 1);
      rate[i] = r.ops_per_second;
      if (r.ops_per_second > c.best.ops_per_second) c.best = r;
      if (pass == 0 || r.cpu_ns_per_op < c.least_cpu) c.least_cpu = r.cpu_ns_per_op;
    }
    for (std::size_t i = 0; i < cases.size(); ++i) {
      cases[i].ratios.push_back(rate[i] / rate[cases[i].baseline]);
    }
  }
  json += "\"enqueue\": [";
  bool first = true;
  for (Case& c : cases) {
    std::sort(c.ratios.begin(), c.ratios.end());
    const std::size_t n = c.ratios.size();
    const double median =
        n % 2 == 1 ? c.ratios[n / 2] : (c.ratios[n / 2 - 1] + c.ratios[n / 2]) / 2;
    char row[300];
    std::snprintf(row, sizeof row,
                  "%s{\"threads\": %u, \"stream\": \"%s\", \"ops_per_second\": %.0f, "
                  "\"cpu_ns_per_op\": %.1f, \"paired_ratio\": %.4f, \"paired_lowest\": %.4f, "
                  "\"paired_highest\": %.4f, \"passes\": %zu}",
                  first ? "" : ", ", c.threads, c.shared ? "shared" : "own", c.best.ops_per_second,
                  c.least_cpu, median, c.ratios.front(), c.ratios.back(), n);
    json += row;
    first = false;
  }
  json += "]";
  char row[100];
  std::snprintf(row, sizeof row, ", \"line_transfer_ns\": %.1f", line_transfer_ns(quick));
  json += row;
}

// ---- live buffers --------------------------------------------------------------

// One pass at `n` live buffers: per-operation seconds and the memory figures.
struct BufferPass {
  double create = 0, sub = 0, release = 0, malloc_free = 0;
  double heap_per = 0, rss_per = 0;
  double device_per = 0;  // device memory the driver allocated for them, per buffer
  double touch_create = 0, touch_sub = 0, touch_release = 0;  // the records baseline
};

// The records baseline: the same memory traffic as anydev's handles without
// anydev: per buffer, a handle and a record of the sizes anydev allocates
// (anydev_buffer_s, src/api/objects.h; the Allocation with its release strategy
// and shared_ptr control block, src/memory/allocation.h), written when made; per
// sub-buffer another handle, written, and the record's count raised
// (atomically, as a shared_ptr copy); released in the same order, each
// count lowered. What grows with the live count here is the machine's
// (caches, TLB, the allocator's free lists), not anydev's.
constexpr std::size_t kTouchHandleBytes = 88;
constexpr std::size_t kTouchRecordBytes = 136;

struct TouchRecord {
  std::atomic<long> refs;
};
struct TouchHandle {
  TouchRecord* record;
};

void touch_pass(std::size_t n, BufferPass& p) {
  std::vector<TouchHandle*> buffers(n), views(n);
  auto make_handle = [](TouchRecord* record) {
    auto* h = static_cast<TouchHandle*>(std::malloc(kTouchHandleBytes));
    if (h == nullptr) std::exit(1);
    std::memset(static_cast<void*>(h), 0, kTouchHandleBytes);
    h->record = record;
    return h;
  };
  auto start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    auto* r = static_cast<TouchRecord*>(std::malloc(kTouchRecordBytes));
    if (r == nullptr) std::exit(1);
    std::memset(static_cast<void*>(r), 0, kTouchRecordBytes);
    r->refs.store(1, std::memory_order_relaxed);
    buffers[i] = make_handle(r);
  }
  p.touch_create = since(start) / static_cast<double>(n);
  start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    buffers[i]->record->refs.fetch_add(1, std::memory_order_relaxed);
    views[i] = make_handle(buffers[i]->record);
  }
  p.touch_sub = since(start) / static_cast<double>(n);
  auto drop = [](TouchHandle* h) {
    if (h->record->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) std::free(h->record);
    std::free(h);
  };
  start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) drop(views[i]);
  for (std::size_t i = 0; i < n; ++i) drop(buffers[i]);
  p.touch_release = since(start) / (2.0 * static_cast<double>(n));
}

anydev_pool_stats_t device_pool_stats(anydev_context_t ctx) {
  anydev_pool_stats_t stats{};
  stats.struct_size = sizeof(stats);
  check(anydev_context_pool_stats(ctx, ANYDEV_MEMORY_DEVICE, &stats), "pool_stats");
  return stats;
}

BufferPass buffer_pass(anydev_context_t ctx, std::size_t n, std::size_t bytes) {
  BufferPass p;
  std::vector<anydev_buffer_t> buffers(n), views(n);
  check(anydev_context_synchronize(ctx), "synchronize");
  const anydev_pool_stats_t pool_before = device_pool_stats(ctx);
  const std::size_t heap_before = heap_bytes();
  const std::size_t rss_before = resident_bytes();
  auto start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    check(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, bytes, &buffers[i]),
          "buffer_create");
  }
  p.create = since(start) / static_cast<double>(n);
  check(anydev_context_synchronize(ctx), "synchronize");
  const std::size_t heap_live = heap_bytes();
  const std::size_t rss_live = resident_bytes();
  const anydev_pool_stats_t pool_live = device_pool_stats(ctx);
  start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    check(anydev_buffer_create_sub_buffer(buffers[i], ANYDEV_DTYPE_UINT8, 16, 32, &views[i]),
          "create_sub_buffer");
  }
  p.sub = since(start) / static_cast<double>(n);
  start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) check(anydev_buffer_release(views[i]), "release");
  for (std::size_t i = 0; i < n; ++i) check(anydev_buffer_release(buffers[i]), "release");
  check(anydev_context_synchronize(ctx), "synchronize");
  p.release = since(start) / (2.0 * static_cast<double>(n));
  // Baseline: malloc and free of the same size at the same live count.
  std::vector<void*> blocks(n);
  start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) blocks[i] = std::malloc(bytes);
  for (std::size_t i = 0; i < n; ++i) std::free(blocks[i]);
  p.malloc_free = since(start) / static_cast<double>(n);
  touch_pass(n, p);
  const double count = static_cast<double>(n);
  p.heap_per = (static_cast<double>(heap_live) - static_cast<double>(heap_before)) / count;
  p.rss_per = (static_cast<double>(rss_live) - static_cast<double>(rss_before)) / count -
              static_cast<double>(bytes);
  // Carved blocks: the segments made for them; otherwise a driver
  // allocation of the block's size each.
  const double device = pool_live.bytes_in_segments > 0
                            ? static_cast<double>(pool_live.bytes_in_segments) -
                                  static_cast<double>(pool_before.bytes_in_segments)
                            : static_cast<double>(pool_live.bytes_in_use) -
                                  static_cast<double>(pool_before.bytes_in_use);
  p.device_per = std::max(0.0, device) / count;
  return p;
}

// Passes per live count: at least two, and enough for about 2 * 10^5
// buffers in all (a pass of 10^3 takes some 100 us, less than one burst of
// the machine's other load). The first pass also pays for growing the
// process's memory (page faults on fresh heap and buffer pages), later ones
// run in memory the process already has. Times: the fastest pass of each
// operation; memory: the first pass (later ones may reuse what it left).
void suite_buffers(anydev_context_t ctx, bool quick, std::size_t max_live, std::string& json) {
  constexpr std::size_t kBytes = 64;
  std::vector<std::size_t> counts = {1000, 10000, 100000, 1000000};
  if (quick) counts.pop_back();
  while (!counts.empty() && counts.back() > max_live) counts.pop_back();
  json += "\"buffers\": [";
  bool first = true;
  for (const std::size_t n : counts) {
    const BufferPass a = buffer_pass(ctx, n, kBytes);
    BufferPass b = buffer_pass(ctx, n, kBytes);
    const std::size_t passes = std::max<std::size_t>(2, 200000 / n);
    for (std::size_t k = 2; k < passes; ++k) {
      const BufferPass c = buffer_pass(ctx, n, kBytes);
      b.create = std::min(b.create, c.create);
      b.sub = std::min(b.sub, c.sub);
      b.release = std::min(b.release, c.release);
      b.malloc_free = std::min(b.malloc_free, c.malloc_free);
      b.touch_create = std::min(b.touch_create, c.touch_create);
      b.touch_sub = std::min(b.touch_sub, c.touch_sub);
      b.touch_release = std::min(b.touch_release, c.touch_release);
    }
    // The same passes with the pool keeping every block (no trim at the
    // release threshold): what the threshold's trimming costs at high counts.
    std::size_t saved = 0;
    check(anydev_context_pool_release_threshold(ctx, ANYDEV_MEMORY_DEVICE, &saved),
          "pool_release_threshold");
    check(anydev_context_set_pool_release_threshold(ctx, ANYDEV_MEMORY_DEVICE, SIZE_MAX),
          "set_pool_release_threshold");
    BufferPass keep = buffer_pass(ctx, n, kBytes);
    for (std::size_t k = 1; k < passes; ++k) {
      const BufferPass c = buffer_pass(ctx, n, kBytes);
      keep.create = std::min(keep.create, c.create);
      keep.sub = std::min(keep.sub, c.sub);
      keep.release = std::min(keep.release, c.release);
    }
    check(anydev_context_set_pool_release_threshold(ctx, ANYDEV_MEMORY_DEVICE, saved),
          "set_pool_release_threshold");
    check(anydev_context_release_cached_memory(ctx), "release_cached_memory");
    char row[1024];
    std::snprintf(row, sizeof row,
                  "%s{\"live\": %zu, \"create_ns\": %.1f, \"sub_buffer_ns\": %.1f, "
                  "\"release_ns\": %.1f, \"malloc_free_ns\": %.1f, \"first_create_ns\": %.1f, "
                  "\"heap_bytes_per_handle\": %.1f, \"rss_bytes_per_handle\": %.1f, "
                  "\"device_bytes_per_handle\": %.1f, "
                  "\"touch_create_ns\": %.1f, \"touch_sub_buffer_ns\": %.1f, "
                  "\"touch_release_ns\": %.1f, \"keep_create_ns\": %.1f, "
                  "\"keep_sub_buffer_ns\": %.1f, \"keep_release_ns\": %.1f}",
                  first ? "" : ", ", n, std::min(a.create, b.create) * 1e9,
                  std::min(a.sub, b.sub) * 1e9, std::min(a.release, b.release) * 1e9,
                  std::min(a.malloc_free, b.malloc_free) * 1e9, a.create * 1e9, a.heap_per,
                  a.rss_per, a.device_per, std::min(a.touch_create, b.touch_create) * 1e9,
                  std::min(a.touch_sub, b.touch_sub) * 1e9,
                  std::min(a.touch_release, b.touch_release) * 1e9, keep.create * 1e9,
                  keep.sub * 1e9, keep.release * 1e9);
    json += row;
    first = false;
  }
  json += "]";
}

// ---- streams ----------------------------------------------------------------------

struct StreamTimes {
  double create = 0, use = 0, destroy = 0;
};

StreamTimes stream_times(anydev_context_t ctx, std::size_t n) {
  std::vector<anydev_stream_t> streams(n);
  std::vector<anydev_context_t> ctxs(n);
  std::vector<anydev_buffer_t> host(n), device(n);
  StreamTimes t;
  auto start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    check(anydev_context_create_stream(ctx, &streams[i]), "create_stream");
    check(anydev_context_with_stream(ctx, streams[i], &ctxs[i]), "with_stream");
  }
  t.create = since(start) / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    check(anydev_buffer_create(ctxs[i], ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 4, &host[i]),
          "buffer_create");
    check(anydev_buffer_create(ctxs[i], ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4, &device[i]),
          "buffer_create");
  }
  for (std::size_t i = 0; i < n; ++i) check(anydev_context_synchronize(ctxs[i]), "synchronize");
  start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    check(anydev_enqueue_copy(ctxs[i], device[i], host[i]), "copy");
    check(anydev_context_synchronize(ctxs[i]), "synchronize");
  }
  t.use = since(start) / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    check(anydev_buffer_release(host[i]), "release");
    check(anydev_buffer_release(device[i]), "release");
    check(anydev_context_synchronize(ctxs[i]), "synchronize");
  }
  start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    check(anydev_context_release(ctxs[i]), "context_release");
    check(anydev_stream_release(streams[i]), "stream_release");
  }
  t.destroy = since(start) / static_cast<double>(n);
  return t;
}

void suite_streams(anydev_context_t ctx, std::string& json) {
  constexpr std::size_t kStreams = 1000;
  StreamTimes many, one;
  for (int pass = 0; pass < 3; ++pass) {
    const StreamTimes m = stream_times(ctx, kStreams);
    StreamTimes o;
    for (std::size_t k = 0; k < kStreams; ++k) {  // one live at a time, as often
      const StreamTimes s = stream_times(ctx, 1);
      o.create += s.create / kStreams;
      o.use += s.use / kStreams;
      o.destroy += s.destroy / kStreams;
    }
    if (pass == 0 || m.create + m.use + m.destroy < many.create + many.use + many.destroy) many = m;
    if (pass == 0 || o.create + o.use + o.destroy < one.create + one.use + one.destroy) one = o;
  }
  char row[400];
  std::snprintf(row, sizeof row,
                "\"streams\": {\"live\": %zu, \"create_ns\": %.1f, \"use_ns\": %.1f, "
                "\"destroy_ns\": %.1f, \"one_live_create_ns\": %.1f, \"one_live_use_ns\": %.1f, "
                "\"one_live_destroy_ns\": %.1f}",
                kStreams, many.create * 1e9, many.use * 1e9, many.destroy * 1e9, one.create * 1e9,
                one.use * 1e9, one.destroy * 1e9);
  json += row;
}

// ---- caching pool under a random size mix ---------------------------------------

// `key`: the JSON member; `threshold`: the pool's release threshold for the
// run (SIZE_MAX: leave the default), restored afterwards.
void suite_pool(anydev_context_t ctx, bool quick, const char* key, std::size_t threshold,
                std::string& json) {
  std::size_t saved = 0;
  check(anydev_context_pool_release_threshold(ctx, ANYDEV_MEMORY_DEVICE, &saved),
        "pool_release_threshold");
  if (threshold != SIZE_MAX) {
    check(anydev_context_set_pool_release_threshold(ctx, ANYDEV_MEMORY_DEVICE, threshold),
          "set_pool_release_threshold");
  }
  const std::size_t ops = quick ? 20000 : 1000000;
  constexpr std::size_t kLiveMost = 32;
  constexpr double kLargest = 64.0 * 1024 * 1024;
  std::mt19937_64 random(19);
  std::uniform_real_distribution<double> log_size(0.0, std::log(kLargest));
  struct Live {
    anydev_buffer_t buffer;
    std::size_t bytes;
  };
  std::vector<Live> live;
  std::size_t live_bytes = 0;
  check(anydev_context_release_cached_memory(ctx), "release_cached_memory");
  anydev_pool_stats_t at_start{};
  at_start.struct_size = sizeof at_start;
  check(anydev_context_pool_stats(ctx, ANYDEV_MEMORY_DEVICE, &at_start), "pool_stats");
  // Samples with at least this many bytes live, where the pool's fixed
  // allowance (its release threshold, 16 MiB by default, and the block
  // released last) no longer dominates the ratio.
  constexpr std::size_t kLargeLive = std::size_t{128} << 20;
  std::vector<double> large_ratios;
  const std::size_t samples = 200;
  std::vector<double> ratios;
  std::string series;
  double worst = 0;
  const auto start = Clock::now();
  for (std::size_t op = 0; op < ops; ++op) {
    const bool allocate = live.empty() || (live.size() < kLiveMost && (random() & 1) != 0);
    if (allocate) {
      const auto bytes = static_cast<std::size_t>(std::exp(log_size(random)));
      anydev_buffer_t b = nullptr;
      check(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, bytes ? bytes : 1,
                                 &b),
            "buffer_create");
      live.push_back({b, bytes ? bytes : 1});
      live_bytes += live.back().bytes;
    } else {
      const std::size_t k = random() % live.size();
      check(anydev_buffer_release(live[k].buffer), "release");
      live_bytes -= live[k].bytes;
      live[k] = live.back();
      live.pop_back();
    }
    if ((op + 1) % (ops / samples) == 0 && live_bytes > 0) {
      anydev_pool_stats_t stats{};
      stats.struct_size = sizeof stats;
      check(anydev_context_pool_stats(ctx, ANYDEV_MEMORY_DEVICE, &stats), "pool_stats");
      const double ratio = static_cast<double>(stats.bytes_in_use + stats.bytes_cached) /
                           static_cast<double>(live_bytes);
      ratios.push_back(ratio);
      if (live_bytes >= kLargeLive) large_ratios.push_back(ratio);
      worst = std::max(worst, ratio);
      char point[64];
      std::snprintf(point, sizeof point, "%s[%zu, %.4f]", series.empty() ? "" : ", ", op + 1,
                    ratio);
      series += point;
    }
  }
  const double seconds = since(start);
  for (const Live& l : live) check(anydev_buffer_release(l.buffer), "release");
  check(anydev_context_synchronize(ctx), "synchronize");
  anydev_pool_stats_t before{}, after{};
  before.struct_size = after.struct_size = sizeof before;
  check(anydev_context_pool_stats(ctx, ANYDEV_MEMORY_DEVICE, &before), "pool_stats");
  check(anydev_context_release_cached_memory(ctx), "release_cached_memory");
  check(anydev_context_pool_stats(ctx, ANYDEV_MEMORY_DEVICE, &after), "pool_stats");
  std::sort(ratios.begin(), ratios.end());
  const double median = ratios.empty() ? 0 : ratios[ratios.size() / 2];
  std::sort(large_ratios.begin(), large_ratios.end());
  const double large_median = large_ratios.empty() ? 0 : large_ratios[large_ratios.size() / 2];
  const double large_max = large_ratios.empty() ? 0 : large_ratios.back();
  char row[768];
  std::snprintf(
      row, sizeof row,
      "\"%s\": {\"release_threshold\": %zu, \"ops\": %zu, \"live_most\": %zu, \"seconds\": %.3f, "
      "\"median_ratio\": %.4f, \"max_ratio\": %.4f, \"large_live_samples\": %zu, "
      "\"large_live_median_ratio\": %.4f, \"large_live_max_ratio\": %.4f, "
      "\"hits\": %llu, \"misses\": %llu, "
      "\"cached_before_release\": %zu, \"cached_after_release\": %zu, "
      "\"in_use_after_release\": %zu, \"series\": [",
      key, threshold != SIZE_MAX ? threshold : saved, ops, kLiveMost, seconds, median, worst,
      large_ratios.size(), large_median, large_max,
      static_cast<unsigned long long>(after.cache_hits - at_start.cache_hits),
      static_cast<unsigned long long>(after.cache_misses - at_start.cache_misses),
      before.bytes_cached, after.bytes_cached, after.bytes_in_use);
  json += row;
  json += series;
  json += "]}";
  check(anydev_context_set_pool_release_threshold(ctx, ANYDEV_MEMORY_DEVICE, saved),
        "set_pool_release_threshold");
}

}  // namespace

// The JSON string for `text` (backend and device names: quotes and
// backslashes escaped, control characters dropped).
std::string json_string(const char* text) {
  std::string out = "\"";
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c == '"' || *c == '\\') out += '\\';
    if (static_cast<unsigned char>(*c) >= 0x20) out += *c;
  }
  return out + "\"";
}

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  std::size_t max_live = SIZE_MAX;
  auto usage = [] {
    std::fprintf(stderr,
                 "usage: anydev-scale-bench [--quick] [--only=enqueue|buffers|streams|pool] "
                 "[--max-live=N (N >= 1000)]\n");
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strncmp(argv[i], "--only=", 7) == 0) {
      only = argv[i] + 7;
    } else if (std::strncmp(argv[i], "--max-live=", 11) == 0) {
      char* end = nullptr;
      max_live = std::strtoull(argv[i] + 11, &end, 10);
      if (*end != '\0' || max_live < 1000) return usage();
    } else {
      return usage();
    }
  }
  const char* backend = std::getenv("ANYDEV_BACKEND");
  const std::string api = backend != nullptr && *backend != '\0' ? backend : "cpu";
  anydev_context_t ctx = nullptr;
  check(anydev_context_create(api.c_str(), 0, &ctx), "context_create");
  const char* device = "";
  check(anydev_context_device_name(ctx, &device), "context_device_name");
  std::string json = "{\"backend\": " + json_string(api.c_str()) +
                     ", \"device\": " + json_string(device) + ", \"quick\": ";
  json += quick ? "true" : "false";
  auto want = [&](const char* name) { return only.empty() || only == name; };
  if (want("enqueue")) {
    json += ", ";
    suite_enqueue(ctx, quick, json);
  }
  if (want("buffers")) {
    json += ", ";
    suite_buffers(ctx, quick, max_live, json);
  }
  if (want("streams")) {
    json += ", ";
    suite_streams(ctx, json);
  }
  if (want("pool")) {
    json += ", ";
    suite_pool(ctx, quick, "pool", SIZE_MAX, json);
    json += ", ";
    suite_pool(ctx, quick, "pool_threshold_0", 0, json);
  }
  json += "}\n";
  std::fputs(json.c_str(), stdout);
  check(anydev_context_release(ctx), "context_release");
  return 0;
}
