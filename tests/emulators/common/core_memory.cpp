// SPDX-License-Identifier: Apache-2.0
#include "core_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <sstream>
#include <vector>

#include "core_config.h"

namespace anydev_emu::core {
namespace {

constexpr std::size_t kAlignment = 256;
constexpr std::size_t kPageSize = 4096;

struct Region {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  std::uintptr_t next = 0;
  std::size_t in_use = 0;
};

struct Memory {
  std::mutex mutex;
  std::vector<Region> regions;
  std::map<std::uintptr_t, BlockRef> blocks;  // device and pinned, by address
  std::size_t pinned_in_use = 0;
};

Memory& M() {
  static Memory* memory = new Memory;  // never destroyed: workers may run at exit
  return *memory;
}

std::string hex_text(std::uintptr_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

int region_of(const Memory& m, std::uintptr_t address) {
  for (std::size_t i = 0; i < m.regions.size(); ++i) {
    if (address >= m.regions[i].begin && address < m.regions[i].end) return static_cast<int>(i);
  }
  return -1;
}

// The block containing `address`, or null. Caller holds the mutex.
BlockRef containing(const Memory& m, std::uintptr_t address) {
  auto it = m.blocks.upper_bound(address);
  if (it == m.blocks.begin()) return nullptr;
  --it;
  const BlockRef& b = it->second;
  return address < b->address + b->size ? b : nullptr;
}

Status invalid(const char* api, const std::string& why) {
  report_misuse(std::string(api) + ": " + why);
  return Status::invalid_value;
}

// The checks every allocation makes before it takes the lock.
Status check_request(bool has_out, std::size_t bytes, const char* api) {
  if (!has_out) return invalid(api, "null output pointer");
  if (bytes == 0) return invalid(api, "zero bytes");
  if (get_config().huge_is_invalid && bytes > get_config().memory_bytes) {
    return Status::invalid_value;  // not misuse: what a real driver may answer
  }
  return Status::success;
}

}  // namespace

Block::~Block() {
  if (external) return;
  if (mapped != 0) {
    munmap(host, mapped);
    close(fd);
  } else if (device < 0) {
    std::free(host);
  } else {
    delete[] host;
  }
}

std::byte* Span::bytes() const {
  if (block == nullptr) return pageable;
  if (block->freed.load()) return nullptr;
  return block->host + offset;
}

std::string Span::describe() const {
  if (block == nullptr)
    return "pageable host memory " + hex_text(reinterpret_cast<std::uintptr_t>(pageable));
  return (block->device < 0 ? std::string("pinned memory ")
                            : "device " + std::to_string(block->device) + " memory ") +
         hex_text(block->address + offset);
}

Status reserve_device_regions(int devices) {
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  if (!m.regions.empty()) return Status::success;
  for (int i = 0; i < devices; ++i) {
    // Address space only (PROT_NONE, no reserve): any host access faults.
    std::size_t size = std::size_t{1} << 40;  // 1 TiB, or less where that is refused
    void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    while (p == MAP_FAILED && size > (std::size_t{16} << 30)) {
      size /= 2;
      p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    }
    if (p == MAP_FAILED) {
      report_misuse("initialize: cannot reserve address space for device memory");
      return Status::out_of_memory;
    }
    const auto begin = reinterpret_cast<std::uintptr_t>(p);
    m.regions.push_back(Region{begin, begin + size, begin + kAlignment, 0});
  }
  return Status::success;
}

Status resolve(std::uintptr_t address, std::size_t bytes, Access access, const char* api,
               Span* out) {
  if (address == 0) return invalid(api, "null pointer");
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  if (BlockRef b = containing(m, address)) {
    if (bytes > b->address + b->size - address) {
      return invalid(api, std::to_string(bytes) + " bytes at " + hex_text(address) +
                              " run past the end of the allocation " + hex_text(b->address) +
                              " of " + std::to_string(b->size) + " bytes");
    }
    if (b->no_access.load()) {
      return invalid(api, "device memory " + hex_text(address) +
                              " is mapped but its access was never set (cuMemSetAccess)");
    }
    if (b->device >= 0 && access == Access::kHost) {
      return invalid(api, "device memory " + hex_text(address) + " where host memory is required");
    }
    out->block = std::move(b);
    out->offset = address - out->block->address;
    return Status::success;
  }
  if (region_of(m, address) >= 0) {
    return invalid(api, "device address " + hex_text(address) +
                            " is not in a live allocation (freed, or never allocated)");
  }
  if (access == Access::kDeviceOrPinned) {
    return invalid(api, "pageable host memory " + hex_text(address) +
                            " where device or pinned memory is required");
  }
  out->pageable = reinterpret_cast<std::byte*>(address);
  return Status::success;
}

Status allocate_device(int device, std::size_t bytes, std::uintptr_t* out, const char* api,
                       Pool* pool) {
  if (const Status s = check_request(out != nullptr, bytes, api); s != Status::success) return s;
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  Region& r = m.regions.at(static_cast<std::size_t>(device));
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (bytes > get_config().memory_bytes - r.in_use || rounded < bytes) {
    return Status::out_of_memory;
  }
  if (rounded > r.end - r.next) {
    report_misuse(std::string(api) + ": the device's address space is used up");
    return Status::out_of_memory;
  }
  auto block = std::make_shared<Block>();
  block->host = new (std::nothrow) std::byte[bytes];
  if (block->host == nullptr) return Status::out_of_memory;
  block->address = r.next;
  block->size = bytes;
  block->device = device;
  block->pool = pool;
  r.next += rounded;
  r.in_use += bytes;
  m.blocks.emplace(block->address, block);
  *out = block->address;
  return Status::success;
}

Status allocate_device_mapped(int device, std::size_t bytes, int fd, std::uintptr_t* out,
                              const char* api) {
  if (const Status s = check_request(out != nullptr, bytes, api); s != Status::success) {
    close(fd);
    return s;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return invalid(api, "cannot map the shared memory file: " + std::string(strerror(errno)));
  }
  auto block = std::make_shared<Block>();
  block->host = static_cast<std::byte*>(p);
  block->fd = fd;
  block->mapped = bytes;
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  Region& r = m.regions.at(static_cast<std::size_t>(device));
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (bytes > get_config().memory_bytes - r.in_use || rounded > r.end - r.next) {
    return Status::out_of_memory;  // the block's destructor unmaps and closes
  }
  block->address = r.next;
  block->size = bytes;
  block->device = device;
  r.next += rounded;
  r.in_use += bytes;
  m.blocks.emplace(block->address, block);
  *out = block->address;
  return Status::success;
}

Status find_device_block(std::uintptr_t address, const char* api, BlockRef* out) {
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.blocks.find(address);
  if (it == m.blocks.end() || it->second->device < 0 || it->second->free_queued.load()) {
    return invalid(
        api, hex_text(address) + " is not the start of a live device allocation (double free?)");
  }
  *out = it->second;
  return Status::success;
}

Status take_device_block(std::uintptr_t address, const char* api, BlockRef* out) {
  if (const Status r = find_device_block(address, api, out); r != Status::success) return r;
  (*out)->free_queued = true;
  return Status::success;
}

void release_device_block(const BlockRef& block) {
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  block->freed = true;
  m.blocks.erase(block->address);
  m.regions.at(static_cast<std::size_t>(block->device)).in_use -= block->size;
}

Status free_device(std::uintptr_t address, const char* api) {
  BlockRef block;
  if (const Status s = take_device_block(address, api, &block); s != Status::success) return s;
  release_device_block(block);
  return Status::success;
}

Status allocate_pinned(std::size_t bytes, void** out, const char* api) {
  if (const Status s = check_request(out != nullptr, bytes, api); s != Status::success) return s;
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  if (bytes > get_config().memory_bytes - m.pinned_in_use) return Status::out_of_memory;
  const std::size_t rounded = (bytes + kPageSize - 1) / kPageSize * kPageSize;
  auto block = std::make_shared<Block>();
  block->host = static_cast<std::byte*>(std::aligned_alloc(kPageSize, rounded));
  if (block->host == nullptr) return Status::out_of_memory;
  block->address = reinterpret_cast<std::uintptr_t>(block->host);
  block->size = bytes;
  block->device = -1;
  m.pinned_in_use += bytes;
  m.blocks.emplace(block->address, block);
  *out = block->host;
  return Status::success;
}

Status free_pinned(void* address, const char* api) {
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.blocks.find(reinterpret_cast<std::uintptr_t>(address));
  if (address == nullptr || it == m.blocks.end() || it->second->device >= 0) {
    return invalid(api, hex_text(reinterpret_cast<std::uintptr_t>(address)) +
                            " is not the start of a live pinned allocation (double free?)");
  }
  it->second->freed = true;  // queued operations still holding it will fail
  m.pinned_in_use -= it->second->size;
  m.blocks.erase(it);
  return Status::success;
}

Status reserve_device_range(int device, std::size_t bytes, std::size_t alignment,
                            std::uintptr_t* out) {
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  Region& r = m.regions.at(static_cast<std::size_t>(device));
  const std::size_t align = alignment < kAlignment ? kAlignment : alignment;
  const std::uintptr_t start = (r.next + align - 1) / align * align;
  if (start > r.end || bytes > r.end - start) return Status::out_of_memory;
  r.next = start + bytes;
  *out = start;
  return Status::success;
}

Status add_external_block(const BlockRef& block, const char* api) {
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto after = m.blocks.lower_bound(block->address);
  if ((after != m.blocks.end() && after->first < block->address + block->size) ||
      containing(m, block->address) != nullptr) {
    return invalid(api, "[" + hex_text(block->address) + ", +" + std::to_string(block->size) +
                            ") overlaps memory already mapped or registered");
  }
  m.blocks.emplace(block->address, block);
  if (block->device >= 0)
    m.regions.at(static_cast<std::size_t>(block->device)).in_use += block->size;
  return Status::success;
}

Status remove_external_block(std::uintptr_t address, std::size_t size, bool device, const char* api,
                             BlockRef* out) {
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.blocks.find(address);
  if (it == m.blocks.end() || !it->second->external || (it->second->device >= 0) != device ||
      (size != 0 && it->second->size != size)) {
    return invalid(api, hex_text(address) +
                            (device ? " is not the start of a mapping of "
                                    : " is not the start of registered memory of ") +
                            std::to_string(size) + " bytes");
  }
  BlockRef block = it->second;
  block->freed = true;  // queued operations still holding it fail
  m.blocks.erase(it);
  if (block->device >= 0)
    m.regions.at(static_cast<std::size_t>(block->device)).in_use -= block->size;
  if (out != nullptr) *out = std::move(block);
  return Status::success;
}

BlockRef find_containing(std::uintptr_t address) {
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  return containing(m, address);
}

std::size_t device_bytes_in_use(int device) {
  Memory& m = M();
  std::lock_guard<std::mutex> lock(m.mutex);
  return m.regions.at(static_cast<std::size_t>(device)).in_use;
}

void memory_info(int device, std::size_t* free_bytes, std::size_t* total_bytes) {
  *total_bytes = get_config().memory_bytes;
  *free_bytes = *total_bytes - device_bytes_in_use(device);
}

}  // namespace anydev_emu::core
