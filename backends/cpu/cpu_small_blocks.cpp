// SPDX-License-Identifier: Apache-2.0
#include "cpu_small_blocks.h"

#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "cpu_services.h"

namespace anydev::cpu {
namespace {

constexpr unsigned kClassCount =
    std::countr_zero(kLargestSmallBlock) - std::countr_zero(kSmallestBlock) + 1;
constexpr std::size_t kKindCount = 2;
constexpr std::uint64_t kFullWord = ~std::uint64_t{0};

// One 2 MiB mapping cut into blocks of one size. Owned by State (through
// `segments`); guarded by State::mutex.
struct Segment {
  std::uintptr_t base = 0;
  std::size_t block_bytes = 0;
  std::uint32_t capacity = 0;  // blocks; a multiple of 64
  std::uint32_t used = 0;
  std::uint32_t hint = 0;  // a bitmap word likely to have a free block
  MemoryKind kind = MemoryKind::kPinnedHost;
  unsigned class_index = 0;
  bool locked = false;
  bool listed = false;  // in its class's list of segments with free blocks
  Segment* prev = nullptr;
  Segment* next = nullptr;
  std::unique_ptr<std::uint64_t[]> live;  // bit i: block i is allocated

  std::uint32_t words() const { return capacity / 64; }
};

// Segments of one class and kind that have a free block; empty ones at the
// back, so blocks are taken from the fullest first.
struct SegmentList {
  Segment* head = nullptr;
  Segment* tail = nullptr;
  std::size_t empty = 0;  // listed segments with no live block
};

struct State {
  std::mutex mutex;
  std::unordered_map<std::uintptr_t, Segment*> segments;  // by base address
  SegmentList lists[kKindCount][kClassCount];
  std::size_t live_blocks = 0;
};

// Never destroyed. No C++ static guard (fork-safe): racing first users each
// make a State and the first one published wins.
std::atomic<State*> g_state{nullptr};

State& state() {
  State* instance = g_state.load(std::memory_order_acquire);
  if (instance != nullptr) return *instance;
  auto* fresh = new State;
  if (g_state.compare_exchange_strong(instance, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;
  return *instance;
}

std::size_t kind_index(MemoryKind kind) { return kind == MemoryKind::kPinnedHost ? 0 : 1; }

unsigned class_of_block(std::size_t block) {
  return static_cast<unsigned>(std::countr_zero(block) - std::countr_zero(kSmallestBlock));
}

SegmentList& list_of(State& s, const Segment& segment) {
  return s.lists[kind_index(segment.kind)][segment.class_index];
}

void unlink(SegmentList& list, Segment* segment) {
  (segment->prev != nullptr ? segment->prev->next : list.head) = segment->next;
  (segment->next != nullptr ? segment->next->prev : list.tail) = segment->prev;
  segment->prev = segment->next = nullptr;
  segment->listed = false;
}

void push_front(SegmentList& list, Segment* segment) {
  segment->prev = nullptr;
  segment->next = list.head;
  (list.head != nullptr ? list.head->prev : list.tail) = segment;
  list.head = segment;
  segment->listed = true;
}

void push_back(SegmentList& list, Segment* segment) {
  segment->next = nullptr;
  segment->prev = list.tail;
  (list.tail != nullptr ? list.tail->next : list.head) = segment;
  list.tail = segment;
  segment->listed = true;
}

// Takes a free block from the first listed segment of the class; false when
// the list is empty.
bool take_locked(State& s, MemoryKind kind, unsigned class_index, void** out) {
  SegmentList& list = s.lists[kind_index(kind)][class_index];
  Segment* segment = list.head;
  if (segment == nullptr) return false;
  const std::uint32_t words = segment->words();
  for (std::uint32_t n = 0; n < words; ++n) {
    const std::uint32_t w = (segment->hint + n) % words;
    const std::uint64_t word = segment->live[w];
    if (word == kFullWord) continue;
    const auto bit = static_cast<std::uint32_t>(std::countr_one(word));
    segment->live[w] = word | (std::uint64_t{1} << bit);
    segment->hint = w;
    if (segment->used++ == 0) --list.empty;
    if (segment->used == segment->capacity) unlink(list, segment);
    ++s.live_blocks;
    *out =
        reinterpret_cast<void*>(segment->base + (std::size_t{w} * 64 + bit) * segment->block_bytes);
    return true;
  }
  return false;  // unreachable: a listed segment has a free block
}

// The live block at `address` (its segment and index), or why there is none.
SmallBlockLookup find_locked(State& s, void* address, Segment** segment_out,
                             std::uint32_t* index_out) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  const auto it = s.segments.find(at & ~(std::uintptr_t{kSegmentBytes} - 1));
  if (it == s.segments.end()) return SmallBlockLookup::kNotSmall;
  Segment* segment = it->second;
  const std::uintptr_t offset = at - segment->base;
  if (offset % segment->block_bytes != 0) return SmallBlockLookup::kNotLiveBlock;
  const auto index = static_cast<std::uint32_t>(offset / segment->block_bytes);
  if ((segment->live[index / 64] & (std::uint64_t{1} << (index % 64))) == 0) {
    return SmallBlockLookup::kNotLiveBlock;
  }
  *segment_out = segment;
  *index_out = index;
  return SmallBlockLookup::kFound;
}

const char* operation_name(MemoryKind kind) {
  return kind == MemoryKind::kPinnedHost ? "host_alloc" : "device_alloc";
}

}  // namespace

std::size_t small_block_class(std::size_t bytes) {
  return bytes <= kSmallestBlock ? kSmallestBlock : std::bit_ceil(bytes);
}

anydev_status_t allocate_small_block(MemoryKind kind, std::size_t bytes, void** out) {
  const std::size_t block = small_block_class(bytes);
  const unsigned class_index = class_of_block(block);
  State& s = state();
  {
    std::lock_guard<std::mutex> hold(s.mutex);
    if (take_locked(s, kind, class_index, out)) return ANYDEV_SUCCESS;
  }
  // Built only when an error is reported.
  const auto op = [&] {
    return std::string("cpu ") + operation_name(kind) +
           "(device=0, bytes=" + std::to_string(bytes) + ")";
  };
  PageMapping mapping;
  int error = 0;
  if (!map_pages(kind, kSegmentBytes, kSegmentBytes, &mapping, &error)) {
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     op() + ": mmap of a " + std::to_string(kSegmentBytes) + "-byte segment of " +
                         std::to_string(block) + "-byte blocks failed: " + errno_text(error));
  }
  auto* segment = new (std::nothrow) Segment;
  const std::uint32_t capacity = static_cast<std::uint32_t>(kSegmentBytes / block);
  if (segment != nullptr) {
    segment->live.reset(new (std::nothrow) std::uint64_t[capacity / 64]());
  }
  if (segment == nullptr || segment->live == nullptr) {
    delete segment;
    unmap_pages(mapping.address, kSegmentBytes);
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     op() + ": out of host memory for the segment's bookkeeping");
  }
  segment->base = reinterpret_cast<std::uintptr_t>(mapping.address);
  segment->block_bytes = block;
  segment->capacity = capacity;
  segment->kind = kind;
  segment->class_index = class_index;
  segment->locked = mapping.locked;
  std::lock_guard<std::mutex> hold(s.mutex);
  try {
    s.segments.emplace(segment->base, segment);
  } catch (const std::bad_alloc&) {
    delete segment;
    unmap_pages(mapping.address, kSegmentBytes);
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     op() + ": out of host memory for the segment registry");
  }
  SegmentList& list = list_of(s, *segment);
  push_front(list, segment);
  ++list.empty;
  take_locked(s, kind, class_index, out);  // succeeds: the head has free blocks
  return ANYDEV_SUCCESS;
}

