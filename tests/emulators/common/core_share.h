// SPDX-License-Identifier: Apache-2.0
// What the emulator shares between processes: the VMM calls (physical
// allocations, address ranges, mappings, access), host-memory registration
// and interprocess events, vendor-neutral for the cuda and hip faces.
//
// A VMM allocation is a memfd (its size a multiple of kGranularity): export
// dups the fd, import dups the fd it is given, and a mapping maps the memfd
// MAP_SHARED as an external device block (core_memory.h). The kernel counts
// the fds and mappings, so memory outlives whichever process made it, as
// the drivers promise for POSIX-fd handles. An interprocess event keeps its
// records in a page of a named POSIX shared-memory file, so its 64-byte
// handle needs no fd: a record counter, a completion counter (with a futex
// word) and the recorder's pid. A wait whose recorder died ends (a real
// device's behaviour there is undocumented; the emulator must not hang).
// The name is unlinked when the creating event is destroyed; a killed
// creator's file is unlinked by the next process that creates one.
//
// Ownership: allocation handles and reservations live in registries here
// until released; mappings are blocks shared with queued operations.
// Thread-safe: each registry has its own mutex, event pages use atomics.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_SHARE_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_SHARE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core_status.h"
#include "core_stream.h"

namespace anydev_emu::core {

inline constexpr std::size_t kGranularity = std::size_t{2} << 20;

// <prefix>VMM (default 1): 0 makes the device report no VMM and no POSIX-fd
// handles, and the VMM calls answer not_supported.
bool vmm_supported();

// A physical allocation of `bytes` (a multiple of kGranularity) on `device`;
// `exportable`: a POSIX fd was requested.
Status vmm_create(int device, std::size_t bytes, bool exportable, std::uint64_t* handle,
                  const char* api);
// Drops the handle; mappings keep the memory.
Status vmm_release(std::uint64_t handle, const char* api);
Status vmm_export_fd(std::uint64_t handle, int* fd, const char* api);
Status vmm_import_fd(int fd, std::uint64_t* handle, const char* api);
Status vmm_reserve(int device, std::size_t bytes, std::size_t alignment, std::uintptr_t* out,
                   const char* api);
Status vmm_free_range(std::uintptr_t address, std::size_t bytes, const char* api);
Status vmm_map(std::uintptr_t address, std::size_t bytes, std::size_t offset, std::uint64_t handle,
               const char* api);
Status vmm_unmap(std::uintptr_t address, std::size_t bytes, const char* api);
// Read-write access for `device` to the mapping at [address, +bytes).
Status vmm_set_access(std::uintptr_t address, std::size_t bytes, int device, const char* api);

// Registers [p, p + bytes) of host memory as pinned (unified addressing).
Status host_register(void* p, std::size_t bytes, const char* api);
Status host_unregister(void* p, const char* api);

// Interprocess events (Event::ipc).
struct IpcPage;
inline constexpr std::size_t kIpcHandleBytes = 64;
Status ipc_event_create(Context* context, EventRef* out);
Status ipc_event_handle(const EventRef& event, unsigned char (&out)[kIpcHandleBytes],
                        const char* api);
Status ipc_event_open(Context* context, const unsigned char (&in)[kIpcHandleBytes], EventRef* out,
                      const char* api);
// Used by core_stream.cpp for events with `ipc`.
void ipc_record(const std::shared_ptr<IpcPage>& page, const StreamRef& stream, const char* api);
bool ipc_complete(const IpcPage& page);
void ipc_synchronize(const IpcPage& page);
void ipc_wait(const std::shared_ptr<IpcPage>& page, const StreamRef& stream);
// On the creator's destruction: unlinks the name.
void ipc_forget(IpcPage& page);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_SHARE_H_
