// SPDX-License-Identifier: Apache-2.0
// BlockCarver: the small device blocks of a caching pool, carved out of
// larger driver allocations (segments), so that a small buffer that misses
// the pool's cache costs no driver call and no driver record.
//
// Which pools carve. A device pool that caches, unless ANYDEV_POOL_CARVE is 0
// (pool_registry.h), on a backend of one of two kinds (CarveMode):
//   - device memory handles are addresses (ANYDEV_BK_FLAG_DEVICE_ADDRESS_HANDLES):
//     a block's handle and address are its segment's plus the block's
//     offset, so copies, fills, graphs and DLPack see an ordinary pointer;
//   - device memory handles are objects (ANYDEV_BK_FLAG_DEVICE_OBJECT_OFFSETS,
//     OpenCL's cl_mem): a block's handle is its segment's object, and its
//     address a token: the base of an address range of kSegmentBytes that
//     the carver reserves per segment (no memory, never accessible), plus
//     the block's offset. Tokens are unique in the process and their low
//     bits are the offset (Allocation::object_offset); the pool identifies
//     such a block by its token (return_key).
// Blocks of size classes up to kLargestBlock come from kSegmentBytes segments
// of one class each; larger classes and every other pool go to the backend as
// before. Memory shared between processes never
// comes from a pool (anydev_buffer_create_shareable), so no carved block is
// ever exported.
//
// Lifetime. The pool hands a block back here only once every use of it has
// completed (its release event, caching_pool.h); a segment goes back to the
// driver when its last block comes back, so a segment is freed only after the
// work on every block in it. A segment allocated in order on one stream
// (cuMemAllocFromPoolAsync) is not yet usable by another: it keeps an event
// recorded after its allocation, and a block handed to another stream makes
// that stream wait for it until it is seen complete.
//
// Ownership: the carver owns its segments (freed through the backend table)
// and their events (from the device's event pool); blocks handed out are the
// pool's until taken back. Thread-safe: one mutex, held for bookkeeping and
// at most one event query per request; driver allocations, frees and stream
// waits are made outside it.
#ifndef ANYDEV_SRC_MEMORY_POOL_BLOCK_CARVER_H_
#define ANYDEV_SRC_MEMORY_POOL_BLOCK_CARVER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>

#include "anydev/backend.h"
#include "memory/allocation.h"
#include "memory/stream_ordered_release.h"
#include "support/core_mutex.h"

namespace anydev::core {

struct Backend;
struct Stream;
class EventPool;

// How a pool's blocks are carved (see Which pools carve).
enum class CarveMode : std::uint8_t { kNone, kAddresses, kObjectOffsets };

// What a carver holds (statistics, tests).
struct CarverStats {
  std::size_t segments = 0;        // driver allocations held
  std::size_t bytes_reserved = 0;  // their bytes
  std::size_t blocks_out = 0;      // blocks handed out and not yet taken back
};

class BlockCarver final : public MemoryReturn {
 public:
  // A segment: one driver allocation. 2 MiB: a large page on every GPU, and
  // 4096 blocks of the smallest class (block indices fit 16 bits).
  static constexpr std::size_t kSegmentBytes = kCarveSegmentBytes;
  // The largest block carved: larger requests are few per MiB, so a driver
  // allocation each costs little beside the bytes they move.
  static constexpr std::size_t kLargestBlock = std::size_t{16} << 10;

  // `events`: the device's event pool (segments' readiness events); `mode`
  // is kAddresses or kObjectOffsets.
  BlockCarver(const Backend* backend, int device, EventPool& events, CarveMode mode);
  ~BlockCarver();  // frees every segment (only tests destroy pools)
  BlockCarver(const BlockCarver&) = delete;
  BlockCarver& operator=(const BlockCarver&) = delete;

  // Whether blocks of `block_bytes` (a pool size class) are carved.
  static bool carves(std::size_t block_bytes) noexcept { return block_bytes <= kLargestBlock; }

  // A block of `block_bytes` (carves() holds) for use by `stream`: from a
  // segment of that size with room, else from a new one (device_alloc of
  // kSegmentBytes on `stream`). On failure the backend's status with its
  // last error set; nothing changed.
  anydev_status_t allocate(const std::shared_ptr<Stream>& stream, std::size_t block_bytes,
                           void** handle, void** address);

  // What identifies a block of this carver's (to take_back and to the
  // reclaimer): its handle, or its token where handles are objects. For a
  // block the carver did not make, handle == address where handles are
  // objects (ANYDEV_BK_FLAG_DEVICE_OBJECT_OFFSETS), so the key is what
  // memory_free takes.
  CarveMode mode() const noexcept { return mode_; }
  void* return_key(void* handle, void* address) const noexcept {
    return mode_ == CarveMode::kObjectOffsets ? address : handle;
  }

  // Takes back a block whose every use has completed: true when `key`
  // (return_key) is one of this carver's blocks. Frees the segment when it
  // was the last block out of it. Never throws.
  bool take_back(void* key) noexcept override;
  // Whether `key` (return_key) is a block of this carver's handed out.
  bool holds(void* key) noexcept;

  CarverStats stats() const;

 private:
  struct Segment;
  // The segments of one block size that have room, most recently made first.
  struct SizeClass {
    std::size_t bytes = 0;
    Segment* with_room = nullptr;
  };

  SizeClass& class_locked(std::size_t block_bytes);
  // The event `stream` must wait for before it uses `segment`'s memory (see
  // Lifetime), or null when none. Under mutex_.
  anydev_bk_event_t wait_needed_locked(Segment& segment, const std::shared_ptr<Stream>& stream);
  using SegmentMap = std::map<std::uintptr_t, std::unique_ptr<Segment>>;
  // A new segment for blocks of `block_bytes`, allocated on `stream`, in a
  // map node of its own: inserted under the lock without allocating, so
  // no exception there can lose the driver's memory.
  anydev_status_t new_segment(const std::shared_ptr<Stream>& stream, std::size_t block_bytes,
                              SegmentMap::node_type* out);
  void free_segment(std::unique_ptr<Segment> segment) noexcept;
  // The segment holding the block `key` names, or by_base_.end(). Under mutex_.
  SegmentMap::iterator find_locked(void* key);

  const Backend* const backend_;
  const anydev_backend_table_t* const table_;
  const int device_;
  EventPool& events_;
  const CarveMode mode_;

  mutable CoreMutex mutex_;
  std::map<std::size_t, SizeClass> classes_;  // by block size; never erased (segments point here)
  SegmentMap by_base_;                        // every segment, by its first block's key
  std::size_t blocks_out_ = 0;
};

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_POOL_BLOCK_CARVER_H_