SmallBlockLookup free_small_block(MemoryKind kind, void* address, MemoryKind* actual) noexcept {
  State& s = state();
  Segment* unmap = nullptr;
  {
    std::lock_guard<std::mutex> hold(s.mutex);
    Segment* segment = nullptr;
    std::uint32_t index = 0;
    const SmallBlockLookup found = find_locked(s, address, &segment, &index);
    if (found != SmallBlockLookup::kFound) return found;
    if (segment->kind != kind) {
      *actual = segment->kind;
      return SmallBlockLookup::kWrongKind;
    }
    segment->live[index / 64] &= ~(std::uint64_t{1} << (index % 64));
    segment->hint = index / 64;
    --s.live_blocks;
    SegmentList& list = list_of(s, *segment);
    const bool was_full = !segment->listed;
    if (--segment->used == 0) {
      if (!was_full) unlink(list, segment);
      if (list.empty == 0) {
        push_back(list, segment);  // kept: the class's one empty segment
        ++list.empty;
      } else {
        s.segments.erase(segment->base);
        unmap = segment;
      }
    } else if (was_full) {
      push_front(list, segment);
    }
  }
  if (unmap != nullptr) {
    unmap_pages(reinterpret_cast<void*>(unmap->base), kSegmentBytes);
    delete unmap;
  }
  return SmallBlockLookup::kFound;
}

SmallBlockLookup small_block_locked(MemoryKind kind, void* address, bool* locked,
                                    MemoryKind* actual) noexcept {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mutex);
  Segment* segment = nullptr;
  std::uint32_t index = 0;
  const SmallBlockLookup found = find_locked(s, address, &segment, &index);
  if (found != SmallBlockLookup::kFound) return found;
  if (segment->kind != kind) {
    *actual = segment->kind;
    return SmallBlockLookup::kWrongKind;
  }
  *locked = segment->locked;
  return SmallBlockLookup::kFound;
}

SmallBlockStats small_block_stats() noexcept {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.mutex);
  return SmallBlockStats{.segments = s.segments.size(), .live_blocks = s.live_blocks};
}

void lock_small_blocks_before_fork() noexcept { state().mutex.lock(); }
void unlock_small_blocks_after_fork() noexcept { state().mutex.unlock(); }

}  // namespace anydev::cpu
