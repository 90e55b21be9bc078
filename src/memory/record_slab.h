// SPDX-License-Identifier: Apache-2.0
// RecordSlab: host memory for the small records anydev keeps one of per live
// buffer (the handle, anydev_buffer_s; the Allocation with its shared_ptr
// control block), in size classes of 16 bytes up to 256.
//
// Why not the heap: a program that releases its buffers and makes as many
// again pays the kernel once per page of records each time, because glibc
// hands the top of its heap back when it frees (trim) and the next records
// land on fresh pages; and malloc's header is 8-16 bytes on a record of
// 88-144. Here records come from 2 MiB chunks mapped from the kernel; every
// chunk after a class's first is advised onto a huge page, so a fresh chunk
// costs one fault for thousands of records. A chunk whose records are all
// freed goes back to the kernel, except one kept per class so that a count
// hovering at a chunk boundary does not map and unmap in turn.
//
// Thread-safe: each size class has its own SmallMutex (held for a few
// pointer moves; a chunk is mapped or unmapped under it, once per 2 MiB).
// Fork-safe: the process-wide slab's locks are taken around fork() (see
// record_slab.cpp). Records are never moved; a block is handed out again only
// after it was freed. Owns its chunks; the process-wide slab lives for the
// process (its chunks hold records of objects that may outlive static
// destruction).
#ifndef ANYDEV_SRC_MEMORY_RECORD_SLAB_H_
#define ANYDEV_SRC_MEMORY_RECORD_SLAB_H_

#include <array>
#include <cstddef>
#include <new>

#include "support/small_mutex.h"

namespace anydev::core {

class RecordSlab {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{2} << 20;
  static constexpr std::size_t kGranule = 16;  // size step and block alignment
  static constexpr std::size_t kLargest = 256;

  struct Stats {
    std::size_t bytes_in_use = 0;    // blocks handed out (rounded to their class)
    std::size_t bytes_reserved = 0;  // chunks mapped: in use, free and headers
    std::size_t chunks = 0;
  };

  // Constant-initialized; the destructor is trivial (chunks stay mapped),
  // so that the process-wide slab outlives every thread that frees into it.
  constexpr RecordSlab() = default;
  RecordSlab(const RecordSlab&) = delete;
  RecordSlab& operator=(const RecordSlab&) = delete;

  // A block of at least `bytes` (1..kLargest), aligned to kGranule.
  // Throws std::bad_alloc when the kernel refuses a chunk.
  void* allocate(std::size_t bytes);
  // `block` from allocate() of this slab (any size: the chunk knows its class).
  void deallocate(void* block) noexcept;
  Stats stats() const noexcept;
  // Unmaps every chunk, for a slab that is not the process's (tests) once
  // every block is freed: a full chunk is not listed and would stay mapped.
  void unmap_all() noexcept;

  // Around fork(): every class's lock, in class order.
  void lock_all() noexcept;
  void unlock_all() noexcept;

 private:
  struct Chunk;
  struct SizeClass {
    mutable SmallMutex mutex;
    Chunk* available = nullptr;  // chunks with a free or never-used block
    std::size_t chunks = 0;
    std::size_t empty_chunks = 0;  // mapped chunks with no block in use
    std::size_t live_blocks = 0;
  };
  static constexpr std::size_t kClasses = kLargest / kGranule;

  Chunk* map_chunk(std::size_t index);
  // Into / out of cls.available (chunks with room), at its head.

  std::array<SizeClass, kClasses> classes_{};
};

// The process-wide slab, or the heap where a sanitizer's allocator must see
// every record (its use-after-free and leak checks work per allocation).
// allocate_record throws std::bad_alloc; sizes above RecordSlab::kLargest go
// to the heap. free_record takes the size given to allocate_record.
void* allocate_record(std::size_t bytes);
void free_record(void* record, std::size_t bytes) noexcept;
RecordSlab::Stats record_stats() noexcept;

// A standard allocator over allocate_record, for std::allocate_shared
// (the record and its control block in one block, as make_shared).
template <class T>
struct RecordAllocator {
  using value_type = T;
  RecordAllocator() = default;
  template <class U>
  constexpr RecordAllocator(const RecordAllocator<U>&) noexcept {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= RecordSlab::kGranule, "records are 16-byte aligned");
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(allocate_record(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { free_record(p, n * sizeof(T)); }

  template <class U>
  friend bool operator==(const RecordAllocator&, const RecordAllocator<U>&) noexcept {
    return true;
  }
};

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_RECORD_SLAB_H_
