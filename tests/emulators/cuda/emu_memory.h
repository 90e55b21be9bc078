// SPDX-License-Identifier: Apache-2.0
// The emulator's memory: device allocations and pinned host allocations.
//
// Device memory lives in ordinary host storage, but the addresses handed out
// (CUdeviceptr values) lie in a PROT_NONE region reserved per device: the host
// cannot dereference them (a host access faults), and the emulator translates
// them itself. Addresses are never reused, so a stale pointer is always
// recognized as freed. Pinned host memory is real, dereferenceable host memory
// whose address is also its device address (unified addressing).
//
// Blocks are shared: an operation queued on a stream holds its blocks, and
// checks when it runs that none was freed in the meantime. Thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_MEMORY_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_MEMORY_H_

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace anydev_emu {

struct Pool;

struct Block {
  std::uintptr_t address = 0;  // what the API hands out
  std::size_t size = 0;
  int device = -1;            // -1: pinned host memory
  Pool* pool = nullptr;       // the pool of stream-ordered memory; null for cuMemAlloc
  std::byte* host = nullptr;  // where the bytes are
  std::atomic<bool> freed{false};
  std::atomic<bool> free_queued{false};  // cuMemFreeAsync accepted, not yet run
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
  // queued (the caller reports CUDA_ERROR_ILLEGAL_ADDRESS).
  std::byte* bytes() const;
  std::string describe() const;
};

enum class Access {
  kAny,             // device, pinned or pageable (cuMemcpyAsync)
  kDeviceOrPinned,  // memory the device can address (memsets, device side of a copy)
  kHost,            // host memory, pinned or pageable (host side of HtoD/DtoH)
};

// Reserves the address regions for `devices` devices (called by cuInit).
CUresult reserve_device_regions(int devices);

// Finds [address, address + bytes) for `access`: CUDA_ERROR_INVALID_VALUE
// (reported with `api`) when it is null, unknown, freed, out of bounds or of
// the wrong kind.
CUresult resolve(std::uintptr_t address, std::size_t bytes, Access access, const char* api,
                 Span* out);

// Device memory of `device`, from `pool` (null for cuMemAlloc). More bytes
// than the device has fail with CUDA_ERROR_OUT_OF_MEMORY, or with
// CUDA_ERROR_INVALID_VALUE under ANYDEV_CUDA_EMULATOR_HUGE_IS_INVALID=1 (as a
// real driver may answer an impossible size); so do pinned allocations larger
// than all pinned memory.
CUresult allocate_device(int device, std::size_t bytes, CUdeviceptr* out, const char* api,
                         Pool* pool = nullptr);
// Removes a live device allocation starting exactly at `address`.
CUresult take_device_block(std::uintptr_t address, const char* api, BlockRef* out);
// Finds a live device allocation starting exactly at `address`.
CUresult find_device_block(std::uintptr_t address, const char* api, BlockRef* out);
void release_device_block(const BlockRef& block);  // marks it freed, returns its bytes

CUresult allocate_pinned(std::size_t bytes, void** out, const char* api);
CUresult free_pinned(void* address, const char* api);

std::size_t device_bytes_in_use(int device);

// The live allocation (device or pinned) that contains `address`, or null.
BlockRef find_containing(std::uintptr_t address);

}  // namespace anydev_emu

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_MEMORY_H_
