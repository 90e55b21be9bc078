// SPDX-License-Identifier: Apache-2.0
#include "memory/record_slab.h"

#include <pthread.h>
#include <sys/mman.h>

#include <cstdint>
#include <mutex>

#include "support/linked_list.h"

namespace anydev::core {

// The header at the start of every chunk; its blocks follow. A block's
// chunk is its address rounded down to kChunkBytes (chunks are aligned).
// Guarded by the owner class's mutex.
struct RecordSlab::Chunk {
  SizeClass* owner;
  std::size_t block_bytes;
  void* free_list;          // freed blocks, each holding the next one's address
  std::size_t next_unused;  // offset of the first block never handed out
  std::size_t live;         // blocks handed out
  Chunk* prev;              // in owner->available while listed
  Chunk* next;
  bool listed;
};

namespace {

// A cache line, a multiple of kGranule: the first block stays aligned.
constexpr std::size_t kHeaderBytes = 64;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kHeapRecords = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kHeapRecords = true;
#else
constexpr bool kHeapRecords = false;
#endif
#else
constexpr bool kHeapRecords = false;
#endif

}  // namespace

RecordSlab::Chunk* RecordSlab::map_chunk(std::size_t index) {
  static_assert(sizeof(Chunk) <= kHeaderBytes && kHeaderBytes % kGranule == 0);
  SizeClass& cls = classes_[index];
  // Twice the size, then the unaligned ends are given back: the kernel
  // aligns mappings to pages only.
  void* mapped = mmap(nullptr, 2 * kChunkBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t aligned = (start + kChunkBytes - 1) & ~(kChunkBytes - 1);
  if (aligned > start) munmap(mapped, aligned - start);
  const std::uintptr_t end = start + 2 * kChunkBytes;
  if (end > aligned + kChunkBytes) {
    munmap(reinterpret_cast<void*>(aligned + kChunkBytes), end - (aligned + kChunkBytes));
  }
  void* const base = reinterpret_cast<void*>(aligned);
  // A class's first chunk stays on small pages (even where huge pages are
  // the system's default), so that a program with a few buffers keeps a few
  // pages of records; later chunks fill fast. Advice only: failure is fine.
  madvise(base, kChunkBytes, cls.chunks > 0 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  auto* chunk = new (base)
      Chunk{&cls, (index + 1) * kGranule, nullptr, kHeaderBytes, 0, nullptr, nullptr, false};
  link_first(cls.available, chunk);
  ++cls.chunks;
  ++cls.empty_chunks;
  return chunk;
}

void* RecordSlab::allocate(std::size_t bytes) {
  if (bytes > kLargest) throw std::bad_alloc();
  const std::size_t index = bytes == 0 ? 0 : (bytes - 1) / kGranule;
  SizeClass& cls = classes_[index];
  std::lock_guard lock(cls.mutex);
  Chunk* chunk = cls.available;
  if (chunk == nullptr) chunk = map_chunk(index);
  void* block;
  if (chunk->free_list != nullptr) {
    block = chunk->free_list;
    chunk->free_list = *static_cast<void**>(block);
  } else {
    block = reinterpret_cast<char*>(chunk) + chunk->next_unused;
    chunk->next_unused += chunk->block_bytes;
  }
  if (chunk->live++ == 0) --cls.empty_chunks;
  ++cls.live_blocks;
  if (chunk->free_list == nullptr && chunk->next_unused + chunk->block_bytes > kChunkBytes) {
    unlink(cls.available, chunk);  // full: found again through its blocks when one is freed
  }
  return block;
}

void RecordSlab::deallocate(void* block) noexcept {
  auto* chunk =
      reinterpret_cast<Chunk*>(reinterpret_cast<std::uintptr_t>(block) & ~(kChunkBytes - 1));
  SizeClass& cls = *chunk->owner;
  Chunk* unmap = nullptr;
  {
    std::lock_guard lock(cls.mutex);
    *static_cast<void**>(block) = chunk->free_list;
    chunk->free_list = block;
    if (!chunk->listed) link_first(cls.available, chunk);
    --cls.live_blocks;
    if (--chunk->live == 0) {
      if (cls.empty_chunks > 0) {  // one empty chunk is kept per class
        unlink(cls.available, chunk);
        --cls.chunks;
        unmap = chunk;
      } else {
        ++cls.empty_chunks;
      }
    }
  }
  if (unmap != nullptr) munmap(unmap, kChunkBytes);
}

RecordSlab::Stats RecordSlab::stats() const noexcept {
  Stats s;
  for (std::size_t i = 0; i < kClasses; ++i) {
    const SizeClass& cls = classes_[i];
    std::lock_guard lock(cls.mutex);
    s.bytes_in_use += cls.live_blocks * (i + 1) * kGranule;
    s.bytes_reserved += cls.chunks * kChunkBytes;
    s.chunks += cls.chunks;
  }
  return s;
}

void RecordSlab::unmap_all() noexcept {
  for (SizeClass& cls : classes_) {
    std::lock_guard lock(cls.mutex);
    while (Chunk* chunk = cls.available) {
      unlink(cls.available, chunk);
      munmap(chunk, kChunkBytes);
    }
    cls.chunks = cls.empty_chunks = cls.live_blocks = 0;
  }
}

void RecordSlab::lock_all() noexcept {
  for (SizeClass& cls : classes_) cls.mutex.lock();
}

void RecordSlab::unlock_all() noexcept {
  for (SizeClass& cls : classes_) cls.mutex.unlock();
}

namespace {

// Constant-initialized and never destroyed (trivial destructor): records in
// it may be freed by threads still running at exit.
constinit RecordSlab g_slab;

// Registered when libanydev.so is loaded: a fork() while another thread
// holds a class's lock would otherwise leave it locked in the child.
[[maybe_unused]] const bool g_fork_handlers = [] {
  if constexpr (!kHeapRecords) {
    pthread_atfork([] { g_slab.lock_all(); }, [] { g_slab.unlock_all(); },
                   [] { g_slab.unlock_all(); });
  }
  return true;
}();

}  // namespace

void* allocate_record(std::size_t bytes) {
  if (kHeapRecords || bytes > RecordSlab::kLargest) return ::operator new(bytes);
  return g_slab.allocate(bytes);
}

void free_record(void* record, std::size_t bytes) noexcept {
  if (record == nullptr) return;
  if (kHeapRecords || bytes > RecordSlab::kLargest) {
    ::operator delete(record);
    return;
  }
  g_slab.deallocate(record);
}

RecordSlab::Stats record_stats() noexcept { return g_slab.stats(); }

}  // namespace anydev::core
