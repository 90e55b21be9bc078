// SPDX-License-Identifier: Apache-2.0
// Per-entry-point call counts, and the three emulator-only C functions a
// test finds with dlsym to read them. The face decides which calls count
// (CUDA: calls through cuGetProcAddress's pointers; HIP: calls of the
// exported hip* functions) and owns a table of CallCounter, one per entry
// point, in a fixed order.
//
// The counters are relaxed atomics: thread-safe; a count read while other
// threads call is a moment's value.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_CALLS_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_CALLS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace anydev_emu::core {

struct CallCounter {
  const char* name;                   // the unversioned entry point: "cuMemcpyAsync"
  std::atomic<std::uint64_t>* calls;  // never null
};

void reset_calls(std::span<const CallCounter> table);
// The count of `name`; 0 for a name not in the table (or null).
std::uint64_t call_count(std::span<const CallCounter> table, const char* name);
// Writes "a=1 b=2" (every non-zero count, in table order, space-separated)
// into `text` (at most `capacity` bytes with the NUL, truncated beyond) and
// returns the total number of calls.
std::uint64_t describe_calls(std::span<const CallCounter> table, char* text, std::size_t capacity);

}  // namespace anydev_emu::core

// Declares, in a face's public header, the emulator-only functions
//   void <prefix>_reset_call_counts();
//   unsigned long long <prefix>_call_count(const char* name);
//   unsigned long long <prefix>_call_counts(char* text, std::size_t capacity);
// with the meanings of reset_calls, call_count and describe_calls.
#define ANYDEV_EMU_DECLARE_CALL_COUNT_EXPORTS(prefix)                        \
  extern "C" {                                                               \
  void prefix##_reset_call_counts();                                         \
  unsigned long long prefix##_call_count(const char* name);                  \
  unsigned long long prefix##_call_counts(char* text, std::size_t capacity); \
  }

// Defines them (once, in the face) over `table_fn`, a function returning the
// face's std::span<const anydev_emu::core::CallCounter>.
#define ANYDEV_EMU_DEFINE_CALL_COUNT_EXPORTS(prefix, table_fn)                     \
  extern "C" {                                                                     \
  void prefix##_reset_call_counts() { anydev_emu::core::reset_calls(table_fn()); } \
  unsigned long long prefix##_call_count(const char* name) {                       \
    return anydev_emu::core::call_count(table_fn(), name);                         \
  }                                                                                \
  unsigned long long prefix##_call_counts(char* text, std::size_t capacity) {      \
    return anydev_emu::core::describe_calls(table_fn(), text, capacity);           \
  }                                                                                \
  }

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_CALLS_H_
