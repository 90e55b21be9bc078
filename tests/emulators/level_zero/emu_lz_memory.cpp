// SPDX-License-Identifier: Apache-2.0
// Device and host allocations (emu_lz.h: Block).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <sstream>
#include <vector>

#include "emu_lz.h"

namespace anydev_lz_emu {
namespace {

struct Memory {
  std::mutex mutex;
  std::map<std::uintptr_t, BlockRef> blocks;  // live blocks and freed device blocks
  std::vector<std::size_t> device_used;
};

Memory& memory() {
  static auto* m = new Memory;  // never destroyed (emu_lz.h)
  return *m;
}

std::string hex(std::uintptr_t p) {
  std::ostringstream out;
  out << "0x" << std::hex << p;
  return out.str();
}

// The block whose [address, address + size) holds `p` (freed or not).
BlockRef containing_locked(Memory& m, std::uintptr_t p) {
  auto it = m.blocks.upper_bound(p);
  if (it == m.blocks.begin()) return nullptr;
  --it;
  const BlockRef& b = it->second;
  return p < b->address + b->size ? b : nullptr;
}

}  // namespace

Block::~Block() {
  if (device >= 0) {
    delete[] bytes;
  } else {
    std::free(bytes);
  }
}

std::byte* Span::bytes() const {
  if (block == nullptr) return pageable;
  if (block->freed.load()) return nullptr;
  return block->bytes + offset;
}

ze_result_t allocate(Context* context, int device, std::size_t bytes, std::size_t alignment,
                     void** out, const char* api) {
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
    return misuse(
        ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT,
        std::string(api) + ": alignment " + std::to_string(alignment) + " is not a power of two");
  }
  if (bytes == 0) {
    return misuse(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, std::string(api) + ": size 0");
  }
  const Config& c = config();
  if (bytes > c.memory_bytes) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;  // past maxMemAllocSize
  Memory& m = memory();
  auto block = std::make_shared<Block>();
  block->size = bytes;
  block->context = context;
  block->device = device;
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (device >= 0) {
    // Page alignment covers any alignment up to a page; more is refused.
    if (alignment > page) {
      return misuse(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT,
                    std::string(api) + ": alignment above a page is not emulated");
    }
    {
      const std::lock_guard<std::mutex> lock(m.mutex);
      if (m.device_used.size() < static_cast<std::size_t>(device_count())) {
        m.device_used.resize(static_cast<std::size_t>(device_count()), 0);
      }
      std::size_t& used = m.device_used[static_cast<std::size_t>(device)];
      if (bytes > c.memory_bytes - used) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
      used += bytes;
    }
    block->bytes = new (std::nothrow) std::byte[bytes];
    const std::size_t span = (bytes + page - 1) / page * page;
    void* reserved =
        block->bytes == nullptr
            ? MAP_FAILED
            : mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED) {
      const std::lock_guard<std::mutex> lock(m.mutex);
      m.device_used[static_cast<std::size_t>(device)] -= bytes;
      return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    block->address = reinterpret_cast<std::uintptr_t>(reserved);
  } else {
    const std::size_t align = alignment < 64 ? 64 : alignment;
    const std::size_t rounded = (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded);
    if (p == nullptr) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    block->bytes = static_cast<std::byte*>(p);
    block->address = reinterpret_cast<std::uintptr_t>(p);
  }
  const std::lock_guard<std::mutex> lock(m.mutex);
  m.blocks[block->address] = block;
  *out = reinterpret_cast<void*>(block->address);
  return ZE_RESULT_SUCCESS;
}

ze_result_t free_block(Context* context, void* address, const char* api) {
  Memory& m = memory();
  BlockRef block;
  {
    const std::lock_guard<std::mutex> lock(m.mutex);
    const auto it = m.blocks.find(reinterpret_cast<std::uintptr_t>(address));
    if (it == m.blocks.end() || it->second->freed.load()) {
      return misuse(
          ZE_RESULT_ERROR_INVALID_ARGUMENT,
          std::string(api) + ": " + hex(reinterpret_cast<std::uintptr_t>(address)) +
              (it == m.blocks.end() ? " is not the start of an allocation" : " was already freed"));
    }
    block = it->second;
    if (block->context != context) {
      return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                    std::string(api) + ": " + hex(block->address) + " belongs to another context");
    }
    const int users = block->in_use.load();
    if (users > 0) {
      // The spec leaves this undefined; a real device would still write it.
      return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                    std::string(api) + ": " + hex(block->address) + " (" +
                        std::to_string(block->size) + " bytes) is still used by " +
                        std::to_string(users) + " queued command(s)");
    }
    block->freed = true;
    if (block->device >= 0) {
      m.device_used[static_cast<std::size_t>(block->device)] -= block->size;
      // The PROT_NONE reservation stays, so the address is never reused.
    } else {
      m.blocks.erase(it);
    }
  }
  return ZE_RESULT_SUCCESS;
}

BlockRef find_containing(std::uintptr_t address) {
  Memory& m = memory();
  const std::lock_guard<std::mutex> lock(m.mutex);
  BlockRef b = containing_locked(m, address);
  return b != nullptr && !b->freed.load() ? b : nullptr;
}

ze_result_t resolve(const CommandList& list, const void* address, std::size_t bytes,
                    bool pageable_ok, const char* api, Span* out) {
  const auto p = reinterpret_cast<std::uintptr_t>(address);
  if (address == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, std::string(api) + ": null pointer");
  }
  BlockRef b;
  {
    Memory& m = memory();
    const std::lock_guard<std::mutex> lock(m.mutex);
    b = containing_locked(m, p);
  }
  if (b == nullptr) {
    if (!pageable_ok) {
      return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                    std::string(api) + ": " + hex(p) +
                        " is not memory of this driver (a fill needs zeMemAlloc* memory)");
    }
    out->pageable = static_cast<std::byte*>(const_cast<void*>(address));
    return ZE_RESULT_SUCCESS;
  }
  if (b->freed.load()) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  std::string(api) + ": " + hex(p) + " lies in freed device memory " +
                      hex(b->address) + " (" + std::to_string(b->size) + " bytes)");
  }
  if (b->context != list.context) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  std::string(api) + ": " + hex(p) + " belongs to another context");
  }
  if (bytes > b->address + b->size - p) {
    return misuse(ZE_RESULT_ERROR_INVALID_SIZE,
                  std::string(api) + ": " + std::to_string(bytes) + " bytes at " + hex(p) +
                      " run past the end of the allocation " + hex(b->address) + " (" +
                      std::to_string(b->size) + " bytes)");
  }
  out->block = b;
  out->offset = p - b->address;
  return ZE_RESULT_SUCCESS;
}

}  // namespace anydev_lz_emu
