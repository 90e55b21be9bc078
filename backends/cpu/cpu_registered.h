// SPDX-License-Identifier: Apache-2.0
// Host memory the caller owns, registered with the cpu backend
// (host_register / host_unregister, backend_entries.h). Registering locks
// the pages with mlock, as host_alloc locks pinned memory: unless
// ANYDEV_CPU_MLOCK=0, and only within RLIMIT_MEMLOCK (past it the memory
// stays pageable and memory_is_locked says so). Unregistering unlocks what
// registering locked; the memory itself is never touched or freed.
//
// A registry maps each registered pointer to its pages and lock state, so an
// unknown handle is an error. Thread-safe (one mutex, held across fork()).
#ifndef ANYDEV_BACKENDS_CPU_CPU_REGISTERED_H_
#define ANYDEV_BACKENDS_CPU_CPU_REGISTERED_H_

#include <cstddef>

#include "anydev/backend.h"

namespace anydev::cpu {

// The entries; `device` is already checked.
anydev_status_t register_host(void* pointer, std::size_t bytes, void** handle);
anydev_status_t unregister_host(void* handle);
// Whether `handle` is registered memory, and then whether it is locked.
bool registered_memory_locked(void* handle, bool* locked);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_REGISTERED_H_
