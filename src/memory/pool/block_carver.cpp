// SPDX-License-Identifier: Apache-2.0
#include "memory/pool/block_carver.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "memory/event_pool.h"
#include "memory/stream.h"
#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/linked_list.h"
#include "support/release_log.h"
#include "support/status.h"

namespace anydev::core {

// One driver allocation cut into blocks of one size. Blocks never handed out
// yet are those from `fresh` on; the others that came back are on the free
// stack. Guarded by the carver's mutex.
struct BlockCarver::Segment {
  void* handle = nullptr;
  void* address = nullptr;  // host-visible address of the segment (null: none)
  void* tokens = nullptr;   // kObjectOffsets: the reserved range of its blocks' tokens
  SizeClass* size_class = nullptr;
  std::uint32_t capacity = 0;  // blocks in the segment
  std::uint32_t out = 0;       // blocks handed out
  std::uint32_t fresh = 0;     // blocks [fresh, capacity) never handed out
  std::uint32_t free_top = 0;  // entries on free_stack
  // Room for `fresh` entries (grown as blocks are first handed out, so a
  // segment that is mostly unused costs little host memory): a block taken
  // back never needs an allocation.
  std::uint32_t stack_room = 0;
  std::unique_ptr<std::uint16_t[]> free_stack;
  // Recorded on `made_on` after the allocation; null once seen complete.
  anydev_bk_event_t ready = nullptr;
  std::weak_ptr<Stream> made_on;  // identity only: never locked
  std::uint32_t waiters = 0;      // requests waiting on `ready` outside the lock
  Segment* prev = nullptr;        // in its class's with_room list
  Segment* next = nullptr;
  bool listed = false;
};

namespace {

// kObjectOffsets: an address range of kCarveSegmentBytes aligned to its size,
// reserved without memory and never made accessible, so that no pointer in
// the process and no other segment's token falls inside it. Null when the
// address space is exhausted.
void* reserve_tokens() noexcept {
  constexpr std::size_t kBytes = kCarveSegmentBytes;
  void* const mapped =
      mmap(nullptr, 2 * kBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t aligned = (start + kBytes - 1) & ~(std::uintptr_t{kBytes} - 1);
  // Only the aligned part is kept: whatever lies before and after goes back.
  if (aligned > start) munmap(mapped, aligned - start);
  if (const std::uintptr_t end = start + 2 * kBytes; end > aligned + kBytes) {
    munmap(reinterpret_cast<void*>(aligned + kBytes), end - aligned - kBytes);
  }
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

BlockCarver::BlockCarver(const Backend* backend, int device, EventPool& events, CarveMode mode)
    : backend_(backend), table_(backend->table), device_(device), events_(events), mode_(mode) {}

BlockCarver::~BlockCarver() {
  SegmentMap segments;
  {
    std::lock_guard lock(mutex_);
    segments.swap(by_base_);
  }
  for (auto& [base, segment] : segments) free_segment(std::move(segment));
}

BlockCarver::SizeClass& BlockCarver::class_locked(std::size_t block_bytes) {
  auto [entry, added] = classes_.try_emplace(block_bytes);
  if (added) entry->second.bytes = block_bytes;
  return entry->second;
}

anydev_status_t BlockCarver::new_segment(const std::shared_ptr<Stream>& stream,
                                         std::size_t block_bytes, SegmentMap::node_type* out) {
  auto segment = std::make_unique<Segment>();
  segment->capacity = static_cast<std::uint32_t>(kSegmentBytes / block_bytes);
  if (const anydev_status_t s = bk(table_).device_alloc(device_, kSegmentBytes, stream->native,
                                                        &segment->handle, &segment->address);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (mode_ == CarveMode::kObjectOffsets) {
    segment->tokens = reserve_tokens();
    if (segment->tokens == nullptr) {
      const int error = errno;
      free_segment(std::move(segment));
      return set_error(
          ANYDEV_ERROR_OUT_OF_MEMORY,
          cat("reserving ", kSegmentBytes, " bytes of address space for the tokens of ",
              block_bytes, "-byte blocks: ", std::strerror(error)));
    }
  }
  // Ordered on `stream`: another stream waits for this event (Lifetime).
  anydev_status_t s = events_.take(&segment->ready);
  if (s == ANYDEV_SUCCESS) {
    s = bk(table_).event_record(segment->ready, stream->native);
    if (s != ANYDEV_SUCCESS) {
      events_.give_back(segment->ready);
      segment->ready = nullptr;
    }
  }
  // Without an event: wait here until the allocation is done, once.
  if (s != ANYDEV_SUCCESS) s = bk(table_).stream_synchronize(stream->native);
  if (s != ANYDEV_SUCCESS) {
    std::string why;
    try {
      why = last_error_message();
    } catch (...) {
    }
    free_segment(std::move(segment));
    return set_error(s, cat("making a ", kSegmentBytes, "-byte segment for ", block_bytes,
                            "-byte blocks ready: ", why));
  }
  segment->made_on = stream;
  const auto base = reinterpret_cast<std::uintptr_t>(
      mode_ == CarveMode::kObjectOffsets ? segment->tokens : segment->handle);
  SegmentMap node;
  try {
    node.emplace(base, std::move(segment));  // leaves `segment` alone when it throws
  } catch (...) {
    free_segment(std::move(segment));
    throw;
  }
  *out = node.extract(node.begin());
  return ANYDEV_SUCCESS;
}

void BlockCarver::free_segment(std::unique_ptr<Segment> segment) noexcept {
  if (segment->ready != nullptr) {
    // Complete or not, nothing waits on it any more (Lifetime).
    events_.give_back(segment->ready);
    segment->ready = nullptr;
  }
  if (bk(table_).memory_free(device_, ANYDEV_BK_MEMORY_DEVICE, segment->handle) != ANYDEV_SUCCESS) {
    release_log(ANYDEV_LOG_ERROR, backend_->name, ": pool: memory_free of a ", kSegmentBytes,
                "-byte segment of carved blocks failed: ", last_error_message());
  }
  if (segment->tokens != nullptr) munmap(segment->tokens, kSegmentBytes);
}

anydev_bk_event_t BlockCarver::wait_needed_locked(Segment& segment,
                                                  const std::shared_ptr<Stream>& stream) {
  if (segment.ready == nullptr || same_stream(segment.made_on, stream)) return nullptr;
  int complete = 0;
  if (bk(table_).event_query(segment.ready, &complete) == ANYDEV_SUCCESS && complete != 0) {
    // Seen complete: nobody waits on it again. Given back once no other
    // request is about to wait on it outside the lock.
    if (segment.waiters == 0) {
      events_.give_back(segment.ready);
      segment.ready = nullptr;
    }
    return nullptr;
  }
  return segment.ready;
}

anydev_status_t BlockCarver::allocate(const std::shared_ptr<Stream>& stream,
                                      std::size_t block_bytes, void** handle, void** address) {
  SegmentMap::node_type made;
  for (;;) {
    std::unique_lock lock(mutex_);
    // Made on the first pass, before any segment: never allocates after it.
    SizeClass& size_class = class_locked(block_bytes);
    if (!made.empty()) {
      Segment* segment = made.mapped().get();
      segment->size_class = &size_class;
      by_base_.insert(std::move(made));  // a node: no allocation
      link_first(size_class.with_room, segment);
    }
    if (Segment* segment = size_class.with_room) {
      if (segment->free_top == 0 && segment->fresh == segment->stack_room) {
        // The stack is empty: a larger one replaces it, nothing to copy.
        const std::uint32_t room =
            std::min(segment->capacity, std::max<std::uint32_t>(64, 2 * segment->stack_room));
        std::unique_ptr<std::uint16_t[]> stack(new (std::nothrow) std::uint16_t[room]);
        if (stack == nullptr) {
          return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                           cat("no host memory for the bookkeeping of ", room, " blocks of ",
                               block_bytes, " bytes"));
        }
        segment->free_stack = std::move(stack);
        segment->stack_room = room;
      }
      const std::uint32_t index =
          segment->free_top > 0 ? segment->free_stack[--segment->free_top] : segment->fresh++;
      if (++segment->out == segment->capacity) unlink(size_class.with_room, segment);
      ++blocks_out_;
      const std::size_t offset = std::size_t{index} * block_bytes;
      if (mode_ == CarveMode::kObjectOffsets) {
        *handle = segment->handle;
        *address = static_cast<char*>(segment->tokens) + offset;
      } else {
        *handle = static_cast<char*>(segment->handle) + offset;
        *address =
            segment->address != nullptr ? static_cast<char*>(segment->address) + offset : nullptr;
      }
      const anydev_bk_event_t wait = wait_needed_locked(*segment, stream);
      if (wait == nullptr) return ANYDEV_SUCCESS;
      // Waited for outside the lock (a stream call may block, e.g. behind a
      // transfer on that stream). The block just taken keeps the segment, and
      // `waiters` its event, alive meanwhile.
      ++segment->waiters;
      lock.unlock();
      const anydev_status_t s = bk(table_).stream_wait_event(stream->native, wait);
      lock.lock();
      --segment->waiters;
      lock.unlock();
      if (s != ANYDEV_SUCCESS) {
        const std::string why = last_error_message();
        take_back(return_key(*handle, *address));
        return set_error(s, cat("making a stream wait for the allocation of a ", kSegmentBytes,
                                "-byte segment made on another stream: ", why));
      }
      return ANYDEV_SUCCESS;
    }
    lock.unlock();
    // No room: a new segment, made outside the lock (a driver call).
    if (const anydev_status_t s = new_segment(stream, block_bytes, &made); s != ANYDEV_SUCCESS) {
      return s;
    }
  }
}

BlockCarver::SegmentMap::iterator BlockCarver::find_locked(void* key) {
  const auto at = reinterpret_cast<std::uintptr_t>(key);
  auto found = by_base_.upper_bound(at);
  if (found == by_base_.begin()) return by_base_.end();
  --found;
  const Segment& segment = *found->second;
  const std::size_t offset = at - found->first;
  const std::size_t block_bytes = segment.size_class->bytes;
  if (offset >= std::size_t{segment.capacity} * block_bytes || offset % block_bytes != 0) {
    return by_base_.end();
  }
  return found;
}

bool BlockCarver::holds(void* key) noexcept {
  std::lock_guard lock(mutex_);
  return find_locked(key) != by_base_.end();
}

bool BlockCarver::take_back(void* key) noexcept {
  std::unique_ptr<Segment> empty;
  {
    std::lock_guard lock(mutex_);
    const auto found = find_locked(key);
    if (found == by_base_.end()) return false;
    Segment& segment = *found->second;
    const std::size_t block_bytes = segment.size_class->bytes;
    const std::size_t offset = reinterpret_cast<std::uintptr_t>(key) - found->first;
    segment.free_stack[segment.free_top++] = static_cast<std::uint16_t>(offset / block_bytes);
    --blocks_out_;
    if (segment.out-- == segment.capacity) link_first(segment.size_class->with_room, &segment);
    if (segment.out == 0) {
      unlink(segment.size_class->with_room, &segment);
      empty = std::move(found->second);
      by_base_.erase(found);
    }
  }
  if (empty != nullptr) free_segment(std::move(empty));
  return true;
}

CarverStats BlockCarver::stats() const {
  std::lock_guard lock(mutex_);
  CarverStats stats;
  stats.segments = by_base_.size();
  stats.bytes_reserved = by_base_.size() * kSegmentBytes;
  stats.blocks_out = blocks_out_;
  return stats;
}

}  // namespace anydev::core
