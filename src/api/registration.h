// SPDX-License-Identifier: Apache-2.0
// Host memory registered with a backend, for the C entry points that make a
// buffer over memory anydev does not allocate (api_register.cpp;
// anydev_comm_expose_new registers the memory UCX allocated). The lifetime
// is memory/registered_memory.h's. Thread-safe.
#ifndef ANYDEV_SRC_API_REGISTRATION_H_
#define ANYDEV_SRC_API_REGISTRATION_H_

#include <cstddef>
#include <functional>
#include <memory>

#include "api/api_common.h"

namespace anydev::core {

// Registers `bytes` at `pointer` on ctx's backend and device and makes *out
// a host buffer of ctx of `bytes / size(dtype)` elements of `dtype` over
// them, under anydev_context_register_host_memory's rules and errors (named
// `op`); nothing is registered on error. `on_unregistered` (may be empty)
// runs once the last handle is gone, the work that used the memory has
// completed and the registration is undone, on any thread; what it holds is
// kept until then (on error, dropped before this returns).
anydev_status_t register_host_range(const char* op, const std::shared_ptr<const ContextState>& ctx,
                                    void* pointer, std::size_t bytes, anydev_dtype_t dtype,
                                    std::function<void()> on_unregistered, anydev_buffer_t* out);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_REGISTRATION_H_
