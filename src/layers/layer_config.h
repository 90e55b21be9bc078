// SPDX-License-Identifier: Apache-2.0
// Parsers and the process-wide settings of the optional layers that wrap a
// backend's function table (see layer_stack.h):
//
//   ANYDEV_FAULT=op:n[,op:n...]   fault injection (op: alloc copy fill event plugin)
//   ANYDEV_SYNC=0|1               synchronous mode
//   ANYDEV_TRACE=file.json        Chrome trace / Perfetto JSON of every operation
//   ANYDEV_VALIDATE=0|1|backtrace validation layer (backtrace: creation backtraces)
//
// Parsing is strict, in the style of ANYDEV_BACKEND (selection.h): an empty
// value or entry, whitespace, an unknown word, a signed, zero, non-decimal or
// too large count, or a repeated entry is an error whose message names the
// variable, the value, the entry and its position. The parse functions are
// pure and thread-safe; layer_settings() reads the environment once (first
// call) and is thread-safe afterwards.
#ifndef ANYDEV_SRC_LAYERS_LAYER_CONFIG_H_
#define ANYDEV_SRC_LAYERS_LAYER_CONFIG_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace anydev::core::layers {

inline constexpr const char* kEnvFault = "ANYDEV_FAULT";
inline constexpr const char* kEnvSync = "ANYDEV_SYNC";
inline constexpr const char* kEnvTrace = "ANYDEV_TRACE";
inline constexpr const char* kEnvValidate = "ANYDEV_VALIDATE";

// The kinds of call fault injection counts. The order is the index used by
// FaultPlan::calls.
enum class FaultKind : int { alloc = 0, copy = 1, fill = 2, event = 3, plugin = 4 };
inline constexpr int kFaultKinds = 5;
const char* fault_kind_name(FaultKind kind) noexcept;

// Which calls fail: calls[kind] lists the 1-based call numbers, ascending.
struct FaultPlan {
  std::array<std::vector<std::uint64_t>, kFaultKinds> calls;
  std::string text;  // the variable's value, for messages
  bool empty() const noexcept;
};

struct FaultParse {
  FaultPlan plan;
  std::string error;  // non-empty on failure
  bool ok() const noexcept { return error.empty(); }
};
FaultParse parse_fault_list(std::string_view text);

enum class ValidateMode { off, on, backtrace };

// A switch or mode: `error` non-empty on failure.
struct SyncParse {
  bool on = false;
  std::string error;
};
SyncParse parse_sync(std::string_view text);
struct ValidateParse {
  ValidateMode mode = ValidateMode::off;
  std::string error;
};
ValidateParse parse_validate(std::string_view text);
struct TraceParse {
  std::string path;
  std::string error;
};
TraceParse parse_trace(std::string_view text);

// The settings in effect, from the environment (read once). A malformed
// variable leaves its layer off and puts its message in `errors`: every
// backend is then unavailable with that reason (see layer_stack.h), so a
// typo never silently runs without the requested checks. The core's other
// variables (ANYDEV_LOG_LEVEL, ANYDEV_POOL, ANYDEV_PLUGIN_PATH; see
// environment.h) add their errors here too: one rule for every variable.
struct LayerSettings {
  FaultPlan fault;
  bool sync = false;
  std::string trace_path;  // empty: no tracing
  ValidateMode validate = ValidateMode::off;
  std::string errors;  // "; "-separated messages of malformed variables
  bool any_table_layer() const noexcept {
    return !fault.empty() || sync || !trace_path.empty() || validate != ValidateMode::off;
  }
};
const LayerSettings& layer_settings();

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_LAYER_CONFIG_H_
