// SPDX-License-Identifier: Apache-2.0
// The environment variables anydev reads, in one place, so that anydev-info
// and docs/environment.md can list them, and the checks of the core's own
// variables. One rule for every ANYDEV_* variable (docs/environment.md): a
// set value that its grammar does not accept, the empty value included, is
// refused, never ignored or replaced by the default; what the variable
// configures becomes unavailable with a message naming the variable, the
// value (escaped) and what is accepted. A core variable's error makes every
// backend unavailable (core_environment_errors, through
// layers::layer_settings).
//
// Secure mode. Every variable is read with secure_getenv: in a process that
// runs with more privileges than its caller (set-user-ID or set-group-ID,
// file capabilities: the kernel's AT_SECURE) all of them read as unset, so
// that the caller's environment cannot choose the code anydev loads or the
// files it writes. Reads are thread-safe as long as nobody calls
// setenv concurrently (the usual POSIX caveat); the checks are pure.
#ifndef ANYDEV_SRC_SUPPORT_ENVIRONMENT_H_
#define ANYDEV_SRC_SUPPORT_ENVIRONMENT_H_

#include <optional>
#include <string>
#include <string_view>

namespace anydev::core {

inline constexpr const char* kEnvBackend = "ANYDEV_BACKEND";
inline constexpr const char* kEnvPluginPath = "ANYDEV_PLUGIN_PATH";
inline constexpr const char* kEnvLogLevel = "ANYDEV_LOG_LEVEL";
inline constexpr const char* kEnvPool = "ANYDEV_POOL";             // pool/pool_registry.h
inline constexpr const char* kEnvPoolCarve = "ANYDEV_POOL_CARVE";  // pool/pool_registry.h
inline constexpr const char* kEnvPluginAllowWritable = "ANYDEV_PLUGIN_ALLOW_WRITABLE";

// The variable's value, or nullopt when unset or in secure mode (above).
std::optional<std::string> env(const char* name);
// The same as a C string (nullptr when unset or in secure mode), valid until
// the environment changes: what the backends' getenv service returns.
const char* env_c_str(const char* name) noexcept;

// ANYDEV_PLUGIN_ALLOW_WRITABLE: "0" or "1", nullopt for anything else.
std::optional<bool> parse_plugin_allow_writable(std::string_view text);
// Whether ANYDEV_PLUGIN_ALLOW_WRITABLE=1 is set (a malformed value is refused
// by core_environment_errors and counts as not set).
bool plugin_allow_writable();

// ANYDEV_LOG_LEVEL: anydev's names (trace debug info warn error critical
// off) and spdlog's (warning, err) -> spdlog's level number (0 trace .. 6
// off); nullopt for anything else.
std::optional<int> parse_log_level(std::string_view text);

// The message refusing a malformed value of a core variable, or an empty
// string when the value is good.
std::string check_log_level(std::string_view text);
std::string check_pool(std::string_view text);
std::string check_pool_release_threshold(std::string_view text);  // ANYDEV_POOL_RELEASE_THRESHOLD
std::string check_plugin_path(std::string_view text);
std::string check_plugin_allow_writable(std::string_view text);

// "; "-separated messages for the malformed core variables among
// ANYDEV_LOG_LEVEL, ANYDEV_POOL, ANYDEV_POOL_RELEASE_THRESHOLD,
// ANYDEV_PLUGIN_PATH and ANYDEV_PLUGIN_ALLOW_WRITABLE as set now; empty when
// none is.
std::string core_environment_errors();

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_ENVIRONMENT_H_
