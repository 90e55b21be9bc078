// SPDX-License-Identifier: Apache-2.0
// The kernels an emulator can "run": it cannot execute device code, so it
// recognises anydev's own kernels by their entry's name, checks their
// parameter layout against the entry the module declares, and performs them
// on the host, in stream order. Today: anydev_fill_pattern16 (the contract in
// backends/gpu/gpu_fill_kernel.h). Thread-safe; the parsed entries are plain
// values.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_KERNELS_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core_status.h"
#include "core_stream.h"

namespace anydev_emu::core {

// One kernel entry a module declares: its name and each parameter's size in
// bytes, in order.
struct KernelEntry {
  std::string name;
  std::vector<std::size_t> param_sizes;
};

// The .entry declarations of a PTX text (".visible .entry name(.param .u64
// p0, ...)"). invalid_value (reported) when the text declares no entry or a
// parameter of a type it cannot size.
Status parse_ptx_entries(const char* api, const std::string& ptx, std::vector<KernelEntry>* out);

// Whether the emulator knows how to perform `entry`: a known name with the
// layout it expects. Otherwise *why says what differs.
bool known_kernel(const KernelEntry& entry, std::string* why);

// The work of one launch of `entry` with its parameters (as enqueue_kernel
// below), for a face that queues it itself (a Level Zero command list's
// batch): *out performs the kernel on the host when called.
Status kernel_task(const char* api, const KernelEntry& entry, void* const* params,
                   std::uint64_t threads, std::function<Status()>* out);

// Enqueues `entry` on `stream` with its parameters (params[i] points to
// param_sizes[i] bytes, as a driver's kernelParams), for a launch of
// `threads` threads in all. invalid_value (reported) for a kernel the
// emulator does not know, memory it cannot write, or too few threads to
// reach every byte (the fill kernel's head and tail need 16).
Status enqueue_kernel(const char* api, const StreamRef& stream, const KernelEntry& entry,
                      void* const* params, std::uint64_t threads);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_KERNELS_H_
