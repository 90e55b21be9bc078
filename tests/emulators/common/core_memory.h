// SPDX-License-Identifier: Apache-2.0
// The emulator's memory: device allocations and pinned host allocations.
//
// Device memory lives in ordinary host storage, but the addresses handed out
// (the face's device pointers) lie in a PROT_NONE region reserved per device:
// the host cannot dereference them (a host access faults), and the emulator
// translates them itself. Addresses are never reused, so a stale pointer is always
// recognized as freed. Pinned host memory is real, dereferenceable host memory
// whose address is also its device address (unified addressing).
//
// Blocks are shared: an operation queued on a stream holds its blocks, and
// checks when it runs that none was freed in the meantime. Thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_MEMORY_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_MEMORY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core_status.h"

namespace anydev_emu::core {

struct Pool;

struct Block {
  std::uintptr_t address = 0;  // what the API hands out
  std::size_t size = 0;
  int device = -1;            // -1: pinned host memory
  Pool* pool = nullptr;       // the pool of stream-ordered memory; null for a plain allocation
  std::byte* host = nullptr;  // where the bytes are
  // A block over a shared file (allocate_device_mapped): host is its
  // MAP_SHARED mapping of `mapped` bytes, and the block owns `fd`.
  int fd = -1;
  std::size_t mapped = 0;
  std::atomic<bool> freed{false};
  std::atomic<bool> free_queued{false};  // a stream-ordered free accepted, not yet run
  // Mapped memory (core_share.h): `host` belongs to `keeper` (null: to the
  // application, for registered host memory), never freed by the block.
  bool external = false;
  std::shared_ptr<void> keeper;
  // A VMM mapping before its access is set: every operation on it fails.
  std::atomic<bool> no_access{false};
  ~Block();
};
using BlockRef = std::shared_ptr<Block>;

// Where an operation reads or writes: a block (device or pinned) plus an
// offset, or plain pageable host memory (block == nullptr).
struct Span {
  BlockRef block;
  std::size_t offset = 0;
  std::byte* pageable = nullptr;
  // The bytes, or nullptr when the block was freed after the operation was
  // queued (the caller reports Status::illegal_address).
  std::byte* bytes() const;
  std::string describe() const;
};

enum class Access {
  kAny,             // device, pinned or pageable (a copy of unified addresses)
  kDeviceOrPinned,  // memory the device can address (memsets, device side of a copy)
  kHost,            // host memory, pinned or pageable (host side of HtoD/DtoH)
};

// Reserves the address regions for `devices` devices (called by initialize()).
Status reserve_device_regions(int devices);

// Finds [address, address + bytes) for `access`: invalid_value
// (reported with `api`) when it is null, unknown, freed, out of bounds or of
// the wrong kind.
Status resolve(std::uintptr_t address, std::size_t bytes, Access access, const char* api,
               Span* out);

// Device memory of `device`, from `pool` (null for a plain allocation). Zero
// bytes are invalid_value. More bytes than the device has fail with
// out_of_memory, or with invalid_value under <prefix>HUGE_IS_INVALID=1 (as a
// real driver may answer an impossible size); so do pinned allocations larger
// than all pinned memory.
Status allocate_device(int device, std::size_t bytes, std::uintptr_t* out, const char* api,
                       Pool* pool = nullptr);
// Device memory of `device` whose bytes are the file `fd` (a memfd, of at
// least `bytes` bytes) mapped MAP_SHARED, so that another process mapping
// the same file sees them: for a face's interprocess memory. Takes `fd`
// (closed with the block, or here on failure).
Status allocate_device_mapped(int device, std::size_t bytes, int fd, std::uintptr_t* out,
                              const char* api);
// Removes a live device allocation starting exactly at `address`.
Status take_device_block(std::uintptr_t address, const char* api, BlockRef* out);
// Finds a live device allocation starting exactly at `address`.
Status find_device_block(std::uintptr_t address, const char* api, BlockRef* out);
void release_device_block(const BlockRef& block);  // marks it freed, returns its bytes
// Frees the live device allocation at `address` now.
Status free_device(std::uintptr_t address, const char* api);

Status allocate_pinned(std::size_t bytes, void** out, const char* api);
Status free_pinned(void* address, const char* api);

std::size_t device_bytes_in_use(int device);
// The configured memory of `device`, and what of it is not allocated.
void memory_info(int device, std::size_t* free_bytes, std::size_t* total_bytes);

// Mapped memory (core_share.h). Reserves `bytes` of `device`'s address
// region (never reused) at a multiple of `alignment`.
Status reserve_device_range(int device, std::size_t bytes, std::size_t alignment,
                            std::uintptr_t* out);
// Adds an external block (`external` set by the caller; device >= 0: device
// memory of that device; -1: registered host memory); invalid_value when it
// overlaps a live block.
Status add_external_block(const BlockRef& block, const char* api);
// Removes the external block starting at `address` of `size` bytes.
Status remove_external_block(std::uintptr_t address, std::size_t size, bool device, const char* api,
                             BlockRef* out = nullptr);

// The live allocation (device or pinned) that contains `address`, or null.
BlockRef find_containing(std::uintptr_t address);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_MEMORY_H_
