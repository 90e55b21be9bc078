// SPDX-License-Identifier: Apache-2.0
// Chooses the backend and device for a new context (DESIGN.md §5): explicit
// arguments first, then ANYDEV_BACKEND, then the default order. Only the
// backends it names are probed. Thread-safe.
#ifndef ANYDEV_SRC_RUNTIME_DEVICE_SELECTION_H_
#define ANYDEV_SRC_RUNTIME_DEVICE_SELECTION_H_

#include "anydev/anydev.h"
#include "runtime/registry.h"

namespace anydev::core {

// api: NULL or a backend name; device: < 0 for "not given". On success sets
// *backend (available) and *device (valid index); else sets the last error:
// INVALID_ARGUMENT (unknown name, malformed ANYDEV_BACKEND), OUT_OF_RANGE
// (every candidate lacks the index), BACKEND_UNAVAILABLE (no candidate has a
// device), each message listing the candidates and why each failed.
anydev_status_t select_device(const char* op, const char* api, int device, const Backend** backend,
                              int* device_index);

// The backend DeviceContext() would use, for anydev_device_count(NULL);
// nullptr when none (no error is set).
const Backend* default_backend();

}  // namespace anydev::core

#endif  // ANYDEV_SRC_RUNTIME_DEVICE_SELECTION_H_
