// SPDX-License-Identifier: Apache-2.0
// Memory UCX allocates and exposes (anydev_comm_expose_new; AllocatedMemory
// in communicator.h). The host buffer over it is made by the C entry point
// (registered memory, api_comm.cpp), whose release callback owns the mapping.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "support/status.h"
#include "transport/communicator.h"

namespace anydev::core::transport {

namespace {

// The bytes the kernel can give without swapping (MemAvailable), else the
// free physical pages; 0 when neither is known.
std::size_t available_memory() {
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
        found = true;
        break;
      }
    }
    std::fclose(f);
    if (found) return static_cast<std::size_t>(kib) * 1024;
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

}  // namespace

anydev_status_t Communicator::allocate_exposed(const char* op, std::size_t bytes,
                                               std::shared_ptr<AllocatedMemory>* memory,
                                               std::shared_ptr<ExposedRegion>* region) {
  // UCX backs the allocation with shared memory (sysv, or a file in
  // /dev/shm, which is RAM) and touches it: a size beyond what the machine
  // has free would fill RAM before failing, so it never reaches UCX.
  const std::size_t available = available_memory();
  if (available != 0 && bytes > available) {
    return fail(ANYDEV_ERROR_OUT_OF_MEMORY, op, bytes,
                " bytes exceed the memory available on this machine (", available,
                " bytes, MemAvailable): nothing was allocated");
  }
  auto mapped = std::make_shared<AllocatedMemory>();
  auto exposed = std::make_shared<ExposedRegion>();
  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                  UCP_MEM_MAP_PARAM_FIELD_FLAGS | UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
  mp.address = nullptr;  // UCX chooses: shared memory its transports map into peers
  mp.length = bytes;
  mp.flags = UCP_MEM_MAP_ALLOCATE;
  mp.memory_type = UCS_MEMORY_TYPE_HOST;
  std::lock_guard lock(ucx_mutex);
  ucp_mem_h memh = nullptr;
  ucs_status_t s = ucx_->ucp_mem_map(ucp_, &mp, &memh);
  if (s != UCS_OK) {
    const bool no_memory = s == UCS_ERR_NO_MEMORY || s == UCS_ERR_NO_RESOURCE;
    return fail(no_memory ? ANYDEV_ERROR_OUT_OF_MEMORY : ANYDEV_ERROR_DEVICE, op,
                "UCX could not allocate ", bytes,
                " bytes (ucp_mem_map with UCP_MEM_MAP_ALLOCATE): ", ucx_->ucs_status_string(s));
  }
  // From here `mapped` owns the mapping: a failure below unmaps it. Its
  // communicator reference is set last, since its destructor takes ucx_mutex
  // (held here) only when the mapping outlives this call.
  mapped->memh = memh;
  mapped->bytes = bytes;
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  s = ucx_->ucp_mem_query(memh, &attr);
  anydev_status_t status = ANYDEV_SUCCESS;
  if (s != UCS_OK || attr.address == nullptr || attr.length < bytes) {
    status = fail(ANYDEV_ERROR_DEVICE, op, "ucp_mem_query of the ", bytes, " bytes UCX allocated ",
                  s != UCS_OK ? std::string("failed: ") + ucx_->ucs_status_string(s)
                              : std::string("gave no address or a shorter length"));
  } else {
    mapped->address = attr.address;
    status = pack_key(op, memh, attr.address, bytes, &exposed->key);
  }
  if (status != ANYDEV_SUCCESS) {
    ucx_->ucp_mem_unmap(ucp_, memh);
    mapped->memh = nullptr;
    return status;
  }
  mapped->comm = shared_from_this();
  exposed->comm = mapped->comm;
  *memory = std::move(mapped);
  *region = std::move(exposed);
  return ANYDEV_SUCCESS;
}

AllocatedMemory::~AllocatedMemory() {
  if (memh != nullptr && comm) {
    std::lock_guard lock(comm->ucx_mutex);
    comm->ucx().ucp_mem_unmap(comm->ucp(), memh);
  }
  // A transfer's end on the progress thread may drop the buffer's last use,
  // and with it the communicator's last reference: its destructor joins that
  // thread, so the reference is released off it.
  if (comm && comm->on_progress_thread()) {
    std::thread([c = std::move(comm)]() mutable { c.reset(); }).detach();
  }
}

}  // namespace anydev::core::transport
